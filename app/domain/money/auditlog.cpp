#include "auditlog.h"

#include "db/connection.h"

#include <QCoreApplication>

namespace payops {

namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct AuditLog
{
    Q_DECLARE_TR_FUNCTIONS(payops::AuditLog)
};

const QString kAppendAudit = QStringLiteral(
    "INSERT INTO ops_audit_log (action, target, reason, ticket, before_json, after_json) VALUES (?, ?, ?, ?, ?, ?)");

} // namespace

QString appendAuditStatement()
{
    return kAppendAudit;
}

void appendAudit(const QSqlDatabase &db, const QString &action, const QString &target, const QString &reason,
                 const QString &ticket, const QString &beforeJson, const QString &afterJson)
{
    db::exec(db, kAppendAudit,
             {action.left(64), target.left(255), reason.left(255), ticket.left(64),
              beforeJson.isEmpty() ? QVariant() : QVariant(beforeJson),
              afterJson.isEmpty() ? QVariant() : QVariant(afterJson)});
}

AuditVerification verifyAuditChain(const QSqlDatabase &db, const std::atomic<bool> *cancel,
                                   const std::function<void(qint64 rows)> &progress)
{
    AuditVerification result;
    // The hash is recomputed by the server with the trigger's own formula, so that the
    // check cannot drift from how rows are written.
    QSqlQuery rows = db::exec(db, QStringLiteral(
        "SELECT id, prev_hash, row_hash, SHA2(CONCAT_WS('|', prev_hash, id, actor, action, target, reason, ticket, "
        "COALESCE(before_json, ''), COALESCE(after_json, ''), DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f')), 256) "
        "FROM ops_audit_log ORDER BY id"));
    const auto broken = [&result](qint64 id, const QString &problem) {
        result.intact = false;
        result.firstBrokenId = id;
        result.problem = problem;
        return result;
    };
    qint64 expectedId = 1;
    QString previousHash = QString(64, QLatin1Char('0'));
    while (rows.next()) {
        if (cancel && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        const qint64 id = rows.value(0).toLongLong();
        if (id != expectedId)
            return broken(expectedId, AuditLog::tr("row %1 is missing (next row is %2)").arg(expectedId).arg(id));
        if (rows.value(1).toString() != previousHash)
            return broken(id, AuditLog::tr("prev_hash does not match row %1's hash").arg(id - 1));
        if (rows.value(2).toString() != rows.value(3).toString())
            return broken(id, AuditLog::tr("content does not match its hash (edited after it was written)"));
        previousHash = rows.value(2).toString();
        ++result.rows;
        ++expectedId;
        if (progress && result.rows % 1000 == 0)
            progress(result.rows);
    }
    QSqlQuery head = db::exec(db, QStringLiteral("SELECT last_id, last_hash FROM ops_audit_head WHERE id = 1"));
    if (!head.next())
        return broken(0, AuditLog::tr("the chain head is missing"));
    if (head.value(0).toLongLong() != result.rows || head.value(1).toString() != previousHash)
        return broken(head.value(0).toLongLong(),
                      AuditLog::tr("the chain head names row %1 but the log ends at row %2 (rows removed from the "
                                   "end?)")
                          .arg(head.value(0).toLongLong()).arg(result.rows));
    result.headHash = previousHash;
    return result;
}

} // namespace payops
