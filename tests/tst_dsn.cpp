#include "db/dsn.h"
#include "domain/inspection/readsource.h"
#include "testmain.h"

#include <QProcessEnvironment>

using payops::Dsn;

class TestDsn final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init() { qunsetenv("PAYOPS_DB_PASSWORD"); }

    void tcpForm()
    {
        QString error;
        const auto dsn =
            Dsn::parse(QStringLiteral("mysql://ops:pa%40ss@db.example:3307/payops"), &error);
        QVERIFY2(dsn, qPrintable(error));
        QCOMPARE(dsn->user, QStringLiteral("ops"));
        QCOMPARE(dsn->password, QStringLiteral("pa@ss"));
        QCOMPARE(dsn->host, QStringLiteral("db.example"));
        QCOMPARE(dsn->port, 3307);
        QCOMPARE(dsn->database, QStringLiteral("payops"));
        QVERIFY(dsn->socket.isEmpty());
    }

    void defaultPortAndSocketForm()
    {
        QString error;
        const auto tcp = Dsn::parse(QStringLiteral("mysql://ops@db/payops"), &error);
        QVERIFY2(tcp, qPrintable(error));
        QCOMPARE(tcp->port, 3306);
        const auto sock = Dsn::parse(
            QStringLiteral("mysql://root@localhost/payops?socket=/tmp/x/mysqld.sock"), &error);
        QVERIFY2(sock, qPrintable(error));
        QCOMPARE(sock->socket, QStringLiteral("/tmp/x/mysqld.sock"));
        QCOMPARE(sock->host, QStringLiteral("localhost"));
    }

    void passwordFromEnvironment()
    {
        qputenv("PAYOPS_DB_PASSWORD", "from-env");
        QString error;
        QCOMPARE(Dsn::parse(QStringLiteral("mysql://ops@db/payops"), &error)->password,
                 QStringLiteral("from-env"));
        // A password in the DSN wins over the environment.
        QCOMPARE(Dsn::parse(QStringLiteral("mysql://ops:inline@db/payops"), &error)->password,
                 QStringLiteral("inline"));
    }

    void displayNeverShowsPassword()
    {
        QString error;
        const auto dsn = Dsn::parse(QStringLiteral("mysql://ops:topsecret@db:3307/payops"), &error);
        QVERIFY(dsn);
        QVERIFY(!dsn->toDisplayString().contains(QStringLiteral("topsecret")));
        QVERIFY(dsn->toString(true).contains(QStringLiteral("topsecret")));
        const auto again = Dsn::parse(dsn->toString(true), &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->password, dsn->password);
        QCOMPARE(again->port, 3307);
    }

    // Found by fuzz_dsn: a '%' that stood for itself in a value (written %25 in the DSN) was
    // written back bare, and "%3A" or "%41" then parsed back as ':' or 'A'.
    void aPercentSignSurvivesTheWayBack()
    {
        Dsn dsn;
        dsn.user = QStringLiteral("ops%41");
        dsn.password = QStringLiteral("p%40ss%:w@rd&x=1");
        dsn.host = QStringLiteral("db.example");
        dsn.database = QStringLiteral("payops");
        dsn.sslCa = QStringLiteral("/etc/100%/ca?.pem");
        dsn.sslCert = QStringLiteral("/etc/a%3Ab&c=d#e");
        dsn.sslKey = QStringLiteral("/etc/\u00e9%4Ak+ey");
        const QString written = dsn.toString(true);
        QString error;
        const auto again = Dsn::parse(written, &error);
        QVERIFY2(again, qPrintable(error + QStringLiteral(" in ") + written));
        QCOMPARE(again->user, dsn.user);
        QCOMPARE(again->password, dsn.password);
        QCOMPARE(again->host, dsn.host);
        QCOMPARE(again->sslCa, dsn.sslCa);
        QCOMPARE(again->sslCert, dsn.sslCert);
        QCOMPARE(again->sslKey, dsn.sslKey);
        QCOMPARE(again->toString(true), written);
    }

    // A primary and the replica that takes over from it, as one list tried in order.
    void aListOfServers()
    {
        QString error;
        const auto dsn = Dsn::parse(
            QStringLiteral("mysql://ops:pw@db1.example:3307,DB2.example,[::1]:3309/payops"),
            &error);
        QVERIFY2(dsn, qPrintable(error));
        QCOMPARE(dsn->host, QStringLiteral("db1.example"));
        QCOMPARE(dsn->port, 3307);
        QCOMPARE(dsn->laterServers, (QList<Dsn::Server>{{QStringLiteral("db2.example"), 3306},
                                                        {QStringLiteral("::1"), 3309}}));
        QCOMPARE(dsn->database, QStringLiteral("payops"));
        QCOMPARE(dsn->toString(true),
                 QStringLiteral("mysql://ops:pw@db1.example:3307,db2.example,[::1]:3309/payops"));
        QCOMPARE(dsn->toDisplayString(),
                 QStringLiteral("mysql://ops@db1.example:3307,db2.example,[::1]:3309/payops"));
        const auto again = Dsn::parse(dsn->toString(true), &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->laterServers, dsn->laterServers);
    }

    void badForms_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("empty") << QString() << QStringLiteral("empty");
        QTest::newRow("scheme") << QStringLiteral("postgres://u@h/db") << QStringLiteral("scheme");
        QTest::newRow("no user") << QStringLiteral("mysql://h/db") << QStringLiteral("no user");
        QTest::newRow("no database")
            << QStringLiteral("mysql://u@h/") << QStringLiteral("database");
        QTest::newRow("bad database")
            << QStringLiteral("mysql://u@h/db;drop") << QStringLiteral("database name");
        QTest::newRow("port letters")
            << QStringLiteral("mysql://u@h:abc/db") << QStringLiteral("port");
        QTest::newRow("port zero") << QStringLiteral("mysql://u@h:0/db") << QStringLiteral("port");
        QTest::newRow("port too big")
            << QStringLiteral("mysql://u@h:70000/db") << QStringLiteral("port");
        QTest::newRow("unknown option")
            << QStringLiteral("mysql://u@localhost/db?sock=/x") << QStringLiteral("unknown option");
        QTest::newRow("relative socket")
            << QStringLiteral("mysql://u@localhost/db?socket=x.sock") << QStringLiteral("absolute");
        QTest::newRow("socket off localhost")
            << QStringLiteral("mysql://u@db/db?socket=/x.sock") << QStringLiteral("localhost");
        QTest::newRow("no scheme") << QStringLiteral("u@h/db") << QStringLiteral("scheme");
        QTest::newRow("empty server in a list")
            << QStringLiteral("mysql://u@h1,,h2/db") << QStringLiteral("list of servers");
        QTest::newRow("bad port in a list")
            << QStringLiteral("mysql://u@h1,h2:x/db") << QStringLiteral("list of servers");
        QTest::newRow("no first server")
            << QStringLiteral("mysql://u@,h2/db") << QStringLiteral("no host");
        QTest::newRow("socket with a list")
            << QStringLiteral("mysql://u@localhost,h2/db?socket=/x.sock")
            << QStringLiteral("one server");
        // Found by fuzz_dsn: a noncharacter, kept by QUrl as written, came back as U+FFFD.
        QTest::newRow("noncharacter")
            << QString::fromUtf8("mysql://u@h/db?ssl-ca=/t/k\xf2\xbf\xbf\xbf")
            << QStringLiteral("not a URL");
    }

    void badForms()
    {
        QFETCH(QString, text);
        QFETCH(QString, mentions);
        QString error;
        QVERIFY(!Dsn::parse(text, &error));
        QVERIFY2(error.contains(mentions, Qt::CaseInsensitive), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1Char('\n')), "an error is one line");
    }

    // QUrl's error text quotes the whole source: a typo in a port printed the password.
    void errorsNeverShowThePassword_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("port out of range")
            << QStringLiteral("mysql://ops:Sekr3tPw@db:99999/payops");
        QTest::newRow("port letters") << QStringLiteral("mysql://ops:Sekr3tPw@db:33o6/payops");
        QTest::newRow("space in host") << QStringLiteral("mysql://ops:Sekr3tPw@d b/payops");
        QTest::newRow("bad host bracket") << QStringLiteral("mysql://ops:Sekr3tPw@[::1/payops");
        QTest::newRow("space in password") << QStringLiteral("mysql://ops:Sekr3t Pw@db/payops");
        QTest::newRow("slash in password") << QStringLiteral("mysql://ops:Sekr3t/Pw@db/payops");
        QTest::newRow("hash in password") << QStringLiteral("mysql://ops:Sekr3t#Pw@db/payops");
        QTest::newRow("question mark in password")
            << QStringLiteral("mysql://ops:Sekr3t?Pw@db/payops");
        QTest::newRow("at sign in password") << QStringLiteral("mysql://ops:Sekr3t@Pw@d b/payops");
        QTest::newRow("bad percent escape") << QStringLiteral("mysql://ops:Sekr3t%zzPw@db/payops");
        QTest::newRow("scheme") << QStringLiteral("mariadb://ops:Sekr3tPw@db/payops");
        QTest::newRow("no host") << QStringLiteral("mysql://ops:Sekr3tPw@/payops");
        QTest::newRow("port zero") << QStringLiteral("mysql://ops:Sekr3tPw@db:0/payops");
        QTest::newRow("fragment") << QStringLiteral("mysql://ops:Sekr3tPw@db/payops#x");
        QTest::newRow("bad database") << QStringLiteral("mysql://ops:Sekr3tPw@db/pay;ops");
        QTest::newRow("unknown option")
            << QStringLiteral("mysql://ops:Sekr3tPw@db/payops?timeout=5");
        QTest::newRow("no scheme") << QStringLiteral("ops:Sekr3tPw@db:99999/payops");
    }

    // --read-db: its own variables, never the primary's password, and read-only sessions.
    void readDatabaseFromOptionOrEnvironment()
    {
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), QStringLiteral("primary-pw"));
        QString error;
        QVERIFY(!Dsn::readFromOptionOrEnvironment({}, environment, &error));
        QVERIFY(error.isEmpty()); // none given is no error: reads go to --db
        environment.insert(QStringLiteral("PAYOPS_READ_DB"),
                           QStringLiteral("mysql://ro@replica/p"));
        environment.insert(QStringLiteral("PAYOPS_READ_DB_PASSWORD"), QStringLiteral("replica-pw"));
        auto dsn = Dsn::readFromOptionOrEnvironment({}, environment, &error);
        QVERIFY2(dsn, qPrintable(error));
        QCOMPARE(dsn->host, QStringLiteral("replica"));
        QCOMPARE(dsn->password, QStringLiteral("replica-pw"));
        QVERIFY(dsn->readOnlySession);
        dsn = Dsn::readFromOptionOrEnvironment(QStringLiteral("mysql://ro@other/p"), environment,
                                               &error);
        QVERIFY2(dsn, qPrintable(error));
        QCOMPARE(dsn->host, QStringLiteral("other"));
        QVERIFY(!Dsn::readFromOptionOrEnvironment(QStringLiteral("nonsense"), environment, &error));
        QVERIFY(!error.isEmpty());
    }

    // Transactions behind, per replication domain, from two GTID positions.
    void transactionsBehindFromGtidPositions()
    {
        using payops::GtidPosition;
        const GtidPosition primary = GtidPosition::parse(QStringLiteral("0-1-250,1-3-40"));
        QCOMPARE(GtidPosition::parse(QStringLiteral("0-1-250,1-3-40")).behind(primary), 0);
        QCOMPARE(GtidPosition::parse(QStringLiteral("0-1-243,1-3-40")).behind(primary), 7);
        // A domain the replica has not seen counts whole; one it is ahead in counts nothing.
        QCOMPARE(GtidPosition::parse(QStringLiteral("0-1-243")).behind(primary), 47);
        QCOMPARE(GtidPosition::parse(QStringLiteral("0-1-260, 1-3-38")).behind(primary), 2);
        QCOMPARE(GtidPosition::parse({}).behind(GtidPosition::parse({})), 0);
    }

    void staleWhenBehindPastTheThresholdOrStoppedBehind()
    {
        payops::ReplicaSide side;
        side.position = QStringLiteral("0-1-10");
        side.secondsBehind = 5;
        QVERIFY(!payops::combineReadSource({}, QStringLiteral("0-1-12"), side, 30).stale());
        QVERIFY(payops::combineReadSource({}, QStringLiteral("0-1-12"), side, 4).stale());
        side.secondsBehind.reset();
        side.secondsUnknown = QStringLiteral("replication is stopped");
        const payops::ReadSource stopped =
            payops::combineReadSource({}, QStringLiteral("0-1-12"), side, 30);
        QCOMPARE(stopped.transactionsBehind, std::optional<qint64>(2));
        QVERIFY(stopped.stale());
        QVERIFY(!payops::combineReadSource({}, QStringLiteral("0-1-10"), side, 30).stale());
        // Without a primary the transactions behind are unknown, not zero.
        QVERIFY(!payops::combineReadSource({}, std::nullopt, side, 30).transactionsBehind);
    }

    void errorsNeverShowThePassword()
    {
        QFETCH(QString, text);
        QString error;
        QVERIFY(!Dsn::parse(text, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY2(!error.contains(QStringLiteral("Sekr3t")) && !error.contains(QStringLiteral("Pw")),
                 qPrintable(error));
    }
};

PAYOPS_TEST_MAIN_CORE(TestDsn)
#include "tst_dsn.moc"
