#include "backlogpage.h"

#include "console/consolesettings.h"
#include "db/dbworker.h"
#include "models/backlogmodel.h"
#include "ops/backlogdrainer.h"
#include "widgets/datatable.h"
#include "widgets/switchcontrol.h"

#include <QCoreApplication>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QSysInfo>
#include <QTableView>
#include <QVBoxLayout>

namespace payops {

namespace {

struct DrainRun
{
    DrainResult result;
    console::BacklogSummary after; // the backlog when the drain ended
};

bool isRecordOnly(const console::BacklogSummary &summary)
{
    return summary.mode == callbackModeName(CallbackMode::RecordOnly);
}

} // namespace

BacklogPage::BacklogPage(const Dsn &dsn, QWidget *parent)
    : Page(dsn, parent)
    , m_drainWorker(std::make_unique<db::DbWorker>(dsn))
{
    setObjectName(QStringLiteral("backlogPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);

    auto *header = new QHBoxLayout;
    m_headline = new QLabel(tr("Reading the backlog …"), this);
    m_headline->setObjectName(QStringLiteral("backlogHeadline"));
    m_headline->setWordWrap(true);
    m_switch = new SwitchControl(dsn, this);
    connect(m_switch, &SwitchControl::flipped, this, &BacklogPage::refresh);
    header->addWidget(m_headline, 1);
    header->addWidget(m_switch, 0, Qt::AlignTop);
    layout->addLayout(header);

    auto *acts = new QHBoxLayout;
    m_process = new QPushButton(tr("Process backlog…"), this);
    m_process->setObjectName(QStringLiteral("processBacklogButton"));
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
    m_refusal->setStyleSheet(QStringLiteral("color: #b35900;"));
    layout->addWidget(m_refusal);

    m_model = new BacklogModel(worker(), this);
    m_table = new DataTable(QStringLiteral("backlogTable"), m_model, this);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    auto *bodyPane = new QWidget(this);
    auto *bodyLayout = new QVBoxLayout(bodyPane);
    bodyLayout->setContentsMargins(0, 6, 0, 0);
    m_bodyTitle = new QLabel(tr("Select a callback for its raw body."), bodyPane);
    m_bodyTitle->setObjectName(QStringLiteral("bodyTitle"));
    m_body = new QPlainTextEdit(bodyPane);
    m_body->setObjectName(QStringLiteral("rawBody"));
    m_body->setReadOnly(true);
    m_body->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    bodyLayout->addWidget(m_bodyTitle);
    bodyLayout->addWidget(m_body, 1);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(bodyPane);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter, 1);
    auto *note = new QLabel(tr("A drain processes each recorded callback exactly once, oldest first, through the same "
                               "payment logic as the endpoint, one transaction each; several consoles or "
                               "<tt>payops drain</tt> may run at once. Double-click a row for the order's evidence."),
                            this);
    note->setWordWrap(true);
    note->setStyleSheet(QStringLiteral("color: #555;"));
    layout->addWidget(note);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &BacklogPage::showBody);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_table->currentIndex().isValid()) // the first page: show its first entry at once
            m_table->selectRow(0);
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, &BacklogPage::showBody);
    connect(m_model, &BacklogModel::failed, m_status, &QLabel::setText);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        Q_EMIT openOrder(index.data(BacklogModel::OrderIdRole).toLongLong());
    });
    connect(m_process, &QPushButton::clicked, this, &BacklogPage::processBacklog);
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
        m_stop->setEnabled(false);
        m_status->setText(tr("Stopping after the current callback …"));
    });
    connect(&m_timer, &QTimer::timeout, this, &BacklogPage::refreshSummary);
    m_timer.start(console::ConsoleSettings::load().refreshSeconds * 1000);
    updateActions();
    refresh();
}

BacklogPage::~BacklogPage()
{
    // A drain still going stops after its current callback; what it processed stays processed.
    if (m_cancel)
        m_cancel->store(true);
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
}

void BacklogPage::refreshSummary()
{
    worker()->submit<console::BacklogSummary>(
        QStringLiteral("backlog-summary"), [](const QSqlDatabase &db) { return console::loadBacklogSummary(db); }, this,
        [this](const console::BacklogSummary &summary) { showSummary(summary); },
        [this](const db::Error &error) { m_headline->setText(error.message().toHtmlEscaped()); });
}

void BacklogPage::showSummary(const console::BacklogSummary &summary)
{
    m_summary = summary;
    m_summaryKnown = true;
    m_switch->setMode(summary.mode);
    const QLocale locale;
    QString text = summary.recorded == 0
                       ? tr("<b>The backlog is empty.</b> No callback waits to be processed.")
                       : tr("<b>%1 callback(s) recorded</b>, not processed yet, worth %2 yuan; the oldest was received "
                            "%3 UTC.")
                             .arg(locale.toString(summary.recorded), console::formatYuan(summary.amountFen),
                                  console::displayTime(summary.oldestMicros));
    text += tr(" Switch: <b>%1</b> (version %2).").arg(summary.mode).arg(summary.switchVersion);
    m_headline->setText(text);
    updateActions();
}

