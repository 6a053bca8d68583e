#pragma once

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>

namespace payops {

struct AuditEntry
{
    qint64 id = 0;
    QDateTime at; // UTC
    QString actor;
    QString action;
    QString target;
    QString reason;
    QString ticket;
    QString beforeJson;
    QString afterJson;
};

struct AuditFilter
{
    QString actor;  // substring; empty: any
    QString action; // prefix; empty: any
    QDateTime from; // invalid: open
    QDateTime to;   // invalid: open
};

// One page, newest first, starting below `beforeId` (0: from the newest). Keyset paging:
// a page costs the same at row 10 and at row 10 million. Throws db::Error.
QList<AuditEntry> loadAuditPage(const QSqlDatabase &db, const AuditFilter &filter, qint64 beforeId,
                                int pageSize);

// Writes every matching entry as CSV (RFC 4180) to `path`, oldest first, in pages. Returns
// the number written, or -1 when cancelled (the partial file is removed). Throws
// db::Error, or std::runtime_error when the file cannot be written.
qint64 exportAuditCsv(const QSqlDatabase &db, const AuditFilter &filter, const QString &path,
                      const std::atomic<bool> *cancel = nullptr,
                      const std::function<void(qint64)> &progress = {});

} // namespace payops
