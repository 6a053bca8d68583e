#include "db/connection.h"
#include "scratchdatabase.h"
#include "testmain.h"


using namespace payops;

namespace {

// Exactly one non-empty line, so that an operator reads one reason and not a stack.
bool isOneLine(const QString &text)
{
    return text.trimmed().split(QLatin1Char('\n')).size() == 1 && !text.trimmed().isEmpty();
}

} // namespace

class TestCli final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void migrateTwiceChangesNothingTheSecondTime()
    {
        test::ScratchDatabase scratch;
        const QString dsn = scratch.dsn().toString();
        const test::CliRun first = test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QVERIFY2(first.out.contains(QStringLiteral("applied")), qPrintable(first.out));
        const test::CliRun second = test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QCOMPARE(second.exitCode, 0);
        QVERIFY2(second.out.contains(QStringLiteral("up to date at level current")), qPrintable(second.out));
    }

    void dsnFromEnvironment()
    {
        test::ScratchDatabase scratch;
        const test::CliRun run = test::runCli({QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("legacy")},
                               {{QStringLiteral("PAYOPS_DB"), scratch.dsn().toString()}});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.out.contains(QStringLiteral("level legacy")));
    }

    void connectionFailuresAreOneLineAndExitTwo_data()
    {
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<QString>("mentions");
        const Dsn server = test::serverDsn();
        QTest::newRow("bad dsn") << QStringLiteral("mysql://nobody") << QStringLiteral("invalid DSN");
        QTest::newRow("unreachable") << QStringLiteral("mysql://root@127.0.0.1:1/payops") << QStringLiteral("cannot reach");
        QTest::newRow("no socket") << QStringLiteral("mysql://root@localhost/payops?socket=/nonexistent/x.sock")
                                   << QStringLiteral("cannot reach");
        Dsn wrongPassword = server.withDatabase(QStringLiteral("mysql"));
        wrongPassword.password = QStringLiteral("Zq9-not-the-password");
        QTest::newRow("wrong password") << wrongPassword.toString(true) << QStringLiteral("access denied");
        QTest::newRow("unknown database") << server.withDatabase(QStringLiteral("no_such_db_xyz")).toString()
                                          << QStringLiteral("does not exist");
    }

    void connectionFailuresAreOneLineAndExitTwo()
    {
        QFETCH(QString, dsn);
        QFETCH(QString, mentions);
        const test::CliRun run = test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(isOneLine(run.err), qPrintable(run.err));
        QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("Zq9")), "the password must never be printed");
    }

    void usageErrors()
    {
        QCOMPARE(test::runCli({}).exitCode, 2);
        QCOMPARE(test::runCli({QStringLiteral("frobnicate")}).exitCode, 2);
        const test::CliRun badFlag = test::runCli({QStringLiteral("migrate"), QStringLiteral("--nope")});
        QCOMPARE(badFlag.exitCode, 2);
        QVERIFY(isOneLine(badFlag.err));
        const test::CliRun badLevel = test::runCli({QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("newest"),
                                     QStringLiteral("--db"), QStringLiteral("mysql://u@h/db")});
        QCOMPARE(badLevel.exitCode, 2);
        QVERIFY(badLevel.err.contains(QStringLiteral("legacy or current")));
        const test::CliRun badLog = test::runCli({QStringLiteral("migrate"), QStringLiteral("--log-level"), QStringLiteral("loud")});
        QCOMPARE(badLog.exitCode, 2);
        QVERIFY(badLog.err.contains(QStringLiteral("log level")));
        QCOMPARE(test::runCli({QStringLiteral("--help")}).exitCode, 0);
    }

    void refusalExitsOne()
    {
        test::ScratchDatabase scratch;
        const QString dsn = scratch.dsn().toString();
        QCOMPARE(test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn}).exitCode, 0);
        const test::CliRun back = test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn, QStringLiteral("--level"),
                                 QStringLiteral("legacy")});
        QCOMPARE(back.exitCode, 1);
        QVERIFY(isOneLine(back.err));
    }
};

PAYOPS_TEST_MAIN_CORE(TestCli)
#include "tst_cli.moc"