void BacklogPage::updateActions()
{
    const bool draining = isDraining();
    QString why;
    if (!privileges().drain)
        why = tr("This database account may not process the backlog (the payops_operator role may).");
    else if (!m_summaryKnown)
        why = tr("Reading the backlog …");
    else if (isRecordOnly(m_summary))
        why = tr("The switch is RECORD_ONLY: processing now would pay out while the endpoint is degraded, and a "
                 "callback arriving meanwhile would only be recorded behind the drain. Turn the switch back to NORMAL "
                 "first (the button above), then process the backlog.");
    else if (m_summary.recorded == 0)
        why = tr("Nothing to process.");
    m_process->setEnabled(!draining && why.isEmpty());
    m_process->setToolTip(why);
    // "Nothing to process" needs no banner; a refusal does.
    m_refusal->setText(m_summaryKnown && m_summary.recorded > 0 ? why : QString());
    m_refusal->setVisible(!m_refusal->text().isEmpty());
}

void BacklogPage::processBacklog()
{
    if (!m_process->isEnabled())
        return;
    auto *confirm = new QMessageBox(QMessageBox::Question, tr("Process the backlog"),
                                    tr("Process %n recorded callback(s) now?", nullptr, int(m_summary.recorded)),
                                    QMessageBox::Yes | QMessageBox::Cancel, this);
    confirm->setObjectName(QStringLiteral("drainConfirm"));
    confirm->setInformativeText(tr("Each is processed exactly once, oldest first, through the same payment logic as "
                                   "the endpoint: orders are marked paid and their coupons and points issued. A "
                                   "callback for an order already paid is rejected, not paid again. The drain stops "
                                   "by itself if the switch turns RECORD_ONLY."));
    confirm->setDefaultButton(QMessageBox::Cancel);
    confirm->setAttribute(Qt::WA_DeleteOnClose);
    connect(confirm, &QMessageBox::finished, this, [this](int answer) {
        if (answer == QMessageBox::Yes)
            startDrain();
    });
    confirm->open();
}

void BacklogPage::startDrain()
{
    if (isDraining())
        return;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const qint64 total = m_summary.recorded;
    m_progress->setRange(0, int(qMin<qint64>(total, INT_MAX)));
    m_progress->setValue(0);
    m_progress->show();
    m_stop->setEnabled(true);
    m_stop->show();
    m_status->setText(tr("Processing …"));
    updateActions();

    QPointer<BacklogPage> guard(this);
    DrainOptions options;
    options.worker = QStringLiteral("drain:console:%1:%2")
                         .arg(QSysInfo::machineHostName()).arg(QCoreApplication::applicationPid());
    options.cancel = m_cancel.get();
    options.progress = [guard, total](const DrainResult &sofar) {
        const int done = sofar.handled();
        QMetaObject::invokeMethod(guard.data(), [guard, done, total] {
            if (!guard || !guard->isDraining())
                return;
            guard->m_progress->setValue(int(qMin<qint64>(done, guard->m_progress->maximum())));
            guard->m_status->setText(tr("Processing … %1 of %2").arg(done).arg(total));
        }, Qt::QueuedConnection);
    };
    const auto cancel = m_cancel; // keeps the flag alive as long as the job runs
    m_drainWorker->submit<DrainRun>(
        QStringLiteral("drain"),
        [options, cancel](const QSqlDatabase &db) {
            DrainRun run;
            run.result = drainBacklog(db, options);
            run.after = console::loadBacklogSummary(db);
            return run;
        },
        this,
        [this](const DrainRun &run) {
            showSummary(run.after);
            drainFinished(run.result, QString());
        },
        [this](const db::Error &error) { drainFinished({}, error.message()); });
}

void BacklogPage::drainFinished(const DrainResult &result, const QString &error)
{
    m_cancel.reset();
    m_stop->hide();
    QString text;
    if (!error.isEmpty()) {
        text = tr("<b style='color:#c62828'>Stopped by an error:</b> %1<br>Every callback processed before it stays "
                  "processed; the rest are still recorded.").arg(error.toHtmlEscaped());
    } else {
        text = tr("%1 Processed <b>%2</b>, rejected %3 (for a business reason, e.g. the order already paid), ignored %4 "
                  "(not SUCCESS); %5 left in the backlog.")
                   .arg(result.stoppedBySwitch ? tr("<b style='color:#b35900'>Stopped: the switch turned RECORD_ONLY "
                                                    "while draining.</b>")
                        : result.cancelled ? tr("<b>Stopped.</b>")
                                           : tr("<b>Done.</b>"))
                   .arg(result.processed).arg(result.rejected).arg(result.ignored).arg(m_summary.recorded);
    }
    m_status->setText(text);
    m_progress->hide();
    // A finished drain brought its summary along; a failed one did not.
    if (!error.isEmpty())
        refreshSummary();
    updateActions();
    m_model->reload();
}

void BacklogPage::showBody()
{
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_bodyTitle->setText(tr("Select a callback for its raw body."));
        m_body->clear();
        return;
    }
    const QByteArray body = current.data(BacklogModel::RawBodyRole).toByteArray();
    const QString text = QString::fromUtf8(body);
    // The endpoint records only valid JSON, but a row edited by hand need not be UTF-8.
    const bool exact = text.toUtf8() == body;
    m_bodyTitle->setText(tr("Raw body of callback %1, as received (%n byte(s))%2:", nullptr, int(body.size()))
                             .arg(m_model->index(current.row(), BacklogModel::IdColumn).data().toString(),
                                  exact ? QString() : tr("; not valid UTF-8, undecodable bytes shown as \uFFFD")));
    m_body->setPlainText(text);
}

} // namespace payops
