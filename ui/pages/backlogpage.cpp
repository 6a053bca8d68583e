#include "backlogpage.h"

#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "dialogs/upstreamdraindialog.h"
#include "models/backlogmodel.h"
#include "palette.h"
#include "widgets/datatable.h"
#include "widgets/receivedcallbackview.h"
#include "widgets/switchcontrol.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QSysInfo>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace payops {

namespace {

bool isRecordOnly(const console::BacklogSummary &summary)
{
    return summary.mode == callbackModeName(CallbackMode::RecordOnly);
}

// The lists' tabs: recorded payments, unmatched callbacks, a gateway's rows.
constexpr int kGatewayTab = 2;

// What the progress bar counts: an unmatched drain also walks past the callbacks still
// waiting for their order.
int walked(const DrainResult &result)
{
    return result.handled() + result.waiting;
}

// Who drains, as the audit log and callback_trace name it.
QString drainWorkerName()
{
    return QStringLiteral("drain:console:%1:%2")
        .arg(QSysInfo::machineHostName(), QString::number(QCoreApplication::applicationPid()));
}

} // namespace

BacklogPage::BacklogPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
    , m_drainWorker(std::make_unique<console::Worker>(target.dsn))
{
    setObjectName(QStringLiteral("backlogPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);

    auto *header = new QHBoxLayout;
    m_headline = new QLabel(tr("Reading the backlog …"), this);
    m_headline->setObjectName(QStringLiteral("backlogHeadline"));
    m_headline->setWordWrap(true);
    m_switch = new SwitchControl(target.dsn, this);
    connect(m_switch, &SwitchControl::flipped, this, [this] { rereadAfterAction(); });
    header->addWidget(m_headline, 1);
    header->addWidget(m_switch, 0, Qt::AlignTop);
    layout->addLayout(header);
    m_finding = new QLabel(this);
    m_finding->setObjectName(QStringLiteral("unmatchedFinding"));
    m_finding->setWordWrap(true);
    m_finding->setFrameShape(QFrame::StyledPanel);
    m_finding->setMargin(6);
    m_finding->hide();
    layout->addWidget(m_finding);

    auto *acts = new QHBoxLayout;
    m_process = new QPushButton(tr("Process backlog…"), this);
    m_process->setObjectName(QStringLiteral("processBacklogButton"));
    m_apply = new QPushButton(tr("Apply matched callbacks…"), this);
    m_apply->setObjectName(QStringLiteral("applyUnmatchedButton"));
    m_forward = new QPushButton(tr("Forward to upstream…"), this);
    m_forward->setObjectName(QStringLiteral("forwardUpstreamButton"));
    m_forward->hide(); // until the database has a gateway
    m_stop = new QPushButton(tr("Stop after this callback"), this);
    m_stop->setObjectName(QStringLiteral("stopDrainButton"));
    m_stop->hide();
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("drainProgress"));
    m_progress->hide();
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("drainStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    acts->addWidget(m_process, 0, Qt::AlignTop);
    acts->addWidget(m_apply, 0, Qt::AlignTop);
    acts->addWidget(m_forward, 0, Qt::AlignTop);
    acts->addWidget(m_progress, 1, Qt::AlignTop);
    acts->addWidget(m_stop, 0, Qt::AlignTop);
    acts->addWidget(m_status, 2);
    auto *reload = new QPushButton(tr("Refresh"), this);
    reload->setObjectName(QStringLiteral("refreshBacklog"));
    acts->addWidget(reload, 0, Qt::AlignTop);
    connect(reload, &QPushButton::clicked, this, &BacklogPage::refresh);
    layout->addLayout(acts);
    m_refusal = new QLabel(this);
    m_refusal->setObjectName(QStringLiteral("drainRefusal"));
    m_refusal->setWordWrap(true);
    palette::setTextRole(m_refusal, palette::Role::Warning);
    layout->addWidget(m_refusal);

    m_lists = new QTabWidget(this);
    m_lists->setObjectName(QStringLiteral("backlogLists"));
    m_model = new BacklogModel(worker(), BacklogList::Recorded, this);
    m_unmatchedModel = new BacklogModel(worker(), BacklogList::Unmatched, this);
    m_gatewayModel = new BacklogModel(worker(), BacklogList::Gateway, this);
    m_table = addList(m_model, QStringLiteral("backlogTable"));
    m_unmatchedTable = addList(m_unmatchedModel, QStringLiteral("unmatchedTable"));
    m_gatewayTable = addList(m_gatewayModel, QStringLiteral("gatewayTable"));
    m_lists->addTab(m_table, tr("Recorded"));
    m_lists->addTab(m_unmatchedTable, tr("Unmatched"));
    m_lists->addTab(m_gatewayTable, tr("Gateway"));
    m_lists->setTabVisible(kGatewayTab, false); // until the database has a gateway
    connect(m_lists, &QTabWidget::currentChanged, this, &BacklogPage::showBody);
    m_received = new ReceivedCallbackView(this);
    m_received->showNothing(tr("Select a callback for its raw body."));
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_lists);
    splitter->addWidget(m_received);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter, 1);
    auto *note = new QLabel(
        tr("A drain processes each callback exactly once, oldest first, through the same payment "
           "logic as the endpoint: the recorded ones in batches over several connections, the "
           "unmatched ones one transaction each; several consoles or <tt>payops drain</tt> may "
           "run at once. Double-click a row for the order's evidence."),
        this);
    note->setWordWrap(true);
    palette::setTextRole(note, palette::Role::Muted);
    layout->addWidget(note);

    connect(m_process, &QPushButton::clicked, this, &BacklogPage::processBacklog);
    connect(m_apply, &QPushButton::clicked, this, &BacklogPage::applyMatched);
    connect(m_forward, &QPushButton::clicked, this, &BacklogPage::forwardToUpstream);
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
        m_stop->setEnabled(false);
        m_status->setText(tr("Stopping after the current callback …"));
    });
    // The summary reads again on its own; the lists only when asked, keeping their place.
    connect(startRefreshTimer(), &QTimer::timeout, this, &BacklogPage::refreshSummary);
    updateActions();
    refresh();
}

