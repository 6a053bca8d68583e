#pragma once

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>

namespace payops {

// Appends one entry. Who and when are set by the database (trigger ops_audit_log_chain):
// a client cannot claim to be someone else. Throws db::Error.
void appendAudit(const QSqlDatabase &db, const QString &action, const QString &target,
                 const QString &reason, const QString &ticket, const QString &beforeJson,
                 const QString &afterJson);
// The statement appendAudit runs (probePrivileges asks the server about it).
QString appendAuditStatement();

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
