#include "reconciliationview.h"

#include "db/connection.h"

#include <QSqlQuery>

namespace payops::console {

QList<StoredStatement> loadStatements(const QSqlDatabase &db, int limit)
{
    QSqlQuery query = db::exec(db, QStringLiteral("SELECT id FROM platform_statement ORDER BY id DESC LIMIT %1").arg(limit));
    QList<qint64> ids;
    while (query.next())
        ids << query.value(0).toLongLong();
    QList<StoredStatement> statements;
    for (qint64 id : ids)
        statements << readStoredStatement(db, id);
    return statements;
}

ReconciliationView loadReconciliationView(const QSqlDatabase &db, qint64 statementId)
{
    ReconciliationView view;
    view.statement = readStoredStatement(db, statementId);
    QSqlQuery run = db::exec(db, QStringLiteral(
        "SELECT id, finished_at, started_by, missing_ours, missing_platform, amount_mismatch, status_mismatch, "
        "duplicate_platform, double_payment FROM reconciliation_run WHERE statement_id = ? AND finished_at IS NOT NULL "
        "ORDER BY id DESC LIMIT 1"), {statementId});
    if (run.next()) {
        view.runId = run.value(0).toLongLong();
        view.reconciledAt = db::utcDateTime(run.value(1));
        view.reconciledBy = run.value(2).toString();
        for (int kind = 0; kind < kFindingKinds; ++kind)
            view.counts[kind] = run.value(3 + kind).toLongLong();
        readStoredFindings(db, view.runId, [&view](const ReconciliationFinding &finding) {
            view.findings << finding;
            return view.findings.size() < kFindingRows;
        });
    }
    readStatementErrors(db, statementId, [&view](const StatementLineError &error) {
        view.errors.append(error);
        return view.errors.size() < kErrorRows;
    });
    view.drafts = loadMissingPaymentDrafts(db, statementId);
    return view;
}

} // namespace payops::console
