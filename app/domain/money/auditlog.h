#pragma once

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>

namespace payops {

// Appends one entry (procedure ops_audit_append). Who and when are set by the database: a
// client cannot claim to be someone else. Throws db::Error.
void appendAudit(const QSqlDatabase &db, const QString &action, const QString &target,
                 const QString &reason, const QString &ticket, const QString &beforeJson,
                 const QString &afterJson);

// Many entries, chained in one statement that moves the chain's head once: open the batch,
// fill it with statements that begin with auditBatchInsert() (INSERT ... VALUES or
// INSERT ... SELECT; entries are chained in the order they were added), then append it, all in
// the caller's transaction. Throw db::Error.
void openAuditBatch(const QSqlDatabase &db);
QString auditBatchInsert();
void appendAuditBatch(const QSqlDatabase &db);

// Whether this account may append entries (EXECUTE on the audit procedures): what
// probePrivileges and the mapped compensation's preflight ask.
bool mayAppendAudit(const QSqlDatabase &db);

struct AuditVerification
{
    bool intact = true;
    qint64 rows = 0;          // entries checked
    qint64 headId = 0;        // the last entry the head names (0: an empty log)
    qint64 firstBrokenId = 0; // 0 when intact
    QString problem;          // what is wrong with that row
    QString headHash;         // the chain's last hash: keep it somewhere else to compare later
    bool cancelled = false;
};

// Walks the chain in id order: ids without gaps, each prev_hash equal to the row before's
// row_hash, each row_hash equal to the hash of its content, and the head pointing at the
// last row. Stops at the first broken row. Throws db::Error.
AuditVerification verifyAuditChain(const QSqlDatabase &db,
                                   const std::atomic<bool> *cancel = nullptr,
                                   const std::function<void(qint64 rows)> &progress = {});
// The same checks over the newest `newest` entries only, linked from the one before them: what
// a quick look can afford (the posture); an edit further back is verifyAuditChain's to find.
AuditVerification verifyAuditTail(const QSqlDatabase &db, qint64 newest);

} // namespace payops
