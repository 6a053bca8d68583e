#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/compensationworkflow.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "frozenserver.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <thread>

using namespace payops;

namespace {

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

// A new compensation as an operator asks for it.
CompensationJob compensate(const CompensationScope &scope = CompensationScope::all())
{
    CompensationJob job;
    job.scope = scope;
    job.reason = QStringLiteral("duplicate payout, INC-7");
    job.ticket = QStringLiteral("INC-7");
    return job;
}

// The second operator's approval of a request; `scope` is what the approver's own selection
// would be, which an approval must not run.
CompensationJob approve(qint64 requestId)
{
    CompensationJob job = compensate(CompensationScope::all());
    job.approveRequestId = requestId;
    return job;
}

} // namespace

// The one workflow behind the console's compensation dialog and `payops compensate`, as two
// operator accounts meet it: the four-eyes branches, stopping and carrying on, and a request
// refused because its duplicates changed.
class TestCompensationWorkflow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("flow"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("legacy"), 0);
        m_root = std::make_unique<db::Connection>(m_db->dsn(), QStringLiteral("root"));
        m_alice = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
        m_bob = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
        m_asAlice = std::make_unique<db::Connection>(m_alice->dsnFor(m_db->name()),
                                                     QStringLiteral("alice"));
        m_asBob =
            std::make_unique<db::Connection>(m_bob->dsnFor(m_db->name()), QStringLiteral("bob"));
    }
    void cleanup()
    {
        m_asBob.reset();
        m_asAlice.reset();
        m_bob.reset();
        m_alice.reset();
        m_root.reset();
        m_db.reset();
    }

    // Below the threshold it runs at once, with the used-coupon choice and the points value
    // it was given, and reports a balance that went negative.
    void belowTheThresholdRuns()
    {
        test::insertDuplicateIncident(root(), 2);
        db::execDirect(
            root(),
            QStringLiteral("UPDATE users SET points_balance = 0 WHERE id = 1")); // spent meanwhile
        CompensationJob job = compensate();
        job.settings.usedCoupons = UsedCouponPolicy::Receivable;
        job.settings.fenPerHundredPoints = 50;
        int started = 0;
        job.starting = [&started](const CompensationPlan &plan,
                                  const CompensationRequest *approved) {
            ++started;
            QCOMPARE(plan.actions.size(), 6);
            QVERIFY(!approved);
        };
        QPair<int, int> progress;
        job.progress = [&progress](int done, int total) { progress = {done, total}; };

        const CompensationResult result = runCompensation(m_asAlice->database(), job);
        QVERIFY2(result.refusal.isEmpty(), qPrintable(result.refusal));
        QCOMPARE(result.filedRequestId, qint64(0));
        QCOMPARE(started, 1);
        QCOMPARE(progress, qMakePair(6, 6));
        QCOMPARE(result.run.done, 6);
        QCOMPARE(result.run.skipped, 0);
        QVERIFY(!result.run.cancelled);
        QCOMPARE(result.run.negativeBalanceUsers, QList<qint64>{1});
        QVERIFY(countLiveDuplicates(root()).isEmpty());
        QCOMPARE(count(root(),
                       QStringLiteral(
                           "SELECT COUNT(*) FROM compensation WHERE action = 'RECEIVABLE_COUPON'")),
                 qint64(1));
        QCOMPARE(count(root(), QStringLiteral("SELECT SUM(amount_fen) FROM compensation")),
                 qint64(2 * (1000 + 500 + 50)));
        QCOMPARE(db::scalar(root(), QStringLiteral("SELECT DISTINCT created_by FROM compensation"))
                     .toString(),
                 QStringLiteral("%1@localhost").arg(m_alice->user()));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation_request")),
                 qint64(0));
    }

    // Above it the job becomes a pending request, and nothing else changes.
    void aboveTheThresholdFilesARequest()
    {
        test::insertDuplicateIncident(root(), 6);
        setThreshold(5000);
        const QString before = test::businessFingerprint(m_db->dsn());
        CompensationJob job = compensate();
        bool started = false;
        job.starting = [&started](const CompensationPlan &, const CompensationRequest *) {
            started = true;
        };

        const CompensationResult result = runCompensation(m_asAlice->database(), job);
        QVERIFY(result.filedRequestId > 0);
        QVERIFY(result.refusal.isEmpty());
        QCOMPARE(result.thresholdFen, qint64(5000));
        QCOMPARE(result.plan.moneyFen, qint64(6 * 1600));
        QCOMPARE(result.run.done, 0);
        QVERIFY(!started);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(0));
        const auto request = loadCompensationRequest(root(), result.filedRequestId);
        QVERIFY(request);
        QCOMPARE(request->status, QStringLiteral("PENDING"));
        QCOMPARE(request->amountFen, qint64(6 * 1600));
        QVERIFY(request->scope.everything);
    }

    void theRequesterMayNotApprove()
    {
        test::insertDuplicateIncident(root(), 6);
        setThreshold(5000);
        const qint64 id = runCompensation(m_asAlice->database(), compensate()).filedRequestId;
        QVERIFY(id > 0);

        const CompensationResult result = runCompensation(m_asAlice->database(), approve(id));
        QVERIFY2(result.refusal.contains(QStringLiteral("another operator")),
                 qPrintable(result.refusal));
        QVERIFY(!result.approved);
        QCOMPARE(result.run.done, 0);
        QCOMPARE(loadCompensationRequest(root(), id)->status, QStringLiteral("PENDING"));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(0));
        QCOMPARE(
            count(root(),
                  QStringLiteral(
                      "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'compensation.approve'")),
            qint64(0));
    }

    // Another operator account approves it: exactly the request's scope runs (one order and
    // one group of another), not the approver's, and the request ends EXECUTED.
    void aSecondOperatorRunsExactlyTheRequestScope()
    {
        test::insertDuplicateIncident(root(), 6);
        setThreshold(1000);
        const CompensationScope scope{
            {1002}, {CompensationGroup{1004, QStringLiteral("coupon:2")}}, false};
        const qint64 id = runCompensation(m_asAlice->database(), compensate(scope)).filedRequestId;
        QVERIFY(id > 0);
        QCOMPARE(loadCompensationRequest(root(), id)->amountFen, qint64(1600 + 500));

        CompensationJob job = approve(id);
        qint64 startedFor = 0;
        job.starting = [&startedFor](const CompensationPlan &,
                                     const CompensationRequest *approved) {
            startedFor = approved ? approved->id : -1;
        };
        const CompensationResult result = runCompensation(m_asBob->database(), job);
        QVERIFY2(result.refusal.isEmpty(), qPrintable(result.refusal));
        QVERIFY(result.approved);
        QCOMPARE(result.approved->id, id);
        QCOMPARE(startedFor, id);
        QCOMPARE(result.run.done, 4);
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(4));
        QCOMPARE(count(root(),
                       QStringLiteral("SELECT COUNT(*) FROM compensation WHERE order_id = 1002")),
                 qint64(3));
        QCOMPARE(
            count(
                root(),
                QStringLiteral(
                    "SELECT COUNT(*) FROM compensation c JOIN user_coupon u ON u.id = c.target_id "
                    "WHERE c.order_id = 1004 AND c.target_table = 'user_coupon' "
                    "AND u.coupon_template_id = 2")),
            qint64(1));
        QCOMPARE(countLiveDuplicates(root()).couponExtraRows, qint64(6 * 2 - 3));
        QCOMPARE(
            db::scalar(root(),
                       QStringLiteral(
                           "SELECT CONCAT(status, ' by ', decided_by) FROM compensation_request"))
                .toString(),
            QStringLiteral("EXECUTED by %1@localhost").arg(m_bob->user()));
    }

    // Stopped after its first batch: that batch is complete (its rows, corrections and audit
    // entries), nothing after it started, and running the job again finishes the rest.
    void aStoppedRunLeavesCompleteBatchesAndARerunFinishes()
    {
        test::insertDuplicateIncident(root(), 5);
        std::atomic<bool> stop = false;
        CompensationJob job = compensate();
        job.settings.batchSize = 4;
        job.stop = &stop;
        job.progress = [&stop](int, int) { stop = true; };

        const CompensationResult stopped = runCompensation(m_asAlice->database(), job);
        QVERIFY(stopped.run.cancelled);
        QCOMPARE(stopped.run.done, 4);
        verifyCompleteBatches(4);

        stop = false;
        job.progress = {};
        const CompensationResult rest = runCompensation(m_asAlice->database(), job);
        QVERIFY(!rest.run.cancelled);
        QCOMPARE(rest.run.done, 15 - 4);
        QCOMPARE(rest.run.skipped, 0);
        verifyCompleteBatches(15);
        QVERIFY(countLiveDuplicates(root()).isEmpty());
        QCOMPARE(count(root(), QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(5 * 100));
    }

    // An approved run that was stopped keeps its approval and stays APPROVED; approving it
    // again carries on with what is left and marks it executed.
    void aStoppedApprovalCarriesOn()
    {
        test::insertDuplicateIncident(root(), 5);
        setThreshold(1000);
        const qint64 id = runCompensation(m_asAlice->database(), compensate()).filedRequestId;
        QVERIFY(id > 0);
        std::atomic<bool> stop = false;
        CompensationJob job = approve(id);
        job.settings.batchSize = 4;
        job.stop = &stop;
        job.progress = [&stop](int, int) { stop = true; };

        const CompensationResult stopped = runCompensation(m_asBob->database(), job);
        QVERIFY2(stopped.refusal.isEmpty(), qPrintable(stopped.refusal));
        QVERIFY(stopped.run.cancelled);
        QCOMPARE(stopped.run.done, 4);
        verifyCompleteBatches(4);
        QCOMPARE(loadCompensationRequest(root(), id)->status, QStringLiteral("APPROVED"));

        stop = false;
        job.progress = {};
        const CompensationResult rest = runCompensation(m_asBob->database(), job);
        QVERIFY2(rest.refusal.isEmpty(), qPrintable(rest.refusal));
        QCOMPARE(rest.run.done, 15 - 4);
        verifyCompleteBatches(15);
        QCOMPARE(loadCompensationRequest(root(), id)->status, QStringLiteral("EXECUTED"));
        QCOMPARE(
            count(root(),
                  QStringLiteral(
                      "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'compensation.approve'")),
            qint64(1));
    }

    // A request whose duplicates changed after it was asked for is refused, whether there is
    // more money to correct now or less: the approver would pass what nobody asked for.
    void aRequestWhoseDuplicatesChangedIsRefused()
    {
        test::insertDuplicateIncident(root(), 6);
        setThreshold(1000);
        const qint64 grown =
            runCompensation(m_asAlice->database(), compensate({{1001}, {}, false})).filedRequestId;
        const qint64 shrunk =
            runCompensation(m_asAlice->database(), compensate({{1002, 1003}, {}, false}))
                .filedRequestId;
        QVERIFY(grown > 0 && shrunk > 0);
        // A third copy of a coupon of order 1001 turns up, and order 1003 is compensated
        // by itself meanwhile.
        db::execDirect(
            root(), QStringLiteral(
                        "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, status, "
                        "face_value_fen) VALUES (1, 1001, 2, 'ISSUED', 500)"));
        const CompensationPlan order1003 = planCompensation(root(), {{1003}, {}, false}, {});
        QCOMPARE(executeCompensation(root(), order1003, QStringLiteral("INC-8"),
                                     QStringLiteral("INC-8"), {})
                     .done,
                 3);

        const CompensationResult more = runCompensation(m_asBob->database(), approve(grown));
        QVERIFY2(more.refusal.contains(QStringLiteral("grew")), qPrintable(more.refusal));
        QCOMPARE(more.plan.moneyFen, qint64(1600 + 500));
        const CompensationResult less = runCompensation(m_asBob->database(), approve(shrunk));
        QVERIFY2(less.refusal.contains(QStringLiteral("shrank")), qPrintable(less.refusal));
        QCOMPARE(less.plan.moneyFen, qint64(1600));
        for (const qint64 id : {grown, shrunk})
            QCOMPARE(loadCompensationRequest(root(), id)->status, QStringLiteral("PENDING"));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(3));
    }

    // Four eyes by instalments: a plan above the threshold, run order by order by one
    // operator. The run that takes the account's solo total over the threshold needs a second
    // operator, and the database refuses it to a client that carries it out anyway. What an
    // approved request carried out counts against no one's allowance.
    void instalmentsAddUpToTheThreshold()
    {
        test::insertDuplicateIncident(root(), 6); // 1,600 fen an order, 9,600 in all
        setThreshold(2000);
        QList<qint64> requests;
        for (qint64 order = 1001; order <= 1006; ++order) {
            const CompensationResult result =
                runCompensation(m_asAlice->database(), compensate({{order}, {}, false}));
            QVERIFY2(result.refusal.isEmpty(), qPrintable(result.refusal));
            QCOMPARE(result.soloFen, order == 1001 ? 0 : 1600);
            if (order == 1001) {
                QCOMPARE(result.run.done, 3);
            } else {
                QVERIFY(result.filedRequestId > 0);
                QCOMPARE(result.run.done, 0);
                requests << result.filedRequestId;
            }
        }
        QCOMPARE(
            count(root(), QStringLiteral("SELECT COALESCE(SUM(amount_fen), 0) FROM compensation")),
            qint64(1600));

        const CompensationPlan order1002 =
            planCompensation(m_asAlice->database(), {{1002}, {}, false}, {});
        QVERIFY_THROWS_EXCEPTION(db::Error, executeCompensation(m_asAlice->database(), order1002,
                                                                QStringLiteral("INC-7"),
                                                                QStringLiteral("INC-7"), {}));
        QCOMPARE(count(root(),
                       QStringLiteral("SELECT COUNT(*) FROM compensation WHERE order_id = 1002")),
                 qint64(0));

        const CompensationResult approved =
            runCompensation(m_asBob->database(), approve(requests.first()));
        QVERIFY2(approved.refusal.isEmpty(), qPrintable(approved.refusal));
        QCOMPARE(approved.run.done, 3);
        QCOMPARE(
            count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation WHERE request_id = %1")
                              .arg(requests.first())),
            qint64(3));
        QCOMPARE(soloCompensatedFen(m_asAlice->database()), qint64(1600));
        QCOMPARE(soloCompensatedFen(m_asBob->database()), qint64(0));
        // Bob's own allowance is whole: one order of his own runs at once.
        const CompensationResult bobsOwn =
            runCompensation(m_asBob->database(), compensate({{1006}, {}, false}));
        QCOMPARE(bobsOwn.filedRequestId, qint64(0));
        QCOMPARE(bobsOwn.run.done, 3);
        QCOMPARE(soloCompensatedFen(m_asBob->database()), qint64(1600));

        // A window that is no number of hours is an error, not a window of none.
        db::exec(
            root(),
            QStringLiteral(
                "UPDATE payops_meta SET value = 'a day' WHERE name = 'four_eyes_window_hours'"));
        const CompensationJob order1005 = compensate({{1005}, {}, false});
        QVERIFY_THROWS_EXCEPTION(db::Error, runCompensation(m_asAlice->database(), order1005));
        QCOMPARE(count(root(),
                       QStringLiteral("SELECT COUNT(*) FROM compensation WHERE order_id = 1005")),
                 qint64(0));
    }

    // Two solo compensations of one account at once cannot both fit under its allowance: the
    // second waits for the first to commit and then counts it.
    void twoSoloRunsAtOnceShareOneAllowance()
    {
        setThreshold(2000);
        const auto insert = [](const QSqlDatabase &db, int target) {
            db::exec(db,
                     QStringLiteral(
                         "INSERT INTO compensation (target_table, target_id, action, amount_fen) "
                         "VALUES ('user_coupon', ?, 'FREEZE_COUPON', 1500)"),
                     {target});
        };
        db::Transaction first(m_asAlice->database());
        insert(m_asAlice->database(), 1);
        QString second;
        std::atomic<bool> secondDone = false;
        std::thread other([&] {
            db::Connection again(m_alice->dsnFor(m_db->name()), QStringLiteral("alice-again"));
            second = test::refusal([&] { insert(again.database(), 2); });
            secondDone = true;
        });
        // The second waits for the first; it must not have finished before the first commits.
        // The server shows the statement of the trigger that waits, the threshold's read.
        static_cast<void>(QTest::qWaitFor(
            [&] {
                return secondDone ||
                       test::runsOnServer(m_db->dsn(), QStringLiteral("%four_eyes_threshold_fen%"));
            },
            10000));
        const bool waited = !secondDone;
        first.commit();
        other.join();
        QVERIFY2(waited, qPrintable(second));
        QVERIFY2(second.contains(QStringLiteral("four eyes")), qPrintable(second));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(1));
    }

    // A finance account may look at a dry run, allowance included, and change nothing.
    void aFinanceAccountPreviews()
    {
        test::insertDuplicateIncident(root(), 2);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::Connection asFinance(finance.dsnFor(m_db->name()), QStringLiteral("finance"));
        const CompensationPreview preview =
            previewCompensation(asFinance.database(), CompensationScope::all(), {});
        QCOMPARE(preview.plan.moneyFen, qint64(2 * 1600));
        QCOMPARE(preview.soloFen, qint64(0));
        QVERIFY_THROWS_EXCEPTION(db::Error, executeCompensation(asFinance.database(), preview.plan,
                                                                QStringLiteral("INC-7"),
                                                                QStringLiteral("INC-7"), {}));
    }

    // The same from the command line, which goes through the workflow above: the second
    // order's run is filed as a request and says why.
    void theCommandLineFilesTheInstalmentThatGoesOver()
    {
        test::insertDuplicateIncident(root(), 2);
        setThreshold(2000);
        const auto compensateOrder = [this](const QString &order) {
            return test::runCli({QStringLiteral("compensate"), QStringLiteral("--db"),
                                 m_alice->dsnFor(m_db->name()).toString(true),
                                 QStringLiteral("--order"), order, QStringLiteral("--reason"),
                                 QStringLiteral("duplicate payout"), QStringLiteral("--ticket"),
                                 QStringLiteral("INC-7")});
        };
        const test::CliRun first = compensateOrder(QStringLiteral("1001"));
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        const test::CliRun second = compensateOrder(QStringLiteral("1002"));
        QCOMPARE(second.exitCode, 1);
        QVERIFY2(second.err.contains(QStringLiteral("1600 fen this account compensated alone")),
                 qPrintable(second.err));
        QCOMPARE(count(root(),
                       QStringLiteral("SELECT COUNT(*) FROM compensation WHERE order_id = 1002")),
                 qint64(0));
        QCOMPARE(count(root(),
                       QStringLiteral(
                           "SELECT COUNT(*) FROM compensation_request WHERE status = 'PENDING'")),
                 qint64(1));
    }

