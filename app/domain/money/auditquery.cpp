#include "auditquery.h"

#include "db/connection.h"
#include "domain/export/csvwriter.h"

#include <QStringList>

namespace payops {
namespace {

QString where(const AuditFilter &filter, QVariantList &binds)
{
    QStringList clauses{QStringLiteral("1 = 1")};
    if (!filter.actor.isEmpty()) {
        clauses << QStringLiteral("actor LIKE ?");
        binds << QLatin1Char('%') + filter.actor + QLatin1Char('%');
    }
    if (!filter.action.isEmpty()) {
        clauses << QStringLiteral("action LIKE ?");
        binds << filter.action + QLatin1Char('%');
    }
    if (filter.from.isValid()) {
        clauses << QStringLiteral("created_at >= ?");
        binds << filter.from.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    }
    if (filter.to.isValid()) {
        clauses << QStringLiteral("created_at < ?");
        binds << filter.to.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    }
    return clauses.join(QStringLiteral(" AND "));
}

QList<AuditEntry> readEntries(QSqlQuery &query)
{
    QList<AuditEntry> entries;
    while (query.next()) {
        AuditEntry entry;
        entry.id = query.value(0).toLongLong();
        entry.at = query.value(1).toDateTime();
        entry.at.setTimeSpec(Qt::UTC);
        entry.actor = query.value(2).toString();
        entry.action = query.value(3).toString();
        entry.target = query.value(4).toString();
        entry.reason = query.value(5).toString();
        entry.ticket = query.value(6).toString();
        entry.beforeJson = query.value(7).toString();
        entry.afterJson = query.value(8).toString();
        entries << entry;
    }
    return entries;
}

const QString kColumns = QStringLiteral(
    "id, created_at, actor, action, target, reason, ticket, before_json, after_json");

} // namespace

QList<AuditEntry> loadAuditPage(const QSqlDatabase &db, const AuditFilter &filter, qint64 beforeId,
                                int pageSize)
{
    QVariantList binds;
    QString sql =
        QStringLiteral("SELECT %1 FROM ops_audit_log WHERE %2").arg(kColumns, where(filter, binds));
    if (beforeId > 0) {
        sql += QStringLiteral(" AND id < ?");
        binds << beforeId;
    }
    sql += QStringLiteral(" ORDER BY id DESC LIMIT %1").arg(pageSize);
    QSqlQuery query = db::exec(db, sql, binds);
    return readEntries(query);
}

qint64 exportAuditCsv(const QSqlDatabase &db, const AuditFilter &filter, const QString &path,
                      const std::atomic<bool> *cancel, const std::function<void(qint64)> &progress)
{
    // Destroyed without commit() (cancelled, or a query failed), the writer leaves no file.
    CsvWriter csv(path);
    csv.writeRow({QStringLiteral("id"), QStringLiteral("created_at_utc"), QStringLiteral("actor"),
                  QStringLiteral("action"), QStringLiteral("target"), QStringLiteral("reason"),
                  QStringLiteral("ticket"), QStringLiteral("before_json"),
                  QStringLiteral("after_json")});
    qint64 written = 0;
    qint64 afterId = 0;
    while (true) {
        if (cancel && cancel->load())
            return -1;
        QVariantList binds;
        const QString sql =
            QStringLiteral(
                "SELECT %1 FROM ops_audit_log WHERE %2 AND id > ? ORDER BY id LIMIT 1000")
                .arg(kColumns, where(filter, binds));
        binds << afterId;
        QSqlQuery query = db::exec(db, sql, binds);
        const QList<AuditEntry> page = readEntries(query);
        if (page.isEmpty())
            break;
        for (const AuditEntry &entry : page)
            csv.writeRow({QString::number(entry.id), entry.at.toString(Qt::ISODateWithMs),
                          entry.actor, entry.action, entry.target, entry.reason, entry.ticket,
                          entry.beforeJson, entry.afterJson});
        written += page.size();
        afterId = page.last().id;
        if (progress)
            progress(written);
    }
    csv.commit();
    return written;
}

} // namespace payops