BacklogPage::~BacklogPage()
{
    // A drain still going stops after its current callback; what it processed stays processed.
    if (m_cancel)
        m_cancel->store(true);
}

QTableView *BacklogPage::addList(BacklogModel *model, const QString &objectName)
{
    auto *table = new DataTable(objectName, model, this);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &BacklogPage::showBody);
    connect(model, &QAbstractItemModel::rowsInserted, this, [table] {
        if (!table->currentIndex().isValid()) // the first page: show its first entry at once
            table->selectRow(0);
    });
    connect(model, &QAbstractItemModel::modelReset, this, &BacklogPage::showBody);
    connect(model, &BacklogModel::failed, m_status, &QLabel::setText);
    connect(table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        Q_EMIT openOrderNumber(index.data(BacklogModel::OrderNoRole).toByteArray());
    });
    return table;
}

void BacklogPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    m_switch->setAllowed(privileges.flipSwitch);
    updateActions();
}

void BacklogPage::refresh()
{
    refreshSummary();
    m_model->reload();
    m_unmatchedModel->reload();
    m_gatewayModel->reload();
}

void BacklogPage::refreshSummary()
{
    worker()->submit<console::BacklogSummary>(
        QStringLiteral("backlog-summary"), console::backlogSummaryJob(m_tally), this,
        [this](const console::BacklogSummary &summary) { showSummary(summary); },
        [this](const db::Error &error) {
            m_headline->setText(db::userMessage(error).toHtmlEscaped());
        });
}

