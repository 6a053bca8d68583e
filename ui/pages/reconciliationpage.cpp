#include "reconciliationpage.h"

#include "console/worker.h"
#include "lab/demostatements.h"
#include "models/draftmodel.h"
#include "models/findingmodel.h"
#include "palette.h"
#include "widgets/datatable.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <numeric>

namespace payops {
namespace {

QString formatText(StatementFormat format)
{
    switch (format) {
    case StatementFormat::WeChat:
        return ReconciliationPage::tr("WeChat Pay trade bill");
    case StatementFormat::Alipay:
        return ReconciliationPage::tr("Alipay business detail");
    case StatementFormat::Generic:
        return ReconciliationPage::tr("generic CSV");
    case StatementFormat::Auto:
        break;
    }
    return ReconciliationPage::tr("detect");
}

QString statementTitle(const StoredStatement &s)
{
    return ReconciliationPage::tr("#%1 · %2 · %3 · %4 lines")
        .arg(QString::number(s.id), formatText(s.header.format), QFileInfo(s.sourceFile).fileName(),
             QLocale().toString(s.lines));
}

// The platforms cut their statements in Beijing time; finance reads the period that way.
QString beijing(const QDateTime &utc)
{
    return utc.isValid()
               ? utc.toOffsetFromUtc(8 * 3600).toString(QStringLiteral("yyyy-MM-dd HH:mm"))
               : QString();
}

// What an import of the file at `path` did, as rich text.
QString importMessage(const QString &path, const console::StatementFileImport &result)
{
    using Outcome = console::StatementFileImport::Outcome;
    const auto failed = [] {
        return palette::strong(palette::Role::Danger, ReconciliationPage::tr("Not imported:"));
    };
    const StatementImport &imported = result.imported;
    switch (result.outcome) {
    case Outcome::CannotOpen:
        return ReconciliationPage::tr("%1 cannot open %2: %3")
            .arg(failed(), path.toHtmlEscaped(), result.problem);
    case Outcome::Unreadable:
        return ReconciliationPage::tr("%1 %2").arg(failed(), result.problem.toHtmlEscaped());
    case Outcome::Cancelled:
        return ReconciliationPage::tr("The import was stopped; nothing was stored.");
    case Outcome::Reconciled:
        break;
    }
    return imported.alreadyImported
               ? ReconciliationPage::tr("This file was %1: reconciled the stored statement again.")
                     .arg(imported.describeEarlierImport().toHtmlEscaped())
               : ReconciliationPage::tr(
                     "Imported %1 lines as statement %2 (%3) and reconciled them: %4 findings.")
                     .arg(QLocale().toString(imported.statement.lines),
                          QString::number(imported.statement.id),
                          formatText(imported.statement.header.format),
                          QLocale().toString(result.findings));
}

qint64 findingTotal(const console::ReconciliationView &view)
{
    return std::accumulate(view.counts.cbegin(), view.counts.cend(), qint64(0));
}

} // namespace

ReconciliationPage::ReconciliationPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("reconciliationPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);

    auto *bar = new QHBoxLayout;
    m_import = new QPushButton(tr("Import a statement…"), this);
    m_import->setObjectName(QStringLiteral("importStatement"));
    m_import->setToolTip(
        tr("A WeChat Pay trade bill, an Alipay business-detail CSV or the generic CSV. The same "
           "file twice is found by its SHA-256 and stored once."));
    bar->addWidget(m_import);
    m_demo = new QToolButton(this);
    m_demo->setObjectName(QStringLiteral("demoStatements"));
    m_demo->setText(tr("Demo statements"));
    m_demo->setToolTip(tr("The sandbox's WeChat Pay bill and Alipay business detail of its demo "
                          "payments, each with a few findings planted."));
    m_demo->setPopupMode(QToolButton::InstantPopup);
    m_demo->setMenu(new QMenu(m_demo));
    m_demo->setVisible(false);
    bar->addWidget(m_demo);
    bar->addWidget(new QLabel(tr("Format:"), this));
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("statementFormat"));
    for (StatementFormat f : {StatementFormat::Auto, StatementFormat::WeChat,
                              StatementFormat::Alipay, StatementFormat::Generic})
        m_format->addItem(f == StatementFormat::Auto ? tr("Detect from the file") : formatText(f),
                          static_cast<int>(f));
    bar->addWidget(m_format);
    bar->addSpacing(16);
    bar->addWidget(new QLabel(tr("Statement:"), this));
    m_statements = new QComboBox(this);
    m_statements->setObjectName(QStringLiteral("statementList"));
    // A statement's title holds its file name, as long as the platform made it: the box takes
    // the room the bar has, and each title is whole in its entry's tooltip, instead of the box
    // growing with the title past the screen.
    m_statements->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_statements->setMinimumContentsLength(24);
    m_statements->setPlaceholderText(tr("none imported yet"));
    bar->addWidget(m_statements, 1);
    m_reconcile = new QPushButton(tr("Reconcile again"), this);
    m_reconcile->setObjectName(QStringLiteral("reconcileAgain"));
    m_reconcile->setToolTip(
        tr("Compares the stored statement with the payments as they are now, and stores the run."));
    bar->addWidget(m_reconcile);
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName(QStringLiteral("stopImport"));
    m_stop->setVisible(false);
    bar->addWidget(m_stop);
    layout->addLayout(bar);

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("reconciliationStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    m_summary = new QLabel(tr("Import a platform's statement to reconcile it by pay_no."), this);
    m_summary->setObjectName(QStringLiteral("reconciliationSummary"));
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("reconciliationTabs"));

