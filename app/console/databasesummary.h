#pragma once

#include <QMap>
#include <QSqlDatabase>
#include <QString>

namespace payops::console {

// What the console shows of a database the moment it connects.
struct DatabaseSummary
{
    QString serverVersion;
    QString currentUser;
    QString schemaLevel; // empty when payops never migrated it
    bool sandbox = false;
    // Orders created in the last kRecentOrderHours, by their status now. Not all orders: on a
    // production database that count reads every order, and the overview asks every few seconds.
    QMap<QString, qint64> recentOrdersByStatus;
};

constexpr int kRecentOrderHours = 1;

// Orders created in the last `seconds`, by status now, through idx_orders_status_created (one
// range per state): what it reads grows with the window's orders, not the table's. 0 seconds
// counts every order, which only a person may ask for. Throws db::Error.
QMap<QString, qint64> countRecentOrders(const QSqlDatabase &db, qint64 seconds);

// Runs on a worker thread. Throws db::Error.
DatabaseSummary loadDatabaseSummary(const QSqlDatabase &db);

} // namespace payops::console
