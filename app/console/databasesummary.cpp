#include "databasesummary.h"

#include "db/connection.h"
#include "db/migrator.h"

#include <QSqlQuery>

namespace payops::console {

DatabaseSummary loadDatabaseSummary(const QSqlDatabase &db)
{
    DatabaseSummary summary;
    QSqlQuery who = db::exec(db, QStringLiteral("SELECT VERSION(), CURRENT_USER()"));
    who.next();
    summary.serverVersion = who.value(0).toString();
    summary.currentUser = who.value(1).toString();
    summary.schemaLevel = db::readMeta(db, QStringLiteral("schema_level"));
    summary.sandbox = db::isSandboxDatabase(db);
    return summary;
}

} // namespace payops::console
