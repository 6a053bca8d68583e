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
    return summary;
}

} // namespace payops::console