    auto *findingsTab = new QWidget(m_tabs);
    auto *findingsLayout = new QVBoxLayout(findingsTab);
    m_findingModel = new FindingModel(worker(), this);
    m_findingTable = new DataTable(QStringLiteral("findingTable"), m_findingModel, findingsTab);
    findingsLayout->addWidget(m_findingTable, 1);
    auto *findingsBar = new QHBoxLayout;
    auto *findingsNote = new QLabel(
        tr("Double-click a finding for its order's evidence; hover for what to do about it."),
        findingsTab);
    palette::setTextRole(findingsNote, palette::Role::Muted);
    findingsBar->addWidget(findingsNote, 1);
    m_draft = new QPushButton(tr("Draft the missing payment…"), findingsTab);
    m_draft->setObjectName(QStringLiteral("draftMissingPayment"));
    m_draft->setToolTip(
        tr("Records the platform's payment as the callback it should have been, once a second "
           "account confirms it; the backlog drain then applies it."));
    if (mapping())
        m_draft->setToolTip(tr("Not on the team's own tables: a drafted payment is applied to "
                               "payops's orders; the team pays its order itself."));
    findingsBar->addWidget(m_draft);
    findingsLayout->addLayout(findingsBar);
    m_tabs->addTab(findingsTab, tr("Findings"));

    auto *draftsTab = new QWidget(m_tabs);
    auto *draftsLayout = new QVBoxLayout(draftsTab);
    m_draftModel = new DraftModel(this);
    m_draftTable = new DataTable(QStringLiteral("draftTable"), m_draftModel, draftsTab);
    draftsLayout->addWidget(m_draftTable, 1);
    auto *draftsBar = new QHBoxLayout;
    auto *draftsNote =
        new QLabel(tr("A confirmed payment waits in the backlog as a recorded callback: drain the "
                      "backlog to apply it. The account that drafted cannot confirm."),
                   draftsTab);
    draftsNote->setWordWrap(true);
    palette::setTextRole(draftsNote, palette::Role::Muted);
    draftsBar->addWidget(draftsNote, 1);
    m_confirm = new QPushButton(tr("Confirm…"), draftsTab);
    m_confirm->setObjectName(QStringLiteral("confirmDraft"));
    m_discard = new QPushButton(tr("Discard…"), draftsTab);
    m_discard->setObjectName(QStringLiteral("discardDraft"));
    draftsBar->addWidget(m_confirm);
    draftsBar->addWidget(m_discard);
    draftsLayout->addLayout(draftsBar);
    m_tabs->addTab(draftsTab, tr("Missing payments"));

    m_errors = new QPlainTextEdit(m_tabs);
    m_errors->setObjectName(QStringLiteral("statementErrors"));
    m_errors->setReadOnly(true);
    m_tabs->addTab(m_errors, tr("Unreadable lines"));
    layout->addWidget(m_tabs, 1);

