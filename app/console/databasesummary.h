#pragma once

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
};

// Runs on a worker thread. Throws db::Error.
DatabaseSummary loadDatabaseSummary(const QSqlDatabase &db);

} // namespace payops::console
