#include "databasesummary.h"

#include "db/connection.h"
#include "db/migrator.h"

#include <QSqlQuery>
#include <QStringList>

namespace payops::console {

DatabaseSummary loadDatabaseSummary(const QSqlDatabase &db)
{
    DatabaseSummary summary;
    QSqlQuery who = db::exec(db, QStringLiteral("SELECT VERSION(), CURRENT_USER()"));
    who.next();
    summary.serverVersion = who.value(0).toString();
    summary.currentUser = who.value(1).toString();
    if (!db.tables().contains(QStringLiteral("payops_meta")))
        return summary;
    summary.schemaLevel = db::scalar(db, QStringLiteral("SELECT value FROM payops_meta WHERE name = 'schema_level'")).toString();
    summary.sandbox = db::isSandboxDatabase(db);
    summary.recentOrdersByStatus = countRecentOrders(db, kRecentOrderHours * 3600);
    return summary;
}

QMap<QString, qint64> countRecentOrders(const QSqlDatabase &db, qint64 seconds)
{
    QMap<QString, qint64> counts;
    QString sql = QStringLiteral("SELECT status, COUNT(*) FROM orders GROUP BY status");
    QVariantList binds;
    if (seconds > 0) {
        // orders.status can hold only the states of order_state (a foreign key), and they are
        // few: naming them makes one range of the index per state.
        QStringList states;
        QSqlQuery names = db::exec(db, QStringLiteral("SELECT name FROM order_state"));
        while (names.next()) {
            states << QStringLiteral("?");
            binds << names.value(0).toString();
        }
        if (states.isEmpty())
            return counts;
        binds << seconds;
        sql = QStringLiteral("SELECT status, COUNT(*) FROM orders FORCE INDEX (idx_orders_status_created) "
                             "WHERE status IN (%1) AND created_at >= UTC_TIMESTAMP(3) - INTERVAL ? SECOND GROUP BY status")
                  .arg(states.join(QLatin1Char(',')));
    }
    QSqlQuery query = db::exec(db, sql, binds);
    while (query.next())
        counts.insert(query.value(0).toString(), query.value(1).toLongLong());
    return counts;
}

} // namespace payops::console