void BacklogPage::showSummary(const console::BacklogSummary &summary)
{
    m_switch->setMode(summary.mode);
    const QLocale locale;
    const console::GatewayBacklog &gateway = summary.gateway;
    QString text =
        summary.recorded == 0 && gateway.rows > 0 ? tr("<b>No payment waits to be processed.</b>")
        : summary.recorded == 0
            ? tr("<b>The backlog is empty.</b> No callback waits to be processed.")
            : tr("<b>%1 callback(s) recorded</b>, not processed yet, worth %2 yuan; the oldest was "
                 "received "
                 "%3 UTC.")
                  .arg(locale.toString(summary.recorded), console::formatYuan(summary.amountFen),
                       console::displayTime(summary.oldestMicros));
    if (gateway.rows > 0)
        text += QLatin1Char(' ') +
                tr("<b>%1 gateway callback(s)</b> without a final answer from the upstream (the "
                   "<i>Gateway</i> list): forwarded, never paid by payops.")
                    .arg(gateway.more ? tr("over %1").arg(locale.toString(gateway.rows))
                                      : locale.toString(gateway.rows));
    text += tr(" Switch: <b>%1</b> (version %2).")
                .arg(summary.mode, QString::number(summary.switchVersion));
    m_headline->setText(text);

    const UnmatchedCount &unmatched = summary.unmatched;
    // The platform was answered unknown_order and will not send these again: without this
    // finding a payment whose order came late would never be applied and nobody would know.
    QString finding;
    if (unmatched.withOrder > 0)
        finding =
            palette::strong(palette::Role::Danger, tr("%n payment(s) waiting to be applied:",
                                                      nullptr, int(unmatched.withOrder))) +
            tr(" callbacks that arrived before their order, whose order is there now (%1 yuan). ")
                .arg(console::formatYuan(unmatched.withOrderFen));
    if (unmatched.withoutOrder() > 0)
        finding +=
            palette::strong(palette::Role::Warning, tr("%n callback(s) still without their order.",
                                                       nullptr, int(unmatched.withoutOrder()))) +
            QLatin1Char(' ');
    if (!finding.isEmpty())
        finding += tr("Unmatched callbacks were answered <tt>unknown_order</tt>, so the platform "
                      "does not send them "
                      "again; see the <i>Unmatched</i> list.");
    m_finding->setText(finding);
    m_finding->setVisible(!finding.isEmpty());
    // The first time only: later the operator's choice of list stands.
    if (!m_summaryKnown && summary.recorded == 0 && unmatched.callbacks > 0)
        m_lists->setCurrentIndex(1);
    const bool first = !m_summaryKnown;
    m_summary = summary;
    m_summaryKnown = true;
    m_lists->setTabText(0, tr("Recorded (%1)").arg(locale.toString(summary.recorded)));
    const bool gateways = gateway.rows > 0 || !gateway.upstreams.isEmpty();
    m_lists->setTabVisible(kGatewayTab, gateways);
    m_forward->setVisible(gateways);
    if (first && summary.recorded == 0 && unmatched.callbacks == 0 && gateway.rows > 0)
        m_lists->setCurrentIndex(kGatewayTab);
    m_lists->setTabText(kGatewayTab, tr("Gateway (%1%2)")
                                         .arg(locale.toString(gateway.rows),
                                              gateway.more ? QStringLiteral("+") : QString()));
    m_lists->setTabText(1, unmatched.callbacks == 0
                               ? tr("Unmatched (0)")
                               : tr("Unmatched (%1, %2 with their order)")
                                     .arg(locale.toString(unmatched.callbacks),
                                          locale.toString(unmatched.withOrder)));
    updateActions();
}

void BacklogPage::updateActions()
{
    const bool draining = isDraining();
    QString blocked;
    if (!privileges().drain)
        blocked = tr("This database account may not process the backlog or apply payments (the "
                     "payops_operator role "
                     "may).");
    else if (!m_summaryKnown)
        blocked = tr("Reading the backlog …");
    else if (isRecordOnly(m_summary))
        blocked = tr("The switch is RECORD_ONLY: processing now would pay out while the endpoint "
                     "is degraded, and a "
                     "callback arriving meanwhile would only be recorded behind the drain. Turn "
                     "the switch back to "
                     "NORMAL first (the button above), then process the backlog.");
    // Each drain is refused as above, or has nothing to do; its tooltip says which.
    const auto offer = [&](QPushButton *button, bool nothing, const QString &nothingWhy) {
        const QString why = !blocked.isEmpty() ? blocked : nothing ? nothingWhy : QString();
        button->setEnabled(!draining && why.isEmpty());
        button->setToolTip(why);
    };
    offer(m_process, m_summary.recorded == 0, tr("Nothing to process."));
    offer(m_apply, m_summary.unmatched.withOrder == 0,
          tr("No unmatched callback has its order yet."));
    offer(m_forward, m_summary.gateway.rows == 0,
          tr("No gateway callback waits for the upstream."));
    // "Nothing to process" needs no banner; a refusal does.
    const bool work =
        m_summaryKnown &&
        (m_summary.recorded > 0 || m_summary.unmatched.withOrder > 0 || m_summary.gateway.rows > 0);
    m_refusal->setText(work ? blocked : QString());
    m_refusal->setVisible(!m_refusal->text().isEmpty());
}

void BacklogPage::processBacklog()
{
    if (m_process->isEnabled())
        confirmDrain(DrainSource::Recorded);
}

void BacklogPage::applyMatched()
{
    if (m_apply->isEnabled())
        confirmDrain(DrainSource::Unmatched);
}

