#pragma once

#include "console/reconciliationview.h"
#include "page.h"

#include <atomic>
#include <memory>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QToolButton;

namespace payops {

class DataTable;
class DraftModel;
class FindingModel;

// "Reconciliation": import a platform's statement (WeChat Pay bill, Alipay business detail or
// the generic CSV), reconcile it by pay_no, and work through what it found: each finding opens
// its order's evidence, a 漏单 becomes a drafted payment that a second account confirms. The
// import runs on the page's worker with progress and stop; the UI thread never reads the file
// or the database.
class ReconciliationPage final : public Page
{
    Q_OBJECT

public:
    ReconciliationPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(ReconciliationPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Imports the file, reconciles it and shows it; importFinished() tells how it ended.
    void importStatementFile(const QString &path, StatementFormat format);
    void reconcileAgain();
    // The actions on the selected finding or draft, without their dialogs.
    void draftSelectedFinding(const QString &reason, qint64 orderId = 0);
    void confirmSelectedDraft(const QString &reason);
    void discardSelectedDraft(const QString &reason);
    qint64 shownStatementId() const { return m_view.statement.id; }
    FindingModel *findings() const { return m_findingModel; }
    DraftModel *drafts() const { return m_draftModel; }

Q_SIGNALS:
    // `message` says what happened, as the page shows it.
    void importFinished(bool ok, const QString &message);
    void actionFinished(bool ok, const QString &message);

private:
    void chooseFile();
    // On a sandbox, the demo statements it wrote (lab/demostatements.h), a click from import.
    void offerDemoStatements();
    void loadStatements(qint64 select);
    void showStatement(qint64 statementId);
    void showView(const console::ReconciliationView &view);
    void updateButtons();
    // The page's mapping, copied into the jobs that run on the worker's thread.
    std::optional<mapping::Mapping> tables() const;
    void startJob(const QString &text);
    void endJob(const QString &text);
    void runDraftAction(const QString &what, console::Job<console::ReconciliationView> action);
    void askDraft();
    void askDecision(bool confirm);

    QPushButton *m_import = nullptr;
    QToolButton *m_demo = nullptr; // shown on a sandbox that has demo statements
    QComboBox *m_format = nullptr;
    QComboBox *m_statements = nullptr;
    QPushButton *m_reconcile = nullptr;
    QPushButton *m_stop = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_summary = nullptr;
    QTabWidget *m_tabs = nullptr;
    FindingModel *m_findingModel = nullptr;
    DataTable *m_findingTable = nullptr;
    QPushButton *m_draft = nullptr;
    DraftModel *m_draftModel = nullptr;
    DataTable *m_draftTable = nullptr;
    QPushButton *m_confirm = nullptr;
    QPushButton *m_discard = nullptr;
    QPlainTextEdit *m_errors = nullptr;
    console::ReconciliationView m_view;
    std::shared_ptr<std::atomic<bool>> m_cancel; // set while an import runs
    bool m_busy = false;
};

} // namespace payops