    connect(m_import, &QPushButton::clicked, this, &ReconciliationPage::chooseFile);
    connect(m_reconcile, &QPushButton::clicked, this, &ReconciliationPage::reconcileAgain);
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
    });
    connect(m_statements, &QComboBox::activated, this,
            [this](int index) { showStatement(m_statements->itemData(index).toLongLong()); });
    connect(
        m_findingTable, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex &index) {
            if (const qint64 order = index.data(FindingModel::OrderIdRole).toLongLong(); order > 0)
                Q_EMIT openOrder(order);
            else if (const QByteArray orderNo = index.data(FindingModel::OrderNoRole).toByteArray();
                     !orderNo.isEmpty())
                Q_EMIT openOrderNumber(orderNo); // a gateway's order
        });
    connect(m_findingTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ReconciliationPage::updateButtons);
    connect(m_draftTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ReconciliationPage::updateButtons);
    connect(m_draft, &QPushButton::clicked, this, &ReconciliationPage::askDraft);
    connect(m_confirm, &QPushButton::clicked, this, [this] { askDecision(true); });
    connect(m_discard, &QPushButton::clicked, this, [this] { askDecision(false); });
    updateButtons();
    loadStatements(0);
    offerDemoStatements();
}

void ReconciliationPage::offerDemoStatements()
{
    worker()->submit<QStringList>(
        QStringLiteral("demo-statements"), console::jobOf(demoStatementFiles), this,
        [this](const QStringList &files) {
            m_demo->menu()->clear();
            for (const QString &path : files) {
                QAction *action = m_demo->menu()->addAction(QFileInfo(path).fileName());
                action->setToolTip(path);
                connect(action, &QAction::triggered, this,
                        [this, path] { importStatementFile(path, StatementFormat::Auto); });
            }
            m_demo->setVisible(!files.isEmpty());
        },
        // Without them the page is as it is elsewhere.
        [](const db::Error &) {});
}

void ReconciliationPage::refresh()
{
    // Nothing here changes on its own but the drafts and the payments a finding is about:
    // the shown statement is read again; reconciling again is the user's to ask.
    if (!m_busy && m_view.statement.id > 0)
        showStatement(m_view.statement.id);
}

void ReconciliationPage::loadStatements(qint64 select)
{
    worker()->submit<QList<StoredStatement>>(
        QStringLiteral("statements"), console::jobOf(console::loadStatements, 200), this,
        [this, select](const QList<StoredStatement> &statements) {
            m_statements->clear();
            for (const StoredStatement &s : statements) {
                const QString title = statementTitle(s);
                m_statements->addItem(title, s.id);
                m_statements->setItemData(m_statements->count() - 1, title, Qt::ToolTipRole);
            }
            if (statements.isEmpty())
                return;
            const int row = select > 0 ? std::max(0, m_statements->findData(select)) : 0;
            m_statements->setCurrentIndex(row);
            if (select == 0)
                showStatement(m_statements->itemData(row).toLongLong());
        },
        [this](const db::Error &error) {
            m_status->setText(db::userMessage(error).toHtmlEscaped());
        });
}

void ReconciliationPage::showStatement(qint64 statementId)
{
    worker()->submit<console::ReconciliationView>(
        QStringLiteral("statement-view"),
        console::jobOf(console::loadReconciliationView, statementId, tables()), this,
        [this](const console::ReconciliationView &view) { showView(view); },
        [this](const db::Error &error) {
            m_status->setText(db::userMessage(error).toHtmlEscaped());
        });
}

std::optional<mapping::Mapping> ReconciliationPage::tables() const
{
    return mapping() ? std::optional(*mapping()) : std::nullopt;
}

