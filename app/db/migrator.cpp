#include "migrator.h"

#include "connection.h"
#include "dberror.h"
#include "sqlscript.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSqlQuery>

#include <algorithm>

namespace payops::db {
namespace {

constexpr auto kMigrationsDir = ":/sql/migrations";

QString levelKey()
{
    return QStringLiteral("schema_level");
}

void writeMeta(const QSqlDatabase &db, const QString &name, const QString &value)
{
    exec(db,
         QStringLiteral("INSERT INTO payops_meta (name, value) VALUES (?, ?) "
                        "ON DUPLICATE KEY UPDATE value = VALUES(value)"),
         {name, value});
}

// Holds a named server lock for the life of the object so that two `payops migrate` runs
// against one database cannot interleave their DDL.
class MigrationLock final
{
public:
    MigrationLock(const QSqlDatabase &db, const QString &database)
        : m_db(db)
        , m_name(QStringLiteral("payops:migrate:") + database.left(40))
    {
        const QVariant got = scalar(m_db, QStringLiteral("SELECT GET_LOCK(?, 30)"), {m_name});
        if (got.toInt() != 1)
            throw Error(
                Migrator::tr(
                    "another payops migrate is running on database '%1'; try again when it ends")
                    .arg(database));
    }
    ~MigrationLock()
    {
        QSqlQuery release(m_db);
        release.prepare(QStringLiteral("SELECT RELEASE_LOCK(?)"));
        release.addBindValue(m_name);
        release.exec();
    }
    Q_DISABLE_COPY_MOVE(MigrationLock)

private:
    QSqlDatabase m_db;
    QString m_name;
};

} // namespace

std::optional<SchemaLevel> parseSchemaLevel(const QString &text)
{
    if (text == QLatin1String("legacy"))
        return SchemaLevel::Legacy;
    if (text == QLatin1String("current"))
        return SchemaLevel::Current;
    return std::nullopt;
}

QString schemaLevelName(SchemaLevel level)
{
    return level == SchemaLevel::Legacy ? QStringLiteral("legacy") : QStringLiteral("current");
}

std::optional<Migration> migrationFromFile(const QString &fileName, const QByteArray &script,
                                           bool mariaDb)
{
    static const QRegularExpression namePattern(
        QStringLiteral("^(\\d{4})_[a-z0-9_]+(\\.(mariadb|mysql))?\\.sql$"));
    const QString otherFlavour = mariaDb ? QStringLiteral("mysql") : QStringLiteral("mariadb");
    const auto match = namePattern.match(fileName);
    if (!match.hasMatch() || match.captured(3) == otherFlavour)
        return std::nullopt;

    Migration migration;
    migration.version = match.captured(1).toInt();
    migration.fileName = fileName;
    migration.script = script;
    migration.currentOnly =
        script.contains("\n-- level: current") || script.startsWith("-- level: current");
    static const QRegularExpression requirementLine(
        QStringLiteral("(?:^|\n)-- requires: ([a-z0-9-]+)"));
    migration.requirement = requirementLine.match(QString::fromUtf8(script)).captured(1);
    migration.checksum =
        QString::fromLatin1(QCryptographicHash::hash(script, QCryptographicHash::Sha256).toHex());
    return migration;
}

QList<Migration> bundledMigrations(bool mariaDb)
{
    QList<Migration> migrations;
    const QDir dir{QLatin1String(kMigrationsDir)};
    for (const QString &fileName : dir.entryList(QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(fileName));
        if (!file.open(QIODevice::ReadOnly))
            throw Error(Migrator::tr("cannot read bundled migration %1").arg(fileName));
        if (auto migration = migrationFromFile(fileName, file.readAll(), mariaDb))
            migrations << std::move(*migration);
    }
    return migrations;
}

Migrator::Migrator(Connection &connection, RequirementCheck check)
    : Migrator(connection, bundledMigrations(connection.isMariaDb()), std::move(check))
{
}

Migrator::Migrator(Connection &connection, QList<Migration> migrations, RequirementCheck check)
    : m_connection(connection)
    , m_migrations(std::move(migrations))
    , m_check(std::move(check))
{
    std::sort(m_migrations.begin(), m_migrations.end(),
              [](const Migration &a, const Migration &b) { return a.version < b.version; });
}

std::optional<SchemaLevel> Migrator::currentLevel()
{
    return parseSchemaLevel(readMeta(m_connection.database(), levelKey()));
}

void Migrator::verifyApplied(const QSqlDatabase &db)
{
    QHash<int, const Migration *> byVersion;
    for (const Migration &migration : m_migrations)
        byVersion.insert(migration.version, &migration);

    QSqlQuery applied = exec(
        db,
        QStringLiteral("SELECT version, name, checksum FROM schema_migrations ORDER BY version"));
    while (applied.next()) {
        const int version = applied.value(0).toInt();
        const QString name = applied.value(1).toString();
        const Migration *known = byVersion.value(version);
        if (!known)
            throw Error(Migrator::tr("migration %1 is applied to this database but unknown to this "
                                     "build of payops (the database is newer than this program)")
                            .arg(name));
        if (known->checksum != applied.value(2).toString())
            throw Error(
                Migrator::tr("migration %1 was changed after it was applied to this database "
                             "(checksum differs); restore the file or write a new migration")
                    .arg(name));
    }
}

void Migrator::apply(const QSqlDatabase &db, const Migration &migration)
{
    if (!migration.requirement.isEmpty()) {
        if (!m_check)
            throw Error(
                Migrator::tr("refusing %1: it requires '%2', which this program cannot check")
                    .arg(migration.fileName, migration.requirement));
        if (const QString unmet = m_check(db, migration.requirement); !unmet.isEmpty())
            throw Error(Migrator::tr("refusing %1: %2").arg(migration.fileName, unmet));
    }
    QString script = QString::fromUtf8(migration.script);
    script.replace(QStringLiteral("${database}"), quoteIdentifier(m_connection.dsn().database));
    // MySQL and MariaDB commit DDL implicitly, so a migration cannot be rolled back as a
    // whole; each one is small and recorded only after its last statement succeeded.
    for (const QString &statement : splitSqlScript(script)) {
        try {
            execDirect(db, statement);
        } catch (const Error &error) {
            throw error.within(Migrator::tr("migration %1 failed").arg(migration.fileName));
        }
    }
    exec(db,
         QStringLiteral("INSERT INTO schema_migrations (version, name, checksum, applied_by) "
                        "VALUES (?, ?, ?, CURRENT_USER())"),
         {migration.version, migration.fileName, migration.checksum});
}

MigrationOutcome Migrator::migrate(std::optional<SchemaLevel> target, bool markSandbox,
                                   const std::function<void(const QString &)> &progress)
{
    const QSqlDatabase db = m_connection.database();
    MigrationLock lock(db, m_connection.dsn().database);

    execDirect(db, QStringLiteral("CREATE TABLE IF NOT EXISTS schema_migrations ("
                                  " version INT NOT NULL,"
                                  " name VARCHAR(128) NOT NULL,"
                                  " checksum CHAR(64) NOT NULL,"
                                  " applied_by VARCHAR(128) NOT NULL DEFAULT '',"
                                  " applied_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),"
                                  " PRIMARY KEY (version)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"));
    verifyApplied(db);

    const std::optional<SchemaLevel> existing = currentLevel();
    const SchemaLevel level = target.value_or(existing.value_or(SchemaLevel::Current));
    if (existing == SchemaLevel::Current && level == SchemaLevel::Legacy)
        throw Error(Migrator::tr("this database is at level current; it cannot go back to legacy"));

    QList<int> done;
    QSqlQuery applied = exec(db, QStringLiteral("SELECT version FROM schema_migrations"));
    while (applied.next())
        done << applied.value(0).toInt();

    MigrationOutcome outcome;
    outcome.level = level;
    for (const Migration &migration : std::as_const(m_migrations)) {
        if (done.contains(migration.version))
            continue;
        if (migration.currentOnly && level == SchemaLevel::Legacy)
            continue;
        if (progress)
            progress(Migrator::tr("applying %1").arg(migration.fileName));
        apply(db, migration);
        outcome.applied << migration.fileName;
    }
    if (existing != level)
        writeMeta(db, levelKey(), schemaLevelName(level));
    if (markSandbox && !isSandboxDatabase(db)) {
        writeMeta(db, QStringLiteral("sandbox"), QStringLiteral("1"));
        outcome.sandboxMarked = true;
    }
    return outcome;
}

QString readMeta(const QSqlDatabase &db, const QString &name)
{
    try {
        return scalar(db, QStringLiteral("SELECT value FROM payops_meta WHERE name = ?"), {name})
            .toString();
    } catch (const Error &error) {
        if (error.serverCode() == 1146) // no such table: not a payops database yet
            return {};
        throw;
    }
}

bool isSandboxDatabase(const QSqlDatabase &db)
{
    return readMeta(db, QStringLiteral("sandbox")) == QLatin1String("1");
}

} // namespace payops::db