void BacklogPage::confirmDrain(DrainSource source)
{
    const bool unmatched = source == DrainSource::Unmatched;
    auto *confirm = new QMessageBox(
        QMessageBox::Question,
        unmatched ? tr("Apply matched callbacks") : tr("Process the backlog"),
        unmatched ? tr("Apply %n callback(s) whose order has arrived?", nullptr,
                       int(m_summary.unmatched.withOrder))
                  : tr("Process %n recorded callback(s) now?", nullptr, int(m_summary.recorded)),
        QMessageBox::Yes | QMessageBox::Cancel, this);
    confirm->setObjectName(QStringLiteral("drainConfirm"));
    confirm->setInformativeText(unmatched ? tr("Each is applied exactly once, as the endpoint "
                                               "would have on time, under its payment's lock: a "
                                               "pending order is marked paid and its coupons and "
                                               "points issued. An order no longer pending "
                                               "(e.g. already paid by another payment) rejects it, "
                                               "and finance sees a second payment to "
                                               "refund. Callbacks whose order is still missing "
                                               "stay unmatched. The drain stops by itself if "
                                               "the switch turns RECORD_ONLY.")
                                          : tr("Each is processed exactly once, oldest first, "
                                               "through the same payment logic as the endpoint: "
                                               "orders are marked paid and their coupons and "
                                               "points issued. A callback for an order already "
                                               "paid is rejected, not paid again; one whose order "
                                               "does not exist becomes unmatched. The drain "
                                               "stops by itself if the switch turns RECORD_ONLY."));
    confirm->setDefaultButton(QMessageBox::Cancel);
    confirm->setAttribute(Qt::WA_DeleteOnClose);
    connect(confirm, &QMessageBox::finished, this, [this, source](int answer) {
        if (answer == QMessageBox::Yes)
            startDrain(source);
    });
    confirm->open();
}

void BacklogPage::startDrain(DrainSource source)
{
    if (isDraining())
        return;
    const qint64 total =
        source == DrainSource::Unmatched ? m_summary.unmatched.callbacks : m_summary.recorded;
    showDrainStarted(total, tr("Processing …"));

    QPointer<BacklogPage> guard(this);
    DrainOptions options;
    options.source = source;
    options.worker = drainWorkerName();
    // The defaults of payops drain: the recorded backlog over several connections in batches.
    options.progress = [guard, total](const DrainResult &sofar) {
        const int done = walked(sofar);
        const double perSecond = sofar.perSecond;
        console::Worker::postTo(guard, [done, total, perSecond](BacklogPage *page) {
            if (!page->isDraining())
                return;
            page->m_progress->setValue(int(qMin<qint64>(done, page->m_progress->maximum())));
            page->m_status->setText(tr("Processing … %1 of %2 (%3 a second)")
                                        .arg(QString::number(done), QString::number(total),
                                             QLocale().toString(qRound64(perSecond))));
        });
    };
    m_drainWorker->submitStandalone<console::DrainRun>(
        QStringLiteral("drain"), console::drainJob(options, m_cancel), this,
        [this, source](const console::DrainRun &run) {
            showSummary(run.after);
            drainFinished(source, run.result, QString());
        },
        [this, source](const db::Error &error) {
            drainFinished(source, {}, db::userMessage(error));
        });
}

void BacklogPage::showDrainStarted(qint64 total, const QString &status)
{
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_progress->setRange(0, int(qMin<qint64>(total, INT_MAX)));
    m_progress->setValue(0);
    m_progress->show();
    m_stop->setEnabled(true);
    m_stop->show();
    m_status->setText(status);
    updateActions();
}

void BacklogPage::showDrainEnded(const QString &status, bool failed)
{
    m_cancel.reset();
    m_stop->hide();
    m_status->setText(status);
    m_progress->hide();
    updateActions();
    rereadAfterAction([this, failed] {
        // A finished drain brought its summary along, read on the primary; a failed one did
        // not.
        if (failed)
            refreshSummary();
        m_model->reload();
        m_unmatchedModel->reload();
        m_gatewayModel->reload();
    });
}

// How a drain ended, the first words of its summary: both drains end the same three ways.
QString BacklogPage::drainEnding(bool stoppedBySwitch, bool cancelled)
{
    if (stoppedBySwitch)
        return palette::strong(palette::Role::Warning,
                               tr("Stopped: the switch turned RECORD_ONLY while draining."));
    return cancelled ? tr("<b>Stopped.</b>") : tr("<b>Done.</b>");
}

