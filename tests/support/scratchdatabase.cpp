#include "scratchdatabase.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "lab/localserver.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTest>
#include <QtGlobal>

namespace payops::test {
namespace {

QString randomSuffix()
{
    return QString::number(QRandomGenerator::global()->generate64() % 0xFFFFFFFFFFull, 36);
}

void adminExec(const QString &sql)
{
    db::Connection admin(serverDsn(), QStringLiteral("test-admin"));
    db::execDirect(admin.database(), sql);
}

} // namespace

Dsn serverDsn()
{
    return LocalServer(QStringLiteral(PAYOPS_TEST_SERVER_DIR)).rootDsn(QString());
}

ScratchDatabase::ScratchDatabase(const QString &prefix)
    : m_dsn(serverDsn().withDatabase(prefix + QLatin1Char('_') + randomSuffix()))
{
    adminExec(QStringLiteral("CREATE DATABASE ") + db::quoteIdentifier(m_dsn.database) +
              QStringLiteral(" CHARACTER SET utf8mb4"));
}

ScratchDatabase::~ScratchDatabase()
{
    try {
        // A query a test left running (a console worker finishing a long scan) would hold a
        // metadata lock and make DROP DATABASE wait for it.
        db::Connection admin(serverDsn(), QStringLiteral("test-admin"));
        QSqlQuery sessions =
            db::exec(admin.database(),
                     QStringLiteral("SELECT id FROM information_schema.PROCESSLIST WHERE db = ? "
                                    "AND id <> CONNECTION_ID()"),
                     {m_dsn.database});
        while (sessions.next()) {
            QSqlQuery kill(admin.database());
            kill.exec(QStringLiteral("KILL %1").arg(
                sessions.value(0).toLongLong())); // it may have ended meanwhile
        }
        db::execDirect(admin.database(), QStringLiteral("DROP DATABASE IF EXISTS ") +
                                             db::quoteIdentifier(m_dsn.database));
    } catch (const db::Error &error) {
        qWarning("could not drop scratch database %s: %s", qPrintable(m_dsn.database),
                 error.what());
    }
}

ScratchAccount::ScratchAccount(const QString &role, const QString &password)
    : m_user(QStringLiteral("u_") + randomSuffix())
    , m_password(password)
{
    adminExec(
        QStringLiteral("CREATE USER '%1'@'localhost' IDENTIFIED BY '%2'").arg(m_user, m_password));
    if (!role.isEmpty()) {
        adminExec(QStringLiteral("GRANT %1 TO '%2'@'localhost'").arg(role, m_user));
        adminExec(QStringLiteral("SET DEFAULT ROLE %1 FOR '%2'@'localhost'").arg(role, m_user));
    }
}

ScratchAccount::~ScratchAccount()
{
    try {
        adminExec(QStringLiteral("DROP USER IF EXISTS '%1'@'localhost'").arg(m_user));
    } catch (const db::Error &error) {
        qWarning("could not drop scratch account %s: %s", qPrintable(m_user), error.what());
    }
}

Dsn ScratchAccount::dsnFor(const QString &database) const
{
    Dsn dsn = serverDsn().withDatabase(database);
    dsn.user = m_user;
    dsn.password = m_password;
    return dsn;
}

QString refusal(const std::function<void()> &action)
{
    try {
        action();
    } catch (const db::Error &error) {
        return db::userMessage(error);
    }
    return QString();
}

QString cliPath()
{
    return QStringLiteral(PAYOPS_CLI_PATH);
}

CliRun runCli(const QStringList &arguments, const QMap<QString, QString> &environment)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("PAYOPS_DB"));
    env.remove(QStringLiteral("PAYOPS_DB_PASSWORD"));
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        env.insert(it.key(), it.value());
    process.setProcessEnvironment(env);
    process.start(cliPath(), arguments);
    if (!process.waitForFinished(300000))
        qFatal("payops %s did not finish", qPrintable(arguments.join(QLatin1Char(' '))));
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

void addSchemaLevelRows()
{
    QTest::addColumn<QString>("level");
    QTest::newRow("legacy") << QStringLiteral("legacy");
    QTest::newRow("current") << QStringLiteral("current");
}

} // namespace payops::test