void ReconciliationPage::showView(const console::ReconciliationView &view)
{
    m_view = view;
    const StoredStatement &s = view.statement;
    QString text =
        tr("<b>Statement %1</b>, %2%3, channel %4, %5 – %6 Beijing time (%7), %8 lines, imported "
           "by %9.")
            .arg(QString::number(s.id), formatText(s.header.format),
                 s.header.detected ? tr(" (detected)") : QString(),
                 s.header.channel.isEmpty() ? tr("any") : s.header.channel.toHtmlEscaped(),
                 beijing(s.header.periodStart), beijing(s.header.periodEnd),
                 s.periodDeclared ? tr("declared by the file") : tr("its first and last payment"),
                 QLocale().toString(s.lines), s.importedBy.toHtmlEscaped());
    if (s.errors > 0)
        text += QLatin1Char(' ') +
                palette::strong(palette::Role::Warning,
                                tr("Unreadable lines: %1.").arg(QLocale().toString(s.errors)));
    if (view.runId == 0) {
        text += QLatin1Char(' ') + tr("Not reconciled yet.");
    } else {
        QStringList parts;
        for (int k = 0; k < kFindingKinds; ++k)
            if (view.counts[k] > 0)
                parts << tr("%1 × %2").arg(QLocale().toString(view.counts[k]),
                                           FindingModel::kindText(static_cast<FindingKind>(k)));
        text += QStringLiteral("<br>") +
                tr("Reconciled %1 UTC by %2: ")
                    .arg(view.reconciledAt.toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                         view.reconciledBy.toHtmlEscaped()) +
                (parts.isEmpty()
                     ? palette::strong(palette::Role::Ok, tr("everything matches."))
                     : palette::strong(palette::Role::Danger, parts.join(QStringLiteral(", "))));
        if (view.findings.size() < findingTotal(view))
            text += QLatin1Char(' ') +
                    tr("Only the first %1 findings are listed; Export CSV… writes them all.")
                        .arg(QLocale().toString(view.findings.size()));
    }
    m_summary->setText(text);
    m_findingModel->setFindings(view.findings, view.runId, tables());
    m_draftModel->setDrafts(view.drafts);
    QStringList errors;
    for (const StatementLineError &e : view.errors)
        errors << tr("line %1: %2").arg(QString::number(e.lineNo), e.message);
    m_errors->setPlainText(errors.join(QLatin1Char('\n')));
    m_tabs->setTabText(0, tr("Findings (%1)").arg(findingTotal(view)));
    m_tabs->setTabText(1, tr("Missing payments (%1)").arg(view.drafts.size()));
    m_tabs->setTabText(2, tr("Unreadable lines (%1)").arg(s.errors));
    updateButtons();
}

void ReconciliationPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    updateButtons();
}

void ReconciliationPage::updateButtons()
{
    const QModelIndex finding = m_findingTable->selectionModel()->currentIndex();
    // A drafted payment is applied to payops's own orders through the backlog: on the team's
    // tables the team pays the order itself.
    m_draft->setEnabled(!mapping() && !m_busy && privileges().draftPayments && finding.isValid() &&
                        finding.data(FindingModel::KindRole).toInt() ==
                            static_cast<int>(FindingKind::MissingOurs));
    const QModelIndex draft = m_draftTable->selectionModel()->currentIndex();
    const bool open = privileges().decidePayments && draft.isValid() &&
                      draft.data(DraftModel::StatusRole).toString() == QLatin1String("DRAFT");
    m_confirm->setEnabled(!m_busy && open);
    m_discard->setEnabled(!m_busy && open);
    m_import->setEnabled(!m_busy);
    m_reconcile->setEnabled(!m_busy && m_view.statement.id > 0);
    m_statements->setEnabled(!m_busy);
}

void ReconciliationPage::startJob(const QString &text)
{
    m_busy = true;
    m_status->setText(text);
    updateButtons();
}

void ReconciliationPage::endJob(const QString &text)
{
    m_busy = false;
    m_cancel.reset();
    m_stop->setVisible(false);
    m_status->setText(text);
    updateButtons();
}

void ReconciliationPage::chooseFile()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Import a platform statement"), QDir::homePath(),
                                     tr("Statements (*.csv *.txt *.zip *.gz);;All files (*)"));
    if (!path.isEmpty())
        importStatementFile(path, static_cast<StatementFormat>(m_format->currentData().toInt()));
}

void ReconciliationPage::importStatementFile(const QString &path, StatementFormat format)
{
    if (m_busy)
        return;
    startJob(tr("Importing %1 …").arg(QFileInfo(path).fileName().toHtmlEscaped()));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_stop->setVisible(true);
    QPointer<ReconciliationPage> guard(this);
    const auto progress = [guard](const StatementImportProgress &p) { // on the worker's thread
        console::Worker::postTo(guard, [p](ReconciliationPage *page) {
            if (page->m_busy)
                page->m_status->setText(
                    tr("Importing … %1 lines stored, %2 % of the file")
                        .arg(QLocale().toString(p.lines),
                             QString::number(p.totalBytes > 0 ? 100 * p.bytesRead / p.totalBytes
                                                              : 0)));
        });
    };
    actionWorker()->submit<console::StatementFileImport>(
        QStringLiteral("statement-import"),
        console::statementFileImportJob(path, format, m_cancel, progress, tables()), this,
        [this, path](const console::StatementFileImport &result) {
            const bool ok = result.outcome == console::StatementFileImport::Outcome::Reconciled;
            const QString message = importMessage(path, result);
            endJob(message);
            if (ok) {
                showView(result.view);
                // The list is read where the page reads: once that has the new statement.
                rereadAfterAction([this, id = result.view.statement.id] { loadStatements(id); });
            }
            Q_EMIT importFinished(ok, message);
        },
        [this](const db::Error &error) {
            const QString message =
                tr("The import failed: %1").arg(db::userMessage(error).toHtmlEscaped());
            endJob(message);
            Q_EMIT importFinished(false, message);
        });
}

