#pragma once

#include "domain/callback/missingpayment.h"
#include "domain/statement/reconciliation.h"
#include "domain/statement/statement.h"
#include "domain/statement/statementimport.h"

#include <QList>

#include <array>
#include <QSqlDatabase>

namespace payops::console {

// One stored statement as the reconciliation page shows it: the statement, what its newest
// reconciliation found (as stored, with the line's and the order's status beside each
// finding), its unreadable lines and the missing payments drafted from it.
struct ReconciliationView
{
    StoredStatement statement;
    qint64 runId = 0;          // 0: never reconciled
    QDateTime reconciledAt;    // UTC, of that run
    QString reconciledBy;
    std::array<qint64, kFindingKinds> counts{}; // of that run, every finding
    QList<ReconciliationFinding> findings;      // the first kFindingRows of them
    QList<StatementLineError> errors; // the first kErrorRows of them
    QList<MissingPaymentDraft> drafts;
};
inline constexpr int kErrorRows = 1000;
inline constexpr int kFindingRows = 20000;

// The statements imported, newest first (a few hundred rows, one per file). Throws db::Error.
QList<StoredStatement> loadStatements(const QSqlDatabase &db, int limit = 200);

// Reads the statement's view; its findings are the newest run's, the first kFindingRows of
// them (`counts` and the streamed CSV export, readStoredFindings(), have them all). Throws
// db::Error.
ReconciliationView loadReconciliationView(const QSqlDatabase &db, qint64 statementId);

} // namespace payops::console
