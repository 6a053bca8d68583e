#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"

namespace payops::cli {
namespace {

class MigrateCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::MigrateCommand)

public:
    MigrateCommand()
        : Command(QStringLiteral("migrate"),
                  tr("Create or upgrade the payops schema in a database."),
                  QStringLiteral("--db DSN [--level legacy|current] [--sandbox]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(
            {QStringLiteral("level"),
             tr("legacy: the incident's schema (side effects without keys of their own); "
                "current: every side effect keyed. Default: the database's level, "
                "current for a new one."),
             QStringLiteral("level")});
        parser.addOption(
            {QStringLiteral("sandbox"),
             tr("Mark the database as a sandbox (needed by the unsafe demo handler).")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        std::optional<db::SchemaLevel> level;
        if (parser.isSet(QStringLiteral("level"))) {
            level = db::parseSchemaLevel(parser.value(QStringLiteral("level")));
            if (!level)
                return fail(UsageOrConnection, tr("--level must be legacy or current, not '%1'")
                                                   .arg(parser.value(QStringLiteral("level"))));
        }
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        std::unique_ptr<db::Connection> connection;
        try {
            connection = std::make_unique<db::Connection>(*dsn, QStringLiteral("migrate"));
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
        try {
            db::Migrator migrator(*connection, checkMigrationRequirement);
            const auto outcome = migrator.migrate(level, parser.isSet(QStringLiteral("sandbox")),
                                                  [this](const QString &line) { say(line); });
            if (outcome.applied.isEmpty())
                say(tr("%1 is up to date at level %2")
                        .arg(dsn->database, db::schemaLevelName(outcome.level)));
            else
                say(tr("applied %1 migration(s); %2 is at level %3")
                        .arg(QString::number(outcome.applied.size()), dsn->database,
                             db::schemaLevelName(outcome.level)));
            if (outcome.sandboxMarked)
                say(tr("%1 is marked as a sandbox").arg(dsn->database));
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeMigrateCommand()
{
    return std::make_unique<MigrateCommand>();
}

} // namespace payops::cli
