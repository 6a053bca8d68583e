#include "db/connection.h"
#include "db/migrator.h"
#include "domain/localserver.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <csignal>

using namespace payops;

namespace {

test::CliRun sandbox(const QString &action, const QString &dir, const QStringList &extra = {})
{
    return test::runCli(QStringList{QStringLiteral("sandbox"), action, QStringLiteral("--dir"), dir} + extra);
}

QString lastLine(const QString &text)
{
    return text.trimmed().split(QLatin1Char('\n')).last();
}

} // namespace

class TestSandbox final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // A short path: unix socket paths are limited to about 100 bytes.
        m_dir = std::make_unique<QTemporaryDir>(QStringLiteral("/tmp/payops-sbx-XXXXXX"));
        QVERIFY(m_dir->isValid());
    }

    void cleanupTestCase()
    {
        LocalServer(m_dir->path()).stop();
    }

    void startSeedsAndPrintsTheDsn()
    {
        const test::CliRun start = sandbox(QStringLiteral("start"), m_dir->path());
        QVERIFY2(start.exitCode == 0, qPrintable(start.err + start.out));
        QString error;
        const auto dsn = Dsn::parse(lastLine(start.out), &error);
        QVERIFY2(dsn, qPrintable(error + QStringLiteral(" in: ") + start.out));
        QCOMPARE(dsn->socket, m_dir->path() + QStringLiteral("/mysqld.sock"));

        db::Connection connection(*dsn, QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QVERIFY(db::isSandboxDatabase(db));
        QCOMPARE(db::Migrator(connection).currentLevel(), std::optional(db::SchemaLevel::Legacy));
        QVERIFY(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders")).toInt() >= 1000);

        // No TCP unless asked for.
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT @@skip_networking")).toInt(), 1);
        m_dsn = *dsn;
    }

    void startAgainIsIdempotent()
    {
        const qint64 pidBefore = LocalServer(m_dir->path()).status().pid;
        QVERIFY(pidBefore > 0);
        const test::CliRun again = sandbox(QStringLiteral("start"), m_dir->path());
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(lastLine(again.out), m_dsn.toString());
        QVERIFY2(!again.out.contains(QStringLiteral("demo data loaded")), "seeded twice");
        QCOMPARE(LocalServer(m_dir->path()).status().pid, pidBefore);

        const test::CliRun status = sandbox(QStringLiteral("status"), m_dir->path());
        QCOMPARE(status.exitCode, 0);
        QVERIFY(status.out.startsWith(QStringLiteral("running (pid %1)").arg(pidBefore)));
    }

    void recoversAfterKillNine()
    {
        qint64 orders = 0;
        {
            db::Connection connection(m_dsn, QStringLiteral("t"));
            orders = db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders")).toLongLong();
        }
        const qint64 pid = LocalServer(m_dir->path()).status().pid;
        QVERIFY(pid > 0);
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(LocalServer(m_dir->path()).status().state != LocalServer::State::Running, 10000);
        QVERIFY(QFile::exists(m_dir->path() + QStringLiteral("/mysqld.pid")));

        const test::CliRun stale = sandbox(QStringLiteral("status"), m_dir->path());
        QCOMPARE(stale.exitCode, 1);
        QVERIFY2(stale.out.contains(QStringLiteral("pid %1 is not running").arg(pid)), qPrintable(stale.out));

        const test::CliRun restart = sandbox(QStringLiteral("start"), m_dir->path());
        QVERIFY2(restart.exitCode == 0, qPrintable(restart.err + restart.out));
        QVERIFY2(restart.out.contains(QStringLiteral("recovering")), qPrintable(restart.out));
        db::Connection connection(m_dsn, QStringLiteral("t"));
        QCOMPARE(db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders")).toLongLong(), orders);
    }

    void stopStopsCleanly()
    {
        const test::CliRun stop = sandbox(QStringLiteral("stop"), m_dir->path());
        QVERIFY2(stop.exitCode == 0, qPrintable(stop.err));
        QVERIFY(stop.out.contains(QStringLiteral("stopped")));
        QCOMPARE(LocalServer(m_dir->path()).status().state, LocalServer::State::Stopped);
        QVERIFY(!QFile::exists(m_dir->path() + QStringLiteral("/mysqld.sock")));
        const test::CliRun status = sandbox(QStringLiteral("status"), m_dir->path());
        QCOMPARE(status.exitCode, 1);
        QVERIFY(status.out.startsWith(QStringLiteral("stopped")));
        const test::CliRun stopAgain = sandbox(QStringLiteral("stop"), m_dir->path());
        QCOMPARE(stopAgain.exitCode, 0);
        QVERIFY(stopAgain.out.contains(QStringLiteral("was not running")));
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    Dsn m_dsn;
};

PAYOPS_TEST_MAIN_CORE(TestSandbox)
#include "tst_sandbox.moc"