void ReconciliationPage::reconcileAgain()
{
    const qint64 id = m_view.statement.id;
    if (m_busy || id == 0)
        return;
    startJob(tr("Reconciling statement %1 …").arg(id));
    actionWorker()->submit<console::ReconciliationView>(
        QStringLiteral("statement-reconcile"), console::reconcileAgainJob(id, tables()), this,
        [this](const console::ReconciliationView &view) {
            endJob(tr("Reconciled statement %1 again.").arg(view.statement.id));
            showView(view);
        },
        [this](const db::Error &error) {
            endJob(tr("Not reconciled: %1").arg(db::userMessage(error).toHtmlEscaped()));
        });
}

void ReconciliationPage::runDraftAction(const QString &what,
                                        console::Job<console::ReconciliationView> action)
{
    if (m_busy || m_view.statement.id == 0)
        return;
    startJob(what);
    actionWorker()->submit<console::ReconciliationView>(
        QStringLiteral("statement-draft"), std::move(action), this,
        [this](const console::ReconciliationView &view) {
            const QString done = tr("Done.");
            endJob(done);
            showView(view);
            m_tabs->setCurrentIndex(1);
            Q_EMIT actionFinished(true, done);
        },
        [this](const db::Error &error) {
            const QString message = palette::strong(palette::Role::Danger, tr("Refused:")) +
                                    QLatin1Char(' ') + db::userMessage(error).toHtmlEscaped();
            endJob(message);
            Q_EMIT actionFinished(false, message);
        });
}

void ReconciliationPage::draftSelectedFinding(const QString &reason, qint64 orderId)
{
    const QModelIndex index = m_findingTable->selectionModel()->currentIndex();
    if (!index.isValid())
        return;
    const qint64 statement = m_view.statement.id;
    const qint64 line = index.data(FindingModel::LineRole).toLongLong();
    runDraftAction(tr("Drafting the payment of line %1 …").arg(line),
                   console::draftPaymentJob(statement, line, orderId, reason));
}

void ReconciliationPage::confirmSelectedDraft(const QString &reason)
{
    const qint64 draft =
        m_draftTable->selectionModel()->currentIndex().data(DraftModel::DraftIdRole).toLongLong();
    if (draft > 0)
        runDraftAction(tr("Confirming draft %1 …").arg(draft),
                       console::confirmDraftJob(m_view.statement.id, draft, reason));
}

void ReconciliationPage::discardSelectedDraft(const QString &reason)
{
    const qint64 draft =
        m_draftTable->selectionModel()->currentIndex().data(DraftModel::DraftIdRole).toLongLong();
    if (draft > 0)
        runDraftAction(tr("Discarding draft %1 …").arg(draft),
                       console::discardDraftJob(m_view.statement.id, draft, reason));
}

void ReconciliationPage::askDraft()
{
    const QModelIndex index = m_findingTable->selectionModel()->currentIndex();
    if (!index.isValid())
        return;
    qint64 orderId = 0;
    if (index.data(FindingModel::OrderIdRole).toLongLong() <= 0) {
        bool ok = false;
        orderId = QInputDialog::getText(this, tr("Which order did it pay?"),
                                        tr("The platform's line names no order of ours. Order id:"),
                                        QLineEdit::Normal, QString(), &ok)
                      .toLongLong(&ok);
        if (!ok || orderId <= 0)
            return;
    }
    bool ok = false;
    const QString reason = QInputDialog::getText(
        this, tr("Draft the missing payment"), tr("Why (kept in the audit log):"),
        QLineEdit::Normal, tr("漏单 on statement %1").arg(m_view.statement.id), &ok);
    if (ok)
        draftSelectedFinding(reason, orderId);
}

void ReconciliationPage::askDecision(bool confirm)
{
    bool ok = false;
    const QString reason = QInputDialog::getText(
        this, confirm ? tr("Confirm the missing payment") : tr("Discard the draft"),
        confirm ? tr("Checked against the platform? Why (kept in the audit log):")
                : tr("Why (kept in the audit log):"),
        QLineEdit::Normal, QString(), &ok);
    if (!ok)
        return;
    if (confirm)
        confirmSelectedDraft(reason);
    else
        discardSelectedDraft(reason);
}

} // namespace payops