void BacklogPage::drainFinished(DrainSource source, const DrainResult &result, const QString &error)
{
    QString text;
    const QString how = drainEnding(result.stoppedBySwitch, result.cancelled);
    if (!error.isEmpty()) {
        text = tr("%1 %2<br>Every callback processed before it stays processed; the rest are still "
                  "waiting.")
                   .arg(palette::strong(palette::Role::Danger, tr("Stopped by an error:")),
                        error.toHtmlEscaped());
    } else if (source == DrainSource::Unmatched) {
        text = tr("%1 Applied <b>%2</b>, rejected %3 (the order was no longer pending, e.g. "
                  "already paid: a second "
                  "payment for finance); %4 unmatched callback(s) left, %5 of them still without "
                  "their order.")
                   .arg(how, QString::number(result.processed), QString::number(result.rejected),
                        QString::number(m_summary.unmatched.callbacks),
                        QString::number(m_summary.unmatched.withoutOrder()));
    } else {
        text = tr("%1 Processed <b>%2</b>, rejected %3 (for a business reason, e.g. the order "
                  "already paid), ignored %4 "
                  "(not SUCCESS), unmatched %5 (no such order yet); %6 left in the backlog.")
                   .arg(how, QString::number(result.processed), QString::number(result.rejected),
                        QString::number(result.ignored), QString::number(result.unmatched),
                        QString::number(m_summary.recorded));
    }
    showDrainEnded(text, !error.isEmpty());
}

void BacklogPage::forwardToUpstream()
{
    if (!m_forward->isEnabled())
        return;
    auto *dialog =
        new UpstreamDrainDialog(m_summary.gateway.upstreams, m_summary.gateway.upstreamChannels,
                                m_summary.gateway.rows, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        startUpstreamDrain(dialog->upstream(), dialog->channel(), dialog->rate());
    });
    dialog->open();
}

void BacklogPage::startUpstreamDrain(const UpstreamOptions &upstream,
                                     std::optional<WireFormat> channel, int rate)
{
    if (isDraining())
        return;
    showDrainStarted(m_summary.gateway.rows, tr("Forwarding …"));
    QPointer<BacklogPage> guard(this);
    UpstreamDrainOptions options;
    options.upstream = upstream;
    options.channel = channel;
    options.rate = rate;
    options.worker = drainWorkerName();
    options.progress = [guard](const UpstreamDrainResult &sofar) {
        console::Worker::postTo(guard, [sofar](BacklogPage *page) {
            if (!page->isDraining())
                return;
            page->m_progress->setMaximum(qMax(sofar.candidates, 1));
            page->m_progress->setValue(qMin(sofar.done(), page->m_progress->maximum()));
            page->m_status->setText(
                tr("Forwarding … %1 of %2: forwarded %3, no final answer %4, skipped %5; %6 a "
                   "second.")
                    .arg(QString::number(sofar.done()), QString::number(sofar.candidates),
                         QString::number(sofar.forwarded), QString::number(sofar.failed),
                         QString::number(sofar.skipped),
                         QLocale().toString(sofar.perSecond, 'f', 1)));
        });
    };
    const QString where = upstreamWithoutCredentials(upstream.url);
    m_drainWorker->submitStandalone<console::UpstreamDrainRun>(
        QStringLiteral("drain-upstream"), console::upstreamDrainJob(options, m_cancel), this,
        [this, where](const console::UpstreamDrainRun &run) {
            showSummary(run.after);
            upstreamDrainFinished(run.result, where, QString());
        },
        [this, where](const db::Error &error) {
            upstreamDrainFinished({}, where, db::userMessage(error));
        });
}

void BacklogPage::upstreamDrainFinished(const UpstreamDrainResult &result, const QString &upstream,
                                        const QString &error)
{
    QString text;
    if (!error.isEmpty()) {
        text = tr("%1 %2<br>Every callback forwarded before it keeps its answer; the rest are "
                  "still waiting.")
                   .arg(palette::strong(palette::Role::Danger, tr("Stopped by an error:")),
                        error.toHtmlEscaped());
    } else {
        const QString how = drainEnding(result.stoppedBySwitch, result.cancelled);
        text = tr("%1 Forwarded <b>%2</b> to %3 with a final answer; %4 got none and wait for "
                  "the next drain; %5 skipped (live traffic was forwarding them, or they were "
                  "settled meanwhile).")
                   .arg(how, QString::number(result.forwarded), upstream.toHtmlEscaped(),
                        QString::number(result.failed), QString::number(result.skipped));
        if (result.failed > 0)
            text = palette::strong(palette::Role::Warning, text);
    }
    showDrainEnded(text, !error.isEmpty());
}

void BacklogPage::showBody()
{
    const auto *table = qobject_cast<QTableView *>(m_lists->currentWidget());
    const QModelIndex current = table ? table->selectionModel()->currentIndex() : QModelIndex();
    if (!current.isValid()) {
        m_received->showNothing(tr("Select a callback for its raw body."));
        return;
    }
    m_received->showCallback(current.siblingAtColumn(BacklogModel::IdColumn).data().toLongLong(),
                             current.data(BacklogModel::WireFormatRole).toString(),
                             current.data(BacklogModel::RawHeadersRole).toByteArray(),
                             current.data(BacklogModel::RawBodyRole).toByteArray());
}

} // namespace payops
