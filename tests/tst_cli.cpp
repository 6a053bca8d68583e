#include "db/connection.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QProcess>

using namespace payops;

namespace {

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

Run runPayops(const QStringList &arguments, const QMap<QString, QString> &environment = {})
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("PAYOPS_DB"));
    env.remove(QStringLiteral("PAYOPS_DB_PASSWORD"));
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        env.insert(it.key(), it.value());
    process.setProcessEnvironment(env);
    process.start(test::cliPath(), arguments);
    if (!process.waitForFinished(120000))
        qFatal("payops %s did not finish", qPrintable(arguments.join(QLatin1Char(' '))));
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

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
        const Run first = runPayops({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QVERIFY2(first.out.contains(QStringLiteral("applied")), qPrintable(first.out));
        const Run second = runPayops({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QCOMPARE(second.exitCode, 0);
        QVERIFY2(second.out.contains(QStringLiteral("up to date at level current")), qPrintable(second.out));
    }

    void dsnFromEnvironment()
    {
        test::ScratchDatabase scratch;
        const Run run = runPayops({QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("legacy")},
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
        const Run run = runPayops({QStringLiteral("migrate"), QStringLiteral("--db"), dsn});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(isOneLine(run.err), qPrintable(run.err));
        QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("Zq9")), "the password must never be printed");
    }

    void usageErrors()
    {
        QCOMPARE(runPayops({}).exitCode, 2);
        QCOMPARE(runPayops({QStringLiteral("frobnicate")}).exitCode, 2);
        const Run badFlag = runPayops({QStringLiteral("migrate"), QStringLiteral("--nope")});
        QCOMPARE(badFlag.exitCode, 2);
        QVERIFY(isOneLine(badFlag.err));
        const Run badLevel = runPayops({QStringLiteral("migrate"), QStringLiteral("--level"), QStringLiteral("newest"),
                                     QStringLiteral("--db"), QStringLiteral("mysql://u@h/db")});
        QCOMPARE(badLevel.exitCode, 2);
        QVERIFY(badLevel.err.contains(QStringLiteral("legacy or current")));
        const Run badLog = runPayops({QStringLiteral("migrate"), QStringLiteral("--log-level"), QStringLiteral("loud")});
        QCOMPARE(badLog.exitCode, 2);
        QVERIFY(badLog.err.contains(QStringLiteral("log level")));
        QCOMPARE(runPayops({QStringLiteral("--help")}).exitCode, 0);
    }

    void refusalExitsOne()
    {
        test::ScratchDatabase scratch;
        const QString dsn = scratch.dsn().toString();
        QCOMPARE(runPayops({QStringLiteral("migrate"), QStringLiteral("--db"), dsn}).exitCode, 0);
        const Run back = runPayops({QStringLiteral("migrate"), QStringLiteral("--db"), dsn, QStringLiteral("--level"),
                                 QStringLiteral("legacy")});
        QCOMPARE(back.exitCode, 1);
        QVERIFY(isOneLine(back.err));
    }
};

PAYOPS_TEST_MAIN_CORE(TestCli)
#include "tst_cli.moc"