private:
    QSqlDatabase root() const { return m_root->database(); }

    void setThreshold(qint64 fen)
    {
        db::exec(root(),
                 QStringLiteral(
                     "UPDATE payops_meta SET value = ? WHERE name = 'four_eyes_threshold_fen'"),
                 {QString::number(fen)});
    }

    // Every compensated row is corrected and audited, and nothing else is.
    void verifyCompleteBatches(qint64 actions)
    {
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM compensation")), actions);
        QCOMPARE(count(root(),
                       QStringLiteral(
                           "SELECT COUNT(*) FROM ops_audit_log WHERE action LIKE 'compensation.%' "
                           "AND action NOT IN ('compensation.request', 'compensation.approve')")),
                 actions);
        QCOMPARE(
            count(root(),
                  QStringLiteral(
                      "SELECT (SELECT COUNT(*) FROM user_coupon WHERE superseded_by IS NOT NULL) "
                      "+ (SELECT COUNT(*) FROM point_log WHERE reverses_id IS NOT NULL)")),
            actions);
        QCOMPARE(
            count(root(),
                  QStringLiteral("SELECT COUNT(*) FROM point_log WHERE superseded_by IS NOT NULL")),
            count(root(),
                  QStringLiteral("SELECT COUNT(*) FROM point_log WHERE reverses_id IS NOT NULL")));
    }

    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<db::Connection> m_root;
    std::unique_ptr<test::ScratchAccount> m_alice;
    std::unique_ptr<test::ScratchAccount> m_bob;
    std::unique_ptr<db::Connection> m_asAlice;
    std::unique_ptr<db::Connection> m_asBob;
};

PAYOPS_TEST_MAIN_CORE(TestCompensationWorkflow)
#include "tst_compensationworkflow.moc"
