#include "sandbox.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "db/sqlscript.h"
#include "domain/money/duplicates/duplicatecount.h"

#include <QCoreApplication>
#include <QFile>

namespace payops {

namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Sandbox
{
    Q_DECLARE_TR_FUNCTIONS(payops::Sandbox)
};

} // namespace

void seedDemoData(const Dsn &dsn)
{
    QFile file(QStringLiteral(":/sql/demo/seed.sql"));
    if (!file.open(QIODevice::ReadOnly))
        throw db::Error(Sandbox::tr("the demo seed is missing from this build"));
    db::Connection connection(dsn, QStringLiteral("seed"));
    const QSqlDatabase db = connection.database();
    for (const QString &statement : db::splitSqlScript(QString::fromUtf8(file.readAll())))
        db::execDirect(db, statement);
}

SandboxStartResult startSandbox(LocalServer &server, int tcpPort, bool seedDemoData_,
                                const LocalServer::Progress &progress)
{
    server.start(tcpPort, progress);

    SandboxStartResult result;
    result.dsn = server.rootDsn(sandboxDatabaseName());
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("sandbox-admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE IF NOT EXISTS ") +
                                             db::quoteIdentifier(sandboxDatabaseName()) +
                                             QStringLiteral(" CHARACTER SET utf8mb4"));
    }
    bool needsSeed = false;
    {
        db::Connection connection(result.dsn, QStringLiteral("sandbox-migrate"));
        db::Migrator migrator(connection, checkMigrationRequirement);
        // A new sandbox starts at legacy, the incident's schema; one already moved to current
        // stays there.
        const auto level = migrator.currentLevel().value_or(db::SchemaLevel::Legacy);
        result.migrationsApplied = migrator.migrate(level, true, progress).applied;
        needsSeed = db::scalar(connection.database(),
                               QStringLiteral(
                                   "SELECT COUNT(*) FROM payops_meta WHERE name = 'demo_seeded'"))
                            .toInt() == 0 &&
                    db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders"))
                            .toInt() == 0;
    }
    if (seedDemoData_ && needsSeed) {
        if (progress)
            progress(Sandbox::tr("seeding demo data"));
        seedDemoData(result.dsn);
        result.seeded = true;
    }
    result.keys = ensureSandboxKeys(server.directory());
    db::Connection connection(result.dsn, QStringLiteral("sandbox-statements"));
    // A fresh seed has other payments (its times are relative to now): its statements too.
    result.demoStatements =
        ensureDemoStatements(connection.database(), server.directory(), result.seeded);
    return result;
}

} // namespace payops
