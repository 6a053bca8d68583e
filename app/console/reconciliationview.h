#pragma once

#include "domain/callback/missingpayment.h"
#include "domain/mapping/mapping.h"
#include "domain/statement/reconciliation.h"
#include "domain/statement/statement.h"
#include "domain/statement/statementimport.h"
#include "job.h"

#include <QList>

#include <QSqlDatabase>
#include <array>
#include <atomic>
#include <functional>
#include <memory>

namespace payops::console {

// One stored statement as the reconciliation page shows it: the statement, what its newest
// reconciliation found (as stored, with the line's and the order's status beside each
// finding), its unreadable lines and the missing payments drafted from it.
struct ReconciliationView
{
    StoredStatement statement;
    qint64 runId = 0;       // 0: never reconciled
    QDateTime reconciledAt; // UTC, of that run
    QString reconciledBy;
    std::array<qint64, kFindingKinds> counts{}; // of that run, every finding
    QList<ReconciliationFinding> findings;      // the first kFindingRows of them
    QList<StatementLineError> errors;           // the first kErrorRows of them
    QList<MissingPaymentDraft> drafts;
};
inline constexpr int kErrorRows = 1000;
inline constexpr int kFindingRows = 20000;

// The statements imported, newest first (a few hundred rows, one per file). Throws db::Error.
QList<StoredStatement> loadStatements(const QSqlDatabase &db, int limit = 200);

// Reads the statement's view; its findings are the newest run's, the first kFindingRows of
// them (`counts` and the streamed CSV export, readStoredFindings(), have them all). Throws
// db::Error.
// With `mapping`, the statuses beside the findings are read from the team's tables, the side
// the statement was reconciled against. Throws db::Error.
ReconciliationView loadReconciliationView(const QSqlDatabase &db, qint64 statementId,
                                          const std::optional<mapping::Mapping> &mapping = {});

// How importing a statement file ended.
struct StatementFileImport
{
    enum class Outcome { Reconciled, Cancelled, CannotOpen, Unreadable };
    Outcome outcome = Outcome::Unreadable;
    QString problem; // CannotOpen: the file's error; Unreadable: what is wrong with its content
    StatementImport
        imported; // Reconciled: the statement stored, or the one stored earlier from the same file
    qint64 findings = 0;     // Reconciled: what this reconciliation found
    ReconciliationView view; // Reconciled: the statement's view after it
};

// The reconciliation page's import as a worker's job: imports the file at `path` and
// reconciles the statement, a new one or the one stored earlier from the same file, against
// the team's payments when `mapping` is given (as `payops reconcile --mapping` does), else
// payops's own. Stops, storing nothing, once `cancel` is set; `progress` is called on the
// worker's thread. Throws db::Error.
Job<StatementFileImport>
statementFileImportJob(QString path, StatementFormat format,
                       std::shared_ptr<std::atomic<bool>> cancel,
                       std::function<void(const StatementImportProgress &)> progress,
                       std::optional<mapping::Mapping> mapping = std::nullopt);

// The page's acts on a statement as worker's jobs, each answering with the statement's view
// after it. Throw db::Error, whose message says which rule refused the act.
Job<ReconciliationView> reconcileAgainJob(qint64 statementId,
                                          std::optional<mapping::Mapping> mapping = std::nullopt);
Job<ReconciliationView> draftPaymentJob(qint64 statementId, qint64 lineNo, qint64 orderId,
                                        QString reason);
Job<ReconciliationView> confirmDraftJob(qint64 statementId, qint64 draftId, QString reason);
Job<ReconciliationView> discardDraftJob(qint64 statementId, qint64 draftId, QString reason);

} // namespace payops::console
