#include "demodatabase.h"

#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/sandbox.h"

namespace payops::test {

std::unique_ptr<ScratchDatabase> demoDatabase()
{
    auto scratch = std::make_unique<ScratchDatabase>();
    {
        db::Connection connection(scratch->dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
    }
    seedDemoData(scratch->dsn());
    return scratch;
}

qint64 count(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("count"));
    return db::scalar(connection.database(), sql).toLongLong();
}

} // namespace payops::test
