#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "lab/demostatements.h"
#include "lab/localserver.h"
#include "lab/sandboxkeys.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "topology.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

using namespace payops;

namespace {

test::CliRun sandbox(const QString &action, const QString &dir, const QStringList &extra = {})
{
    return test::runCli(
        QStringList{QStringLiteral("sandbox"), action, QStringLiteral("--dir"), dir} + extra);
}

QString lastLine(const QString &text)
{
    return text.trimmed().split(QLatin1Char('\n')).last();
}

// The permission bits, as ls shows them.
int mode(const QString &path)
{
    struct stat info
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &info) == 0 ? int(info.st_mode & 07777) : -1;
}

// The mariadb client connecting through `socket` as `account`, run as the OS user `osUser`
// (empty: the user running the test). Returns its exit code; *output its messages.
int clientAs(const QString &osUser, const QString &socket, const QString &account, QString *output)
{
    const QString client = QStandardPaths::findExecutable(QStringLiteral("mariadb"));
    QStringList command{client,
                        QStringLiteral("--no-defaults"),
                        QStringLiteral("--socket=") + socket,
                        QStringLiteral("--user=") + account,
                        QStringLiteral("-e"),
                        QStringLiteral("SELECT 1")};
    if (!osUser.isEmpty())
        command =
            QStringList{QStringLiteral("--reuid=") + osUser, QStringLiteral("--regid=nogroup"),
                        QStringLiteral("--clear-groups"), QStringLiteral("--")} +
            command;
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(osUser.isEmpty() ? command.takeFirst() : QStringLiteral("setpriv"), command);
    process.waitForFinished(30000);
    *output = QString::fromLocal8Bit(process.readAll());
    return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
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

    void cleanupTestCase() { LocalServer(m_dir->path()).stop(); }

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
        m_firstStart = start.out;
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

    // The platforms' test keys: made by the first start, private, printed with the flags that
    // give them to payops-callbackd, and the same after a restart.
    void keysArePrivateAndKeptOnRestart()
    {
        const SandboxKeys keys(m_dir->path() + QStringLiteral("/keys"));
        QCOMPARE(mode(keys.directory), 0700);
        QHash<QString, QByteArray> contents;
        for (const QString &path : keys.files()) {
            QCOMPARE(mode(path), 0600);
            QFile file(path);
            QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
            contents.insert(path, file.readAll());
            QVERIFY2(!contents.value(path).isEmpty(), qPrintable(path));
        }
        QCOMPARE(contents.value(keys.wechatApiV3Key).size(), 32);
        QVERIFY(contents.value(keys.wechatPlatformPrivateKey).startsWith("-----BEGIN PRIVATE KEY"));
        QVERIFY(contents.value(keys.alipayPublicKey).startsWith("-----BEGIN PUBLIC KEY"));
        const PlatformKeys ids = PlatformKeys::read(keys.directory);
        QCOMPARE(ids.wechatSerial.size(), 40);
        QVERIFY2(m_firstStart.contains(
                     QStringLiteral("--wechatpay-platform-key %1=%2")
                         .arg(QString::fromLatin1(ids.wechatSerial), keys.wechatPlatformPublicKey)),
                 qPrintable(m_firstStart));
        QVERIFY(
            m_firstStart.contains(QStringLiteral("--alipay-public-key ") + keys.alipayPublicKey));
        QVERIFY(m_firstStart.contains(QStringLiteral("--wechatpay-apiv3-key-file ") +
                                      keys.wechatApiV3Key));

        const test::CliRun again = sandbox(QStringLiteral("start"), m_dir->path());
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(lastLine(again.out), m_dsn.toString());
        for (const QString &path : keys.files()) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QVERIFY2(file.readAll() == contents.value(path),
                     qPrintable(path + QStringLiteral(" changed")));
        }
    }

    // The demo statements reconcile on the sandbox with the findings planted in them, and
    // nothing else (lab/demostatements.h).
    void demoStatementsReconcileWithThePlantedFindings_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("findings");
        const QStringList planted{QStringLiteral("amount_mismatch"), QStringLiteral("missing_ours"),
                                  QStringLiteral("missing_platform")};
        QTest::newRow("wechat") << QStringLiteral("wechatpay-demo-bill.csv")
                                << QStringLiteral("wechat") << planted;
        QTest::newRow("alipay") << QStringLiteral("alipay-demo-business-detail.csv")
                                << QStringLiteral("alipay")
                                << planted + QStringList{QStringLiteral("double_payment")};
    }

    void demoStatementsReconcileWithThePlantedFindings()
    {
        QFETCH(QString, file);
        QFETCH(QString, format);
        QFETCH(QStringList, findings);
        const QString path = m_dir->path() + QStringLiteral("/statements/") + file;
        QVERIFY2(m_firstStart.contains(path), qPrintable(m_firstStart));
        const test::CliRun reconcile =
            test::runCli({QStringLiteral("reconcile"), QStringLiteral("--db"), m_dsn.toString(),
                          QStringLiteral("--statement"), path, QStringLiteral("--json")});
        QVERIFY2(reconcile.exitCode == 1, qPrintable(reconcile.err + reconcile.out));
        const QJsonObject result = QJsonDocument::fromJson(reconcile.out.toUtf8()).object();
        QCOMPARE(result.value(QStringLiteral("format")).toString(), format);
        QVERIFY(result.value(QStringLiteral("detected")).toBool());
        QCOMPARE(result.value(QStringLiteral("errors")).toArray().size(), 0);
        QVERIFY(result.value(QStringLiteral("lines")).toInteger() > 50);
        QStringList kinds;
        for (const QJsonValue &finding : result.value(QStringLiteral("findings")).toArray())
            kinds << finding.toObject().value(QStringLiteral("kind")).toString();
        kinds.sort();
        findings.sort();
        QCOMPARE(kinds, findings);

        // The console offers them on this sandbox.
        db::Connection connection(m_dsn, QStringLiteral("t"));
        QVERIFY(demoStatementFiles(connection.database()).contains(path));
    }

    // Kept as they are on a restart; written again for a fresh seed, whose payments are others.
    void demoStatementsAreRewrittenForAFreshSeedOnly()
    {
        const QString bill = m_dir->path() + QStringLiteral("/statements/wechatpay-demo-bill.csv");
        QFile file(bill);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray written = file.readAll();
        file.close();
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write("edited\n");
        file.close();
        const auto contents = [&bill] {
            QFile read(bill);
            return read.open(QIODevice::ReadOnly) ? read.readAll() : QByteArray();
        };
        db::Connection connection(m_dsn, QStringLiteral("t"));
        ensureDemoStatements(connection.database(), m_dir->path());
        QCOMPARE(contents(), QByteArray("edited\n"));
        ensureDemoStatements(connection.database(), m_dir->path(), true);
        QCOMPARE(contents(), written);
    }

    // Whoever reaches the server acts as the user who started it: the directory keeps other
    // users from its socket, and the server writes files only inside it.
    void onlyItsOwnerReachesIt()
    {
        QCOMPARE(mode(m_dir->path()), 0700);
        db::Connection connection(m_dsn, QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT @@secure_file_priv")).toString(),
                 m_dir->path() + QStringLiteral("/files/"));
        const QString outside = m_dir->path() + QStringLiteral("-outfile");
        QFile::remove(outside);
        try {
            db::execDirect(db, QStringLiteral("SELECT 1 INTO OUTFILE '%1'").arg(outside));
            QFAIL("INTO OUTFILE wrote outside the sandbox's files folder");
        } catch (const db::Error &) {
        }
        QVERIFY(!QFile::exists(outside));
        try {
            db::execDirect(db, QStringLiteral("SELECT 1 INTO OUTFILE '/tmp/x'"));
            QFAIL("INTO OUTFILE wrote to /tmp");
        } catch (const db::Error &) {
        }

        if (QStandardPaths::findExecutable(QStringLiteral("mariadb")).isEmpty())
            QSKIP("the mariadb client is not installed: cannot try the socket as another OS user");
        if (::geteuid() != 0)
            QSKIP("not root: cannot run a connection attempt as another OS user (nobody)");
        QString output;
        QCOMPARE(clientAs(QString(), m_dsn.socket, m_dsn.user, &output), 0); // the owner gets in
        QVERIFY2(
            clientAs(QStringLiteral("nobody"), m_dsn.socket, QStringLiteral("root"), &output) != 0,
            qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("Can't connect")), qPrintable(output));
        QVERIFY2(clientAs(QStringLiteral("nobody"), m_dsn.socket, QStringLiteral("nobody"),
                          &output) != 0,
                 qPrintable(output));

        // Even with the directory opened up, the socket admits no one but its owner as root.
        QVERIFY(QFile::setPermissions(m_dir->path(),
                                      QFile::permissions(m_dir->path()) | QFile::ExeOther));
        const int asNobody =
            clientAs(QStringLiteral("nobody"), m_dsn.socket, QStringLiteral("root"), &output);
        QVERIFY(QFile::setPermissions(m_dir->path(),
                                      QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        QVERIFY2(asNobody != 0, qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("Access denied")), qPrintable(output));
    }

    void recoversAfterKillNine()
    {
        qint64 orders = 0;
        {
            db::Connection connection(m_dsn, QStringLiteral("t"));
            orders =
                db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders"))
                    .toLongLong();
        }
        const qint64 pid = LocalServer(m_dir->path()).status().pid;
        QVERIFY(pid > 0);
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(
            LocalServer(m_dir->path()).status().state != LocalServer::State::Running, 10000);
        QVERIFY(QFile::exists(m_dir->path() + QStringLiteral("/mysqld.pid")));

        const test::CliRun stale = sandbox(QStringLiteral("status"), m_dir->path());
        QCOMPARE(stale.exitCode, 1);
        QVERIFY2(stale.out.contains(QStringLiteral("pid %1 is not running").arg(pid)),
                 qPrintable(stale.out));

        const test::CliRun restart = sandbox(QStringLiteral("start"), m_dir->path());
        QVERIFY2(restart.exitCode == 0, qPrintable(restart.err + restart.out));
        QVERIFY2(restart.out.contains(QStringLiteral("recovering")), qPrintable(restart.out));
        db::Connection connection(m_dsn, QStringLiteral("t"));
        QCOMPARE(db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders"))
                     .toLongLong(),
                 orders);
    }

    // root over TCP needs the generated password, printed like the DSN and kept 0600.
    void tcpNeedsThePassword()
    {
        QVERIFY(sandbox(QStringLiteral("stop"), m_dir->path()).exitCode == 0);
        const int port = testkit::freeLoopbackPort();
        QVERIFY(port > 0);
        const test::CliRun start = sandbox(QStringLiteral("start"), m_dir->path(),
                                           {QStringLiteral("--port"), QString::number(port)});
        QVERIFY2(start.exitCode == 0, qPrintable(start.err + start.out));
        const QStringList lines = start.out.trimmed().split(QLatin1Char('\n'));
        QVERIFY(lines.size() >= 2);
        QString error;
        const auto tcp = Dsn::parse(lines.at(lines.size() - 2), &error);
        QVERIFY2(tcp, qPrintable(error + QStringLiteral(" in: ") + start.out));
        QCOMPARE(tcp->host, QStringLiteral("127.0.0.1"));
        QCOMPARE(tcp->port, port);
        QCOMPARE(tcp->user, QStringLiteral("root"));
        QVERIFY(tcp->password.size() >= 16);
        const QString passwordFile = m_dir->path() + QStringLiteral("/tcp-root-password");
        QCOMPARE(mode(passwordFile), 0600);
        QFile file(passwordFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromLatin1(file.readAll().trimmed()), tcp->password);

        {
            db::Connection withPassword(*tcp, QStringLiteral("t"));
            QCOMPARE(db::scalar(withPassword.database(), QStringLiteral("SELECT CURRENT_USER()"))
                         .toString(),
                     QStringLiteral("root@127.0.0.1"));
        }
        for (const QString &wrong : {QString(), QStringLiteral("wrong")}) {
            Dsn without = *tcp;
            without.password = wrong;
            try {
                db::Connection refused(without, QStringLiteral("t"));
                QFAIL(qPrintable(
                    QStringLiteral("root over TCP got in with the password '%1'").arg(wrong)));
            } catch (const db::Error &) {
            }
        }
        const test::CliRun status = sandbox(QStringLiteral("status"), m_dir->path());
        QCOMPARE(status.exitCode, 0);
        QVERIFY2(status.out.contains(tcp->toString(true)), qPrintable(status.out));
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

    // A sandbox an older payops made (0755, root without a password on the socket and over
    // TCP) is secured by its next start.
    void securesAnOlderSandbox()
    {
        QTemporaryDir older(QStringLiteral("/tmp/payops-old-XXXXXX"));
        QVERIFY(older.isValid());
        QVERIFY(QDir().mkpath(older.path() + QStringLiteral("/tmp")));
        QProcess install;
        install.setProcessChannelMode(QProcess::MergedChannels);
        QStringList args{QStringLiteral("--no-defaults"),
                         QStringLiteral("--datadir=") + older.path() + QStringLiteral("/data"),
                         QStringLiteral("--tmpdir=") + older.path() + QStringLiteral("/tmp"),
                         QStringLiteral("--auth-root-authentication-method=normal"),
                         QStringLiteral("--skip-test-db")};
        if (::geteuid() == 0)
            args << QStringLiteral("--user=root");
        install.start(QStandardPaths::findExecutable(
                          QStringLiteral("mariadb-install-db"),
                          {QStringLiteral("/usr/bin"), QStringLiteral("/usr/sbin")}),
                      args);
        QVERIFY(install.waitForFinished(180000));
        QVERIFY2(install.exitCode() == 0, install.readAll().constData());
        QVERIFY(QFile::setPermissions(older.path(), QFile::permissions(older.path()) |
                                                        QFile::ReadOther | QFile::ExeOther));

        const int port = testkit::freeLoopbackPort();
        const test::CliRun start =
            sandbox(QStringLiteral("start"), older.path(),
                    {QStringLiteral("--port"), QString::number(port), QStringLiteral("--no-seed")});
        QVERIFY2(start.exitCode == 0, qPrintable(start.err + start.out));
        QCOMPARE(mode(older.path()), 0700);
        LocalServer server(older.path());
        Dsn tcp = server.tcpRootDsn(port, QString());
        QVERIFY(!tcp.password.isEmpty());
        {
            db::Connection admin(server.rootDsn(QString()), QStringLiteral("t"));
            QCOMPARE(db::scalar(admin.database(),
                                QStringLiteral("SELECT GROUP_CONCAT(host ORDER BY host) FROM "
                                               "mysql.user WHERE user = 'root'"))
                         .toString(),
                     QStringLiteral("127.0.0.1,localhost"));
            // mariadb.sys, locked, only owns the system views.
            QCOMPARE(
                db::scalar(
                    admin.database(),
                    QStringLiteral(
                        "SELECT GROUP_CONCAT(user, '@', host) FROM mysql.user WHERE is_role = 'N' "
                        "AND plugin IN ('', 'mysql_native_password') AND authentication_string = "
                        "'' "
                        "AND user <> 'mariadb.sys'"))
                    .toString(),
                QString());
        }
        tcp.password.clear();
        try {
            db::Connection refused(tcp, QStringLiteral("t"));
            QFAIL("root over TCP still got in without a password");
        } catch (const db::Error &) {
        }
        QVERIFY(server.stop());
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    Dsn m_dsn;
    QString m_firstStart; // what the first start printed
};

PAYOPS_TEST_MAIN_CORE(TestSandbox)
#include "tst_sandbox.moc"
