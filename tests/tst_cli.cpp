#include "callbackfixture.h"
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
        const test::CliRun first =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QVERIFY2(first.out.contains(QStringLiteral("applied")), qPrintable(first.out));
        const test::CliRun second =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QCOMPARE(second.exitCode, 0);
        QVERIFY2(second.out.contains(QStringLiteral("up to date at level current")),
                 qPrintable(second.out));
    }

    void dsnFromEnvironment()
    {
        test::ScratchDatabase scratch;
        const test::CliRun run = test::runCli(
            {QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("legacy")},
            {{QStringLiteral("PAYOPS_DB"), scratch.dsn().toString()}});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.out.contains(QStringLiteral("level legacy")));
    }

    // A password in --db works but is warned of (every user reads /proc/PID/cmdline); the same
    // password from PAYOPS_DB_PASSWORD works without a warning. As an operator, at both levels.
    void aPasswordInDbIsWarnedOf_data() { test::addSchemaLevelRows(); }

    void aPasswordInDbIsWarnedOf()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch;
        const test::CliRun migrate =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"),
                          scratch.dsn().toString(), QStringLiteral("--level"), level});
        QVERIFY2(migrate.exitCode == 0, qPrintable(migrate.err));
        test::ScratchAccount operatorAccount{QStringLiteral("payops_operator")};
        const Dsn dsn = operatorAccount.dsnFor(scratch.name());
        const QString warning = QStringLiteral("set PAYOPS_DB_PASSWORD instead");

        const test::CliRun inline_ =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), dsn.toString(true)});
        QVERIFY2(inline_.exitCode == 0, qPrintable(inline_.err + inline_.out));
        QVERIFY2(inline_.err.contains(warning), qPrintable(inline_.err));
        QVERIFY2(!inline_.err.contains(dsn.password), "the password must never be printed");

        const test::CliRun fromVariable =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), dsn.toString()},
                         {{QStringLiteral("PAYOPS_DB_PASSWORD"), dsn.password}});
        QVERIFY2(fromVariable.exitCode == 0, qPrintable(fromVariable.err + fromVariable.out));
        QVERIFY2(!fromVariable.err.contains(warning), qPrintable(fromVariable.err));

        const test::CliRun without =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), dsn.toString()});
        QCOMPARE(without.exitCode, 2);
        QVERIFY2(without.err.contains(QStringLiteral("access denied")), qPrintable(without.err));
    }

    void connectionFailuresAreOneLineAndExitTwo_data()
    {
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<QString>("password"); // in PAYOPS_DB_PASSWORD: in --db it is warned of
        QTest::addColumn<QString>("mentions");
        const Dsn server = test::serverDsn();
        QTest::newRow("bad dsn") << QStringLiteral("mysql://nobody") << QString()
                                 << QStringLiteral("invalid DSN");
        QTest::newRow("unreachable") << QStringLiteral("mysql://root@127.0.0.1:1/payops")
                                     << QString() << QStringLiteral("cannot reach");
        QTest::newRow("no socket")
            << QStringLiteral("mysql://root@localhost/payops?socket=/nonexistent/x.sock")
            << QString() << QStringLiteral("cannot reach");
        // An account with a password: the server's administrator authenticates by the socket.
        m_account = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
        QTest::newRow("wrong password")
            << m_account->dsnFor(QStringLiteral("mysql")).toString()
            << QStringLiteral("Zq9-not-the-password") << QStringLiteral("access denied");
        QTest::newRow("unknown database")
            << server.withDatabase(QStringLiteral("no_such_db_xyz")).toString() << QString()
            << QStringLiteral("does not exist");
    }

    void connectionFailuresAreOneLineAndExitTwo()
    {
        QFETCH(QString, dsn);
        QFETCH(QString, password);
        QFETCH(QString, mentions);
        QMap<QString, QString> environment;
        if (!password.isEmpty())
            environment.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), password);
        const test::CliRun run =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn}, environment);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(isOneLine(run.err), qPrintable(run.err));
        QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("Zq9")), "the password must never be printed");
    }

    void usageErrors()
    {
        QCOMPARE(test::runCli({}).exitCode, 2);
        QCOMPARE(test::runCli({QStringLiteral("frobnicate")}).exitCode, 2);
        const test::CliRun badFlag =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--nope")});
        QCOMPARE(badFlag.exitCode, 2);
        QVERIFY(isOneLine(badFlag.err));
        const test::CliRun badLevel = test::runCli(
            {QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("newest"),
             QStringLiteral("--db"), QStringLiteral("mysql://u@h/db")});
        QCOMPARE(badLevel.exitCode, 2);
        QVERIFY(badLevel.err.contains(QStringLiteral("legacy or current")));
        const test::CliRun badLog = test::runCli(
            {QStringLiteral("migrate"), QStringLiteral("--log-level"), QStringLiteral("loud")});
        QCOMPARE(badLog.exitCode, 2);
        QVERIFY(badLog.err.contains(QStringLiteral("log level")));
        QCOMPARE(test::runCli({QStringLiteral("--help")}).exitCode, 0);
    }

    void refusalExitsOne()
    {
        test::ScratchDatabase scratch;
        const QString dsn = scratch.dsn().toString();
        QCOMPARE(test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn}).exitCode,
                 0);
        const test::CliRun back =
            test::runCli({QStringLiteral("migrate"), QStringLiteral("--db"), dsn,
                          QStringLiteral("--level"), QStringLiteral("legacy")});
        QCOMPARE(back.exitCode, 1);
        QVERIFY(isOneLine(back.err));
    }

private:
    std::unique_ptr<test::ScratchAccount> m_account;
};

PAYOPS_TEST_MAIN_CORE(TestCli)
#include "tst_cli.moc"
