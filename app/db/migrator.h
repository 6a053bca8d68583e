#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace payops::db {

class Connection;

// legacy: the incident's schema, side effects without keys of their own.
// current: every side effect has its own idempotency key.
enum class SchemaLevel { Legacy, Current };
std::optional<SchemaLevel> parseSchemaLevel(const QString &text);
QString schemaLevelName(SchemaLevel level);

struct Migration
{
    int version = 0;
    QString fileName;         // e.g. 0001_base.sql, as shown to users
    bool currentOnly = false; // "-- level: current"
    QString requirement; // "-- requires: NAME": a condition on the data, checked before it runs
    QByteArray script;
    QString checksum; // SHA-256 of script, hex
};

// The migrations this build carries (sql/migrations, compiled in), for one server flavour:
// files named NNNN_name.mariadb.sql or NNNN_name.mysql.sql are taken for that flavour only.
QList<Migration> bundledMigrations(bool mariaDb);
// One migration file as bundledMigrations reads it: the version from its name, the level and
// requirement from its comment lines, the checksum of its bytes. nullopt for a name that is
// not a migration, or one of the other server flavour.
std::optional<Migration> migrationFromFile(const QString &fileName, const QByteArray &script,
                                           bool mariaDb);

struct MigrationOutcome
{
    QStringList applied; // file names, in order
    SchemaLevel level = SchemaLevel::Current;
    bool sandboxMarked = false;
};

// Checks a migration's requirement on the data; returns why it is not met, or an empty
// string. The conditions are business rules (e.g. no live duplicates before the side-effect
// keys), so the domain layer supplies them.
using RequirementCheck = std::function<QString(const QSqlDatabase &db, const QString &requirement)>;

// Applies pending migrations in version order and records each in schema_migrations with its
// checksum. Re-running changes nothing. Throws db::Error when a migration applied earlier
// has changed, when the target level is lower than the database's, or when a requirement is
// not met (or there is no check to tell).
// When no level is asked for, an existing database keeps its level and a new one gets current.
class Migrator final
{
    Q_DECLARE_TR_FUNCTIONS(payops::db::Migrator)

public:
    explicit Migrator(Connection &connection, RequirementCheck check = {});
    // Tests give their own list to prove that a changed migration is refused.
    Migrator(Connection &connection, QList<Migration> migrations, RequirementCheck check = {});

    MigrationOutcome migrate(std::optional<SchemaLevel> target, bool markSandbox,
                             const std::function<void(const QString &)> &progress = {});

    // The level recorded in the database, or nullopt for a database payops never migrated.
    std::optional<SchemaLevel> currentLevel();

private:
    void verifyApplied(const QSqlDatabase &db);
    void apply(const QSqlDatabase &db, const Migration &migration);

    Connection &m_connection;
    QList<Migration> m_migrations;
    RequirementCheck m_check;
};

// A value of payops_meta; empty when it has none or the database has no payops_meta yet. One
// primary-key read: not QSqlDatabase::tables(), which lists every table through
// information_schema, a cost a console refreshing every second should not put on a server with
// thousands of tables. Throws Error.
QString readMeta(const QSqlDatabase &db, const QString &name);

// Reads payops_meta: true when `payops migrate --sandbox` or `payops sandbox` marked it.
bool isSandboxDatabase(const QSqlDatabase &db);

} // namespace payops::db
