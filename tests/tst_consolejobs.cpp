// The console core's jobs, run without a window: what a screen submits to its console::Worker
// and what comes back. The screens only show these results; what they mean is checked here.

#include "scratchdatabase.h"
#include "testmain.h"

#include "console/account.h"
#include "console/audit.h"
#include "console/reconciliationview.h"
#include "console/worker.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"

#include <QTemporaryDir>

#include <optional>

using namespace payops;

namespace {

void migrate(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
}

QString statementFile(const QString &name)
{
    return QStringLiteral(QT_TESTCASE_SOURCEDIR "/data/statements/") + name;
}

// Runs `job` on a connection of the test's own, as a worker's thread would.
template <typename Result> Result run(const Dsn &dsn, const console::Job<Result> &job)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    return job(connection.database());
}

} // namespace

class TestConsoleJobs final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { migrate(m_db.dsn()); }

    // The account the console shows is the authenticated one, with what its role's grants allow.
    void theAccountIsTheAuthenticatedOneWithItsRolesGrants()
    {
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        test::ScratchAccount financeAccount(QStringLiteral("payops_finance"));
        const console::Account op =
            run(operatorAccount.dsnFor(m_db.name()), console::jobOf(console::probeAccount));
        const console::Account finance =
            run(financeAccount.dsnFor(m_db.name()), console::jobOf(console::probeAccount));
        QCOMPARE(op.user, operatorAccount.user() + QStringLiteral("@localhost"));
        QCOMPARE(finance.user, financeAccount.user() + QStringLiteral("@localhost"));
        QVERIFY(op.privileges.compensate);
        QVERIFY(op.privileges.flipSwitch);
        QVERIFY(!finance.privileges.compensate);
        QVERIFY(!finance.privileges.flipSwitch);
        QVERIFY(finance.privileges.draftPayments);
    }

    // Each way an import ends is told apart; only a stored statement is reconciled and read.
    void aStatementImportTellsHowItEnded()
    {
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const Dsn dsn = finance.dsnFor(m_db.name());
        const auto importJob = [](const QString &path) {
            return console::statementFileImportJob(path, StatementFormat::Auto,
                                                   std::make_shared<std::atomic<bool>>(false), {});
        };
        using Outcome = console::StatementFileImport::Outcome;

        const auto missing = run(dsn, importJob(statementFile(QStringLiteral("no-such-file.csv"))));
        QCOMPARE(missing.outcome, Outcome::CannotOpen);
        QVERIFY(!missing.problem.isEmpty());

        const auto unreadable = run(dsn, importJob(statementFile(QStringLiteral("unknown.csv"))));
        QCOMPARE(unreadable.outcome, Outcome::Unreadable);
        QVERIFY(!unreadable.problem.isEmpty());

        const auto first = run(dsn, importJob(statementFile(QStringLiteral("generic.csv"))));
        QCOMPARE(first.outcome, Outcome::Reconciled);
        QVERIFY(!first.imported.alreadyImported);
        QVERIFY(first.imported.statement.id > 0);
        QCOMPARE(first.view.statement.id, first.imported.statement.id);
        QVERIFY(first.view.runId > 0);
        QVERIFY(first.findings > 0); // none of its orders is in this database

        const auto again = run(dsn, importJob(statementFile(QStringLiteral("generic.csv"))));
        QCOMPARE(again.outcome, Outcome::Reconciled);
        QVERIFY(again.imported.alreadyImported);
        QCOMPARE(again.imported.statement.id, first.imported.statement.id);
        QVERIFY(again.view.runId > first.view.runId);

        const auto cancel = std::make_shared<std::atomic<bool>>(true);
        const auto stopped = run(
            dsn, console::statementFileImportJob(statementFile(QStringLiteral("alipay_utf8.csv")),
                                                 StatementFormat::Auto, cancel, {}));
        QCOMPARE(stopped.outcome, Outcome::Cancelled);
    }

    // A file that cannot be written is the export's answer for the page to show, not a failed job.
    void anExportThatCannotWriteSaysWhy()
    {
        QTemporaryDir dir;
        const auto exportTo = [&](const QString &path) {
            return run(m_db.dsn(),
                       console::auditExportJob(AuditFilter{}, path,
                                               std::make_shared<std::atomic<bool>>(false), {}));
        };
        const console::AuditExport written = exportTo(dir.filePath(QStringLiteral("audit.csv")));
        QVERIFY2(written.failure.isEmpty(), qPrintable(written.failure));
        QVERIFY(written.written >= 0);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("audit.csv"))));

        const console::AuditExport refused =
            exportTo(dir.filePath(QStringLiteral("no-such-folder/audit.csv")));
        QVERIFY(!refused.failure.isEmpty());
    }

    // The façade runs a job off the UI thread and answers on it. A cancel interrupts the job
    // on the server: the next job of the worker answers long before the first would have ended.
    void theWorkerAnswersAndCancels()
    {
        console::Worker worker(m_db.dsn());
        QObject receiver;
        std::optional<console::Account> account;
        worker.submit<console::Account>(
            QStringLiteral("account"), console::jobOf(console::probeAccount), &receiver,
            [&](const console::Account &a) { account = a; }, [](const db::Error &) {});
        QTRY_VERIFY_WITH_TIMEOUT(account.has_value(), 20000);
        QVERIFY(account->user.startsWith(QStringLiteral("root@")));
        QVERIFY(worker.serverConnectionId() != 0);

        bool sleepAnswered = false;
        worker.submit<int>(
            QStringLiteral("sleep"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(60)")).toInt();
            },
            &receiver, [&](const int &) { sleepAnswered = true; },
            [&](const db::Error &) { sleepAnswered = true; });
        QTest::qWait(300); // let it reach the server
        worker.cancel(QStringLiteral("sleep"));
        std::optional<int> after;
        worker.submit<int>(
            QStringLiteral("after"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 7")).toInt();
            },
            &receiver, [&](const int &value) { after = value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(after, std::optional<int>(7), 20000);
        QVERIFY(!sleepAnswered); // a cancelled job's answer is dropped
        QVERIFY(console::Worker::isCancelled(db::Error(QStringLiteral("interrupted"), 1317)));
        QVERIFY(!console::Worker::isCancelled(db::Error(QStringLiteral("refused"), 1142)));
    }

private:
    test::ScratchDatabase m_db{QStringLiteral("consolejobs")};
};

PAYOPS_TEST_MAIN_CORE(TestConsoleJobs)
#include "tst_consolejobs.moc"
