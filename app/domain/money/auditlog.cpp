#include "auditlog.h"

#include "db/connection.h"

#include <QCoreApplication>

#include <algorithm>

namespace payops {

namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct AuditLog
{
    Q_DECLARE_TR_FUNCTIONS(payops::AuditLog)
};

// Migration 0024: the roles append through these, never by INSERT.
const QStringList kAuditProcedures = {QStringLiteral("ops_audit_append"),
                                      QStringLiteral("ops_audit_batch_open"),
                                      QStringLiteral("ops_audit_batch_append")};

} // namespace

void appendAudit(const QSqlDatabase &db, const QString &action, const QString &target,
                 const QString &reason, const QString &ticket, const QString &beforeJson,
                 const QString &afterJson)
{
    db::exec(db, QStringLiteral("CALL ops_audit_append(?, ?, ?, ?, ?, ?)"),
             {action.left(64), target.left(255), reason.left(255), ticket.left(64),
              beforeJson.isEmpty() ? QVariant() : QVariant(beforeJson),
              afterJson.isEmpty() ? QVariant() : QVariant(afterJson)});
}

void openAuditBatch(const QSqlDatabase &db)
{
    db::execDirect(db, QStringLiteral("CALL ops_audit_batch_open()"));
}

QString auditBatchInsert()
{
    return QStringLiteral("INSERT INTO ops_audit_batch (action, target, reason, ticket, "
                          "before_json, after_json) ");
}

void appendAuditBatch(const QSqlDatabase &db)
{
    db::execDirect(db, QStringLiteral("CALL ops_audit_batch_append()"));
}

bool mayAppendAudit(const QSqlDatabase &db)
{
    // The server lists in ROUTINES only the routines this account may execute or change.
    return db::scalar(db,
                      QStringLiteral("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE "
                                     "ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' "
                                     "AND ROUTINE_NAME IN ('%1')")
                          .arg(kAuditProcedures.join(QStringLiteral("', '"))))
               .toLongLong() == kAuditProcedures.size();
}

namespace {

// The one walk of the chain, for the whole log and for its newest entries alike. Reads the head
// first, then every entry from `newest` entries before it (all when 0): ids without gaps, each
// row_hash equal to the hash of its content, each prev_hash equal to the entry before's row_hash
// (the first entry's to the zero hash; a tail's first entry only anchors the next link), and
// the head naming the last entry and its hash.
AuditVerification walkChain(const QSqlDatabase &db, qint64 newest, const std::atomic<bool> *cancel,
                            const std::function<void(qint64 rows)> &progress)
{
    AuditVerification result;
    const auto broken = [&result](qint64 id, const QString &problem) {
        result.intact = false;
        result.firstBrokenId = id;
        result.problem = problem;
        return result;
    };
    QSqlQuery head =
        db::exec(db, QStringLiteral("SELECT last_id, last_hash FROM ops_audit_head WHERE id = 1"));
    if (!head.next())
        return broken(0, AuditLog::tr("the chain head is missing (ops_audit_head has no row)"));
    result.headId = head.value(0).toLongLong();
    const QString headHash = head.value(1).toString();
    const qint64 from = newest > 0 ? std::max<qint64>(1, result.headId - newest) : 1;
    // The hash is recomputed by the server with the trigger's own formula, so that the
    // check cannot drift from how rows are written.
    QSqlQuery rows =
        db::exec(db,
                 QStringLiteral("SELECT id, prev_hash, row_hash, SHA2(CONCAT_WS('|', prev_hash, "
                                "id, actor, action, target, reason, ticket, "
                                "COALESCE(before_json, ''), COALESCE(after_json, ''), "
                                "DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f')), 256) "
                                "FROM ops_audit_log WHERE id >= ? ORDER BY id"),
                 {from});
    qint64 expectedId = from;
    QString previousHash = from == 1 ? QString(64, QLatin1Char('0')) : QString();
    while (rows.next()) {
        if (cancel && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        const qint64 id = rows.value(0).toLongLong();
        if (id != expectedId)
            return broken(expectedId, AuditLog::tr("entry %1 is missing (the next entry is %2)")
                                          .arg(QString::number(expectedId), QString::number(id)));
        if (rows.value(2).toString() != rows.value(3).toString())
            return broken(
                id, AuditLog::tr("entry %1 does not match its hash (edited after it was written)")
                        .arg(id));
        if (!previousHash.isNull() && rows.value(1).toString() != previousHash)
            return broken(id, AuditLog::tr("entry %1 does not link to entry %2's hash")
                                  .arg(QString::number(id), QString::number(id - 1)));
        previousHash = rows.value(2).toString();
        ++result.rows;
        ++expectedId;
        if (progress && result.rows % 1000 == 0)
            progress(result.rows);
    }
    const qint64 lastId = expectedId - 1;
    if (result.headId != lastId || (!previousHash.isNull() && headHash != previousHash))
        return broken(
            result.headId,
            AuditLog::tr(
                "the chain head names entry %1 but the log ends at entry %2 (entries removed "
                "from the end?)")
                .arg(QString::number(result.headId), QString::number(lastId)));
    result.headHash = headHash;
    return result;
}

} // namespace

AuditVerification verifyAuditChain(const QSqlDatabase &db, const std::atomic<bool> *cancel,
                                   const std::function<void(qint64 rows)> &progress)
{
    return walkChain(db, 0, cancel, progress);
}

AuditVerification verifyAuditTail(const QSqlDatabase &db, qint64 newest)
{
    return walkChain(db, newest, nullptr, {});
}

} // namespace payops
