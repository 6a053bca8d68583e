#include "reconciliationview.h"

#include "db/connection.h"

#include <QSqlQuery>

namespace payops::console {
namespace {

std::optional<qint64> optionalInt(const QVariant &value)
{
    if (value.isNull())
        return std::nullopt;
    return value.toLongLong();
}

FindingKind kindFromName(const QString &name)
{
    for (int k = 0; k < kFindingKinds; ++k)
        if (findingKindName(static_cast<FindingKind>(k)) == name)
            return static_cast<FindingKind>(k);
    return FindingKind::MissingOurs;
}

} // namespace

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
        "SELECT id, finished_at, started_by FROM reconciliation_run WHERE statement_id = ? AND finished_at IS NOT NULL "
        "ORDER BY id DESC LIMIT 1"), {statementId});
    if (run.next()) {
        view.runId = run.value(0).toLongLong();
        view.reconciledAt = db::utcDateTime(run.value(1));
        view.reconciledBy = run.value(2).toString();
        // The statuses are not stored with a finding: the line's and the order's as they are.
        QSqlQuery findings = db::exec(db, QStringLiteral(
            "SELECT r.kind, r.pay_no, r.order_id, r.platform_amount_fen, r.our_amount_fen, r.line_no, l.status, o.status "
            "FROM reconciliation_result r "
            "LEFT JOIN platform_statement_line l ON l.statement_id = ? AND l.line_no = r.line_no "
            "LEFT JOIN orders o ON o.id = r.order_id "
            "WHERE r.run_id = ? ORDER BY r.id LIMIT %1").arg(kFindingRows), {statementId, view.runId});
        while (findings.next()) {
            ReconciliationFinding finding;
            finding.kind = kindFromName(findings.value(0).toString());
            finding.payNo = findings.value(1).toByteArray();
            finding.orderId = optionalInt(findings.value(2));
            finding.platformAmountFen = optionalInt(findings.value(3));
            finding.ourAmountFen = optionalInt(findings.value(4));
            finding.lineNo = optionalInt(findings.value(5));
            finding.platformStatus = findings.value(6).toString();
            finding.ourStatus = findings.value(7).toString();
            view.findings << finding;
        }
    }
    QSqlQuery errors = db::exec(db, QStringLiteral(
        "SELECT line_no, message FROM platform_statement_error WHERE statement_id = ? ORDER BY line_no, id LIMIT %1")
        .arg(kErrorRows), {statementId});
    while (errors.next())
        view.errors.append({errors.value(0).toLongLong(), errors.value(1).toString()});
    view.drafts = loadMissingPaymentDrafts(db, statementId);
    return view;
}

} // namespace payops::console
