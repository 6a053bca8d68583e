#include "console/connectionprofile.h"
#include "console/consolesettings.h"
#include "console/sandboxlauncher.h"
#include "db/connection.h"
#include "dialogs/connectiondialog.h"
#include "lab/localserver.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace payops;

class TestConnect final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init() { console::openConsoleSettings()->clear(); }

    // Like every binary, the console warns at start of a password in --db, which every user of
    // the machine can read in /proc/PID/cmdline.
    void aPasswordInDbIsWarnedOf()
    {
        QTemporaryDir home;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        environment.insert(QStringLiteral("HOME"), home.path());
        environment.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path());
        environment.insert(QStringLiteral("XDG_DATA_HOME"), home.path());
        environment.remove(QStringLiteral("PAYOPS_DB_PASSWORD"));
        QProcess console;
        console.setProcessEnvironment(environment);
        // Nothing listens on port 1: the console keeps trying, with the warning already given.
        console.start(
            QFileInfo(QStringLiteral(PAYOPS_CLI_PATH))
                .dir()
                .filePath(QStringLiteral("payops-console")),
            {QStringLiteral("--db"), QStringLiteral("mysql://ops:Zq9pw@127.0.0.1:1/payops")});
        QVERIFY(console.waitForStarted());
        QString err;
        QTRY_VERIFY_WITH_TIMEOUT((err += QString::fromLocal8Bit(console.readAllStandardError()))
                                     .contains(QStringLiteral("set PAYOPS_DB_PASSWORD instead")),
                                 20000);
        QVERIFY2(!err.contains(QStringLiteral("Zq9pw")), "the password must never be printed");
        console.kill();
        console.waitForFinished();
    }

    // The console reads --db and PAYOPS_DB as the other binaries do; the dialog asks only
    // when neither is given, and --sandbox asks for the sandbox instead of PAYOPS_DB.
    void theStartupDatabaseComesFromDbOrPayopsDb()
    {
        QProcessEnvironment environment;
        QString error;
        QVERIFY(!console::startupDsn(QString(), false, environment, &error));
        QVERIFY(error.isEmpty());

        environment.insert(QStringLiteral("PAYOPS_DB"),
                           QStringLiteral("mysql://ops@env.example:3310/payops"));
        environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), QStringLiteral("from-env"));
        const auto fromEnvironment = console::startupDsn(QString(), false, environment, &error);
        QVERIFY2(fromEnvironment, qPrintable(error));
        QCOMPARE(fromEnvironment->host, QStringLiteral("env.example"));
        QCOMPARE(fromEnvironment->port, 3310);
        QCOMPARE(fromEnvironment->password, QStringLiteral("from-env"));

        const auto given = console::startupDsn(QStringLiteral("mysql://ops@given.example/payops"),
                                               false, environment, &error);
        QVERIFY2(given, qPrintable(error));
        QCOMPARE(given->host, QStringLiteral("given.example"));
        QCOMPARE(given->password, QStringLiteral("from-env"));

        QVERIFY(!console::startupDsn(QString(), true, environment, &error));
        QVERIFY(error.isEmpty());

        environment.insert(QStringLiteral("PAYOPS_DB"), QStringLiteral("postgres://nope"));
        QVERIFY(!console::startupDsn(QString(), false, environment, &error));
        QVERIFY(!error.isEmpty());
    }

    void keychainStatusIsSaidPlainly()
    {
        ConnectionDialog dialog;
        dialog.show();
        auto *status = dialog.findChild<QLabel *>(QStringLiteral("keychainStatus"));
        // Either answer is fine; what matters is that the dialog says which one holds.
        QTRY_VERIFY_WITH_TIMEOUT(
            status->text().contains(QStringLiteral("never in the settings file")) ||
                status->text().contains(QStringLiteral("asked for each time")),
            30000);
    }

    void profilesAreSavedWithoutTheirPassword()
    {
        console::ConnectionProfile p;
        p.name = QStringLiteral("prod replica");
        p.host = QStringLiteral("db.example");
        p.port = 3307;
        p.user = QStringLiteral("ops");
        p.database = QStringLiteral("payops");
        p.sslCa = QStringLiteral("/etc/ssl/ca.pem");
        console::saveProfile(p);
        const auto profiles = console::loadProfiles();
        QCOMPARE(profiles.size(), 1);
        QCOMPARE(profiles.at(0).port, 3307);
        QCOMPARE(profiles.at(0).sslCa, QStringLiteral("/etc/ssl/ca.pem"));
        QCOMPARE(profiles.at(0).toDsn(QStringLiteral("pw")).password, QStringLiteral("pw"));

        ConnectionDialog dialog;
        auto *list = dialog.findChild<QListWidget *>(QStringLiteral("profilesList"));
        QCOMPARE(list->count(), 3); // Local sandbox, the profile, + New profile
        QCOMPARE(list->item(0)->text(), QStringLiteral("Local sandbox"));
        list->setCurrentRow(1);
        auto *password = dialog.findChild<QLineEdit *>(QStringLiteral("passwordEdit"));
        password->setText(QStringLiteral("do-not-store-me"));
        const auto save = dialog.findChildren<QPushButton *>();
        for (QPushButton *b : save)
            if (b->text() == QStringLiteral("Save profile"))
                b->click();
        const QString fileName = console::openConsoleSettings()->fileName();
        QVERIFY(fileName.endsWith(QStringLiteral("payops/console.conf")));
        QFile file(fileName);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray stored = file.readAll();
        QVERIFY(stored.contains("prod replica"));
        QVERIFY(!stored.contains("do-not-store-me"));
        console::removeProfile(p.name);
        QCOMPARE(console::loadProfiles().size(), 0);
    }

    // A profile may list the servers to fail over to, as a DSN lists them: its connection
    // then tries them in order. A list that cannot be used is said before connecting.
    void aProfileListsTheServersToFailOverTo()
    {
        console::ConnectionProfile p;
        p.name = QStringLiteral("prod with failover");
        p.host = QStringLiteral("db1.example");
        p.user = QStringLiteral("ops");
        p.database = QStringLiteral("payops");
        p.failover = QStringLiteral(" db2.example:3307 ,db3.example");
        p.readHost = QStringLiteral("replica.example");
        console::saveProfile(p);
        const console::ConnectionProfile saved = console::loadProfiles().at(0);
        QCOMPARE(saved.problem(), QString());
        const Dsn dsn = saved.toDsn(QStringLiteral("pw"));
        QCOMPARE(dsn.toString(),
                 QStringLiteral("mysql://ops@db1.example,db2.example:3307,db3.example/payops"));
        QString error;
        QCOMPARE(Dsn::parse(dsn.toString(), &error)->laterServers, dsn.laterServers);
        QVERIFY(saved.toReadDsn(QString())->laterServers.isEmpty());

        ConnectionDialog dialog;
        dialog.show();
        dialog.findChild<QListWidget *>(QStringLiteral("profilesList"))->setCurrentRow(1);
        auto *failover = dialog.findChild<QLineEdit *>(QStringLiteral("failoverEdit"));
        QCOMPARE(failover->text(), p.failover);
        auto *connectButton = dialog.findChild<QPushButton *>(QStringLiteral("connectButton"));
        auto *status = dialog.findChild<QLabel *>(QStringLiteral("connectStatus"));
        failover->setText(QStringLiteral("db2.example:notaport"));
        connectButton->click();
        QVERIFY2(status->text().contains(QStringLiteral("'db2.example:notaport'")),
                 qPrintable(status->text()));
        failover->setText(QStringLiteral("db2.example"));
        dialog.findChild<QLineEdit *>(QStringLiteral("socketEdit"))
            ->setText(QStringLiteral("/run/mysqld/mysqld.sock"));
        connectButton->click();
        QVERIFY2(status->text().contains(QStringLiteral("A socket reaches one server")),
                 qPrintable(status->text()));
        QVERIFY(dialog.isVisible());
        QVERIFY(!dialog.dsn());
    }

    void connectsOffTheUiThreadAndSaysWhyNot()
    {
        test::ScratchDatabase scratch;
        console::ConnectionProfile p;
        p.name = QStringLiteral("test server");
        p.socket = test::serverDsn().socket;
        p.user = test::serverDsn().user;
        p.database = QStringLiteral("no_such_database_here");
        console::saveProfile(p);
        ConnectionDialog dialog;
        dialog.show();
        dialog.findChild<QListWidget *>(QStringLiteral("profilesList"))->setCurrentRow(1);
        auto *connectButton = dialog.findChild<QPushButton *>(QStringLiteral("connectButton"));
        auto *status = dialog.findChild<QLabel *>(QStringLiteral("connectStatus"));
        connectButton->click();
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("does not exist")), 20000);
        QVERIFY(dialog.isVisible());
        QVERIFY(!dialog.dsn());

        p.database = scratch.name();
        console::saveProfile(p);
        dialog.findChild<QListWidget *>(QStringLiteral("profilesList"))->setCurrentRow(0);
        dialog.findChild<QListWidget *>(QStringLiteral("profilesList"))->setCurrentRow(1);
        connectButton->click();
        QTRY_COMPARE_WITH_TIMEOUT(dialog.result(), int(QDialog::Accepted), 20000);
        QVERIFY(dialog.dsn());
        QCOMPARE(dialog.dsn()->database, scratch.name());
    }

    // A profile's mapping file is kept with the profile and read before connecting: one that
    // cannot be used is said in the dialog, which stays open; one that can comes with the DSN.
    void aProfileCarriesItsMappingFile()
    {
        test::ScratchDatabase scratch;
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("shop.toml"));
        QFile::copy(QStringLiteral(PAYOPS_TEST_SOURCE_DIR "/../docs/mapping/payops.toml"), path);
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup |
                                        QFile::WriteGroup);
        console::ConnectionProfile p;
        p.name = QStringLiteral("team tables");
        p.socket = test::serverDsn().socket;
        p.user = test::serverDsn().user;
        p.database = scratch.name();
        p.mapping = path;
        console::saveProfile(p);
        QCOMPARE(console::loadProfiles().at(0).mapping, path);

        ConnectionDialog dialog;
        dialog.show();
        auto *list = dialog.findChild<QListWidget *>(QStringLiteral("profilesList"));
        list->setCurrentRow(1);
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("mappingEdit"))->text(), path);
        auto *connectButton = dialog.findChild<QPushButton *>(QStringLiteral("connectButton"));
        auto *status = dialog.findChild<QLabel *>(QStringLiteral("connectStatus"));
        connectButton->click();
        QVERIFY2(status->text().contains(QStringLiteral("may be changed by other users")),
                 qPrintable(status->text()));
        QVERIFY(dialog.isVisible());
        QVERIFY(!dialog.dsn());

        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup);
        connectButton->click();
        QTRY_COMPARE_WITH_TIMEOUT(dialog.result(), int(QDialog::Accepted), 20000);
        QVERIFY(dialog.mapping());
        QCOMPARE(dialog.mapping()->path, path);
        QCOMPARE(dialog.mapping()->sideEffects.size(), 2);
        console::removeProfile(p.name);

        QString error;
        QVERIFY(!console::startupMapping(QString(), &error));
        QVERIFY(error.isEmpty());
        const auto started = console::startupMapping(path, &error);
        QVERIFY2(started, qPrintable(error));
        QVERIFY(!console::startupMapping(dir.filePath(QStringLiteral("none.toml")), &error));
        QVERIFY(error.contains(QStringLiteral("cannot read the mapping file")));
    }

    void theSandboxStartsOnAThreadOfItsOwn()
    {
        QTemporaryDir dir;
        console::SandboxLauncher launcher;
        QSignalSpy started(&launcher, &console::SandboxLauncher::started);
        QSignalSpy failed(&launcher, &console::SandboxLauncher::failed);
        launcher.start(dir.path());
        QVERIFY(launcher.isRunning()); // returned at once; the work goes on elsewhere
        QTRY_VERIFY_WITH_TIMEOUT(started.size() + failed.size() == 1, 240000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        const auto dsn = started.at(0).at(0).value<Dsn>();
        {
            db::Connection c(dsn, QStringLiteral("t"));
            QCOMPARE(
                db::scalar(c.database(), QStringLiteral("SELECT COUNT(*) FROM orders")).toInt(),
                3000);
        }
        LocalServer(dir.path()).stop();
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConnect test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_connect.moc"
