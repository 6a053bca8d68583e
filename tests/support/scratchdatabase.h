#pragma once

#include "db/dsn.h"

#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>

namespace payops::test {

// root on the server the test run shares (no database selected).
Dsn serverDsn();

// A database of its own for one test case, dropped again when the object goes.
class ScratchDatabase final
{
public:
    explicit ScratchDatabase(const QString &prefix = QStringLiteral("t"));
    ~ScratchDatabase();
    Q_DISABLE_COPY_MOVE(ScratchDatabase)

    const Dsn &dsn() const { return m_dsn; }
    const QString &name() const { return m_dsn.database; }

private:
    Dsn m_dsn;
};

// A server-wide account for role tests; dropped again when the object goes.
class ScratchAccount final
{
public:
    // Creates user NAME@localhost with the password and grants it the role as default role.
    ScratchAccount(const QString &role, const QString &password = QStringLiteral("s3cret-pw"));
    ~ScratchAccount();
    Q_DISABLE_COPY_MOVE(ScratchAccount)

    const QString &user() const { return m_user; }
    const QString &password() const { return m_password; }
    // DSN of this account on a database.
    Dsn dsnFor(const QString &database) const;

private:
    QString m_user;
    QString m_password;
};

// A _data() function's column "level" with one row per schema level, legacy and current: the
// roles' grants must work at both.
void addSchemaLevelRows();

// The message of the db::Error that `action` throws; empty when it throws none.
QString refusal(const std::function<void()> &action);

QString cliPath();

struct CliRun
{
    int exitCode = -1;
    QString out;
    QString err;
};

// Runs the payops binary with PAYOPS_DB and PAYOPS_DB_PASSWORD cleared, plus `environment`.
CliRun runCli(const QStringList &arguments, const QMap<QString, QString> &environment = {});

} // namespace payops::test
