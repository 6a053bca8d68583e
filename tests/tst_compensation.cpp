#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/callbackswitch.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensation.h"
#include "domain/money/compensationrequest.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <thread>

using namespace payops;

namespace {

QString reason()
{
    return QStringLiteral("duplicate payout, INC-7");
}
QString ticket()
{
    return QStringLiteral("INC-7");
}

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

} // namespace

class TestCompensation final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("comp"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("legacy"), 0);
    }
    void cleanup() { m_db.reset(); }

    // The whole story: the incident's handler pays out twice, compensation leaves no live
    // duplicate, and the side-effect keys can then be added.
    void compensatesAStormOfTheUnsafeHandler()
    {
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            test::addPendingOrders(connection.database(), 4, 1001);
        }
        {
            const QStringList delay{QStringLiteral("--commit-delay-ms"), QStringLiteral("150")};
            test::CallbackdProcess a(m_db->dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("A"), delay);
            test::CallbackdProcess b(m_db->dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("B"), delay);
            for (qint64 order = 1001; order <= 1004; ++order) {
                const QByteArray body =
                    test::callbackBody("WX-" + QByteArray::number(order), order, 9900);
                std::thread first([&] { test::postCallback(a.port(), body); });
                QTest::qWait(40);
                test::postCallback(b.port(), body);
                first.join();
            }
        }
        const QString dsn = m_db->dsn().toString();
        const test::CliRun before =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), dsn});
        QCOMPARE(before.exitCode, 1);
        QVERIFY2(before.out.contains(QStringLiteral("8 duplicate coupon group")),
                 qPrintable(before.out));

        const QString fingerprint = test::businessFingerprint(m_db->dsn());
        const test::CliRun dryRun =
            test::runCli({QStringLiteral("compensate"), QStringLiteral("--db"), dsn,
                          QStringLiteral("--dry-run")});
        QCOMPARE(dryRun.exitCode, 0);
        QVERIFY2(dryRun.out.contains(QStringLiteral("8 coupon(s) to freeze")),
                 qPrintable(dryRun.out));
        QVERIFY(dryRun.out.contains(QStringLiteral("4 points row(s) to reverse (400 points)")));
        QCOMPARE(test::businessFingerprint(m_db->dsn()), fingerprint);

        const test::CliRun run = test::runCli({QStringLiteral("compensate"), QStringLiteral("--db"),
                                               dsn, QStringLiteral("--reason"), reason(),
                                               QStringLiteral("--ticket"), ticket()});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("compensated 12, skipped 0")),
                 qPrintable(run.out));
        const test::CliRun after =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), dsn});
        QCOMPARE(after.exitCode, 0);
        QVERIFY(after.out.contains(QStringLiteral("no live duplicates")));

        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(4 * 100));
        QCOMPARE(
            count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE status = 'FROZEN'")),
            qint64(8));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM point_log WHERE reverses_id IS NOT "
                                          "NULL AND points = -100")),
                 qint64(4));
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM ops_audit_log WHERE action LIKE 'compensation.%'")),
            qint64(12));
        QVERIFY(verifyAuditChain(db).intact);
        // Nothing was deleted, and now the keys can go on.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")), qint64(16));
        QCOMPARE(db::Migrator(connection, checkMigrationRequirement)
                     .migrate(db::SchemaLevel::Current, false)
                     .applied.size(),
                 1);

        const test::CliRun again = test::runCli(
            {QStringLiteral("compensate"), QStringLiteral("--db"), dsn, QStringLiteral("--reason"),
             reason(), QStringLiteral("--ticket"), ticket()});
        QCOMPARE(again.exitCode, 0);
        QVERIFY(again.out.contains(QStringLiteral("0 coupon(s) to freeze")));
    }

    void usedCouponBecomesAFinanceDecision()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 3);
        CompensationSettings settings;
        settings.usedCoupons = UsedCouponPolicy::Receivable;
        const CompensationPlan plan = planCompensation(db, {{1001}, {}, false}, settings);
        QCOMPARE(plan.couponReceivables, 1);
        QCOMPARE(plan.couponsFrozen, 1);
        QCOMPARE(plan.pointsReversed, 1);
        QCOMPARE(plan.moneyFen, qint64(1000 + 500 + 100));
        executeCompensation(db, plan, reason(), ticket(), settings);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT status FROM user_coupon WHERE order_id = "
                                               "1001 AND coupon_template_id = 1 "
                                               "AND superseded_by IS NOT NULL"))
                     .toString(),
                 QStringLiteral("USED"));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT action FROM compensation WHERE target_table "
                                               "= 'user_coupon' AND amount_fen = 1000"))
                     .toString(),
                 QStringLiteral("RECEIVABLE_COUPON"));
        // Only order 1001 was in scope.
        QCOMPARE(countLiveDuplicates(db).couponGroups, qint64(4));
    }

    // Each action's audit entry says what the database holds after it: the row it reverses
    // or freezes, the reversal row, the balance; and the operator's text arrives byte for
    // byte, quotes, backslashes and all.
    void auditEntriesDescribeEachAction()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 2);
        const QString awkward =
            QStringLiteral("O'Brien said \"twice\" \\ 支付 -- ; DROP TABLE x; \\n");
        const CompensationPlan plan = planCompensation(db, CompensationScope::all(), {});
        const CompensationOutcome outcome =
            executeCompensation(db, plan, awkward, QStringLiteral("INC-'7'"), {});
        QCOMPARE(outcome.done, 6);
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM ops_audit_log WHERE action LIKE 'compensation.%'")),
            qint64(6));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(DISTINCT reason) FROM ops_audit_log"))
                     .toInt(),
                 1);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT reason FROM ops_audit_log LIMIT 1")).toString(),
            awkward);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT reason FROM compensation LIMIT 1")).toString(),
            awkward);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT ticket FROM compensation LIMIT 1")).toString(),
            QStringLiteral("INC-'7'"));

        // The points entry of order 1001 names its reversal row and the user's balance after it.
        QSqlQuery points = db::exec(
            db,
            QStringLiteral(
                "SELECT a.target, JSON_VALUE(a.after_json, '$.reversal_id'), "
                "JSON_VALUE(a.after_json, '$.user_balance'), "
                "       JSON_VALUE(a.after_json, '$.points'), r.id, u.points_balance, p.id "
                "FROM ops_audit_log a JOIN point_log p ON a.target = CONCAT('point_log:', p.id) "
                "JOIN point_log r ON r.reverses_id = p.id JOIN users u ON u.id = p.user_id "
                "WHERE a.action = 'compensation.reverse_points' AND p.order_id = 1001"));
        QVERIFY(points.next());
        QCOMPARE(points.value(1).toLongLong(), points.value(4).toLongLong());
        QCOMPARE(points.value(2).toLongLong(), points.value(5).toLongLong());
        QCOMPARE(points.value(3).toInt(), -100);
        // A frozen coupon's entry: ISSUED before, FROZEN after, superseded by the row kept.
        QSqlQuery coupon = db::exec(
            db,
            QStringLiteral("SELECT JSON_VALUE(a.before_json, '$.status'), JSON_VALUE(a.after_json, "
                           "'$.status'), "
                           "       JSON_VALUE(a.after_json, '$.superseded_by'), c.superseded_by "
                           "FROM ops_audit_log a JOIN user_coupon c ON a.target = "
                           "CONCAT('user_coupon:', c.id) "
                           "WHERE a.action = 'compensation.freeze_coupon' ORDER BY a.id LIMIT 1"));
        QVERIFY(coupon.next());
        QCOMPARE(coupon.value(0).toString(), QStringLiteral("ISSUED"));
        QCOMPARE(coupon.value(1).toString(), QStringLiteral("FROZEN"));
        QCOMPARE(coupon.value(2).toLongLong(), coupon.value(3).toLongLong());
        QVERIFY(verifyAuditChain(db).intact);
    }

    void twoCompensatorsAtOnceCompensateEachDuplicateOnce()
    {
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            test::insertDuplicateIncident(connection.database(), 40);
        }
        CompensationSettings settings;
        settings.batchSize = 7;
        CompensationOutcome outcomes[2];
        int planned = 0;
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            planned =
                int(planCompensation(connection.database(), CompensationScope::all(), settings)
                        .actions.size());
        }
        std::thread threads[2];
        for (int i = 0; i < 2; ++i)
            threads[i] = std::thread([&, i] {
                db::Connection connection(m_db->dsn(), QStringLiteral("c%1").arg(i));
                const CompensationPlan plan =
                    planCompensation(connection.database(), CompensationScope::all(), settings);
                outcomes[i] =
                    executeCompensation(connection.database(), plan, reason(), ticket(), settings);
            });
        for (auto &thread : threads)
            thread.join();
        QCOMPARE(outcomes[0].done + outcomes[1].done, planned);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(planned));
        QCOMPARE(count(db, QStringLiteral(
                               "SELECT COUNT(*) FROM point_log WHERE reverses_id IS NOT NULL")),
                 qint64(40));
        QVERIFY(countLiveDuplicates(db).isEmpty());
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(40 * 100));
        QVERIFY(verifyAuditChain(db).intact);
    }

    void failureMidBatchThenRerunCompletes()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 20);
        CompensationSettings settings;
        settings.batchSize = 10;
        const CompensationPlan plan = planCompensation(db, CompensationScope::all(), settings);
        QCOMPARE(plan.actions.size(), 60);
        // The 26th action fails: batches one and two are committed, batch three is not.
        const qint64 failing = plan.actions.at(25).targetId;
        QCOMPARE(plan.actions.at(25).targetTable, QStringLiteral("user_coupon"));
        db::execDirect(
            db,
            QStringLiteral(
                "CREATE TRIGGER test_fail BEFORE UPDATE ON user_coupon FOR EACH ROW "
                "BEGIN IF NEW.id = %1 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected'; "
                "END IF; END")
                .arg(failing));
        QVERIFY_THROWS_EXCEPTION(db::Error,
                                 executeCompensation(db, plan, reason(), ticket(), settings));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(20));
        QCOMPARE(count(db, QStringLiteral(
                               "SELECT COUNT(*) FROM user_coupon WHERE superseded_by IS NOT NULL")),
                 qint64(20));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM ops_audit_log")), qint64(20));

        db::execDirect(db, QStringLiteral("DROP TRIGGER test_fail"));
        const CompensationPlan rest = planCompensation(db, CompensationScope::all(), settings);
        QCOMPARE(rest.actions.size(), 40);
        const CompensationOutcome outcome =
            executeCompensation(db, rest, reason(), ticket(), settings);
        QCOMPARE(outcome.done, 40);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(60));
        QVERIFY(countLiveDuplicates(db).isEmpty());
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(20 * 100));
    }

    void negativeBalanceIsAllowedAndReported()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 1);
        db::execDirect(
            db,
            QStringLiteral("UPDATE users SET points_balance = 30 WHERE id = 1")); // spent meanwhile
        const CompensationOutcome outcome = executeCompensation(
            db, planCompensation(db, CompensationScope::all(), {}), reason(), ticket(), {});
        QCOMPARE(outcome.negativeBalanceUsers, QList<qint64>{1});
        QCOMPARE(count(db, QStringLiteral("SELECT points_balance FROM users WHERE id = 1")),
                 qint64(-70));
    }

    void operatorMayActFinanceMayNot()
    {
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            test::insertDuplicateIncident(connection.database(), 3);
            db::execDirect(
                connection.database(),
                QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, status) "
                               "VALUES ('R1', 1001, "
                               "'{\"pay_no\":\"R1\",\"order_id\":1001,\"amount_fen\":9900,"
                               "\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}', 'RECORDED')"));
        }
        const QString fingerprint = test::businessFingerprint(m_db->dsn());
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const QString financeDsn = finance.dsnFor(m_db->name()).toString(true);
        {
            db::Connection connection(finance.dsnFor(m_db->name()), QStringLiteral("finance"));
            try {
                flipSwitch(connection.database(), CallbackMode::RecordOnly,
                           QStringLiteral("not allowed"));
                QFAIL("finance flipped the switch");
            } catch (const db::Error &error) {
                QVERIFY2(error.isAccessDenied(), error.what());
            }
        }
        QCOMPARE(
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"), financeDsn}).exitCode,
            1);
        const test::CliRun compensate = test::runCli(
            {QStringLiteral("compensate"), QStringLiteral("--db"), financeDsn,
             QStringLiteral("--reason"), reason(), QStringLiteral("--ticket"), ticket()});
        QCOMPARE(compensate.exitCode, 1);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), fingerprint);
        db::Connection root(m_db->dsn(), QStringLiteral("root"));
        QCOMPARE(readSwitch(root.database()).mode, CallbackMode::Normal);

        // The operator role can do all three.
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        const QString operatorDsn = operatorAccount.dsnFor(m_db->name()).toString(true);
        const test::CliRun drained =
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"), operatorDsn});
        QVERIFY2(drained.exitCode == 0, qPrintable(drained.err));
        const test::CliRun compensated = test::runCli(
            {QStringLiteral("compensate"), QStringLiteral("--db"), operatorDsn,
             QStringLiteral("--reason"), reason(), QStringLiteral("--ticket"), ticket()});
        QVERIFY2(compensated.exitCode == 0, qPrintable(compensated.err));
        const test::CliRun flipped = test::runCli(
            {QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"), operatorDsn,
             QStringLiteral("--reason"), reason(), QStringLiteral("--wait"), QStringLiteral("0")});
        QVERIFY2(flipped.exitCode == 0, qPrintable(flipped.err));
        QVERIFY(countLiveDuplicates(root.database()).isEmpty());
        QCOMPARE(
            db::scalar(root.database(),
                       QStringLiteral("SELECT actor FROM ops_audit_log ORDER BY id DESC LIMIT 1"))
                .toString(),
            operatorAccount.user() + QStringLiteral("@localhost"));
    }

    void auditIsAppendOnlyForOperators()
    {
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection connection(operatorAccount.dsnFor(m_db->name()), QStringLiteral("operator"));
        const QSqlDatabase db = connection.database();
        // It appends through the procedures only: a row of its own making, one that names
        // someone else or one that says where it sits in the chain, is refused.
        appendAudit(db, QStringLiteral("switch.flip"), {}, QStringLiteral("hello"), {}, {}, {});
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT actor FROM ops_audit_log")).toString(),
                 operatorAccount.user() + QStringLiteral("@localhost"));
        for (const QString &statement :
             {QStringLiteral("INSERT INTO ops_audit_log (actor, action, reason) "
                             "VALUES ('the-ceo', 'switch.flip', 'hello')"),
              QStringLiteral("INSERT INTO ops_audit_log (id, action, prev_hash, row_hash) "
                             "VALUES (2, 'switch.flip', 'made', 'up')"),
              QStringLiteral("UPDATE ops_audit_log SET reason = 'x'"),
              QStringLiteral("DELETE FROM ops_audit_log"),
              QStringLiteral("TRUNCATE TABLE ops_audit_log"),
              QStringLiteral("DROP TRIGGER ops_audit_log_no_update"),
              QStringLiteral("UPDATE ops_audit_head SET last_id = 0")}) {
            try {
                db::execDirect(db, statement);
                QFAIL(qPrintable(QStringLiteral("the operator could run: ") + statement));
            } catch (const db::Error &error) {
                QVERIFY2(error.isAccessDenied(), error.what());
            }
        }
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT reason FROM ops_audit_log")).toString(),
                 QStringLiteral("hello"));
        // Even an account with every grant meets the append-only triggers.
        db::Connection root(m_db->dsn(), QStringLiteral("root"));
        QVERIFY_THROWS_EXCEPTION(
            db::Error, db::execDirect(root.database(),
                                      QStringLiteral("UPDATE ops_audit_log SET reason = 'x'")));
    }

    // Batches and single entries from two sessions at once make one chain: each batch's
    // entries in a row and in the order they were added, every entry under the account that
    // wrote it, the head on the last. A batch rolled back leaves nothing.
    void batchesAndSingleEntriesMakeOneChain_data() { test::addSchemaLevelRows(); }
    void batchesAndSingleEntriesMakeOneChain()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("chain"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 0);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        constexpr int kRounds = 20;
        constexpr int kBatchEntries = 25;
        QString failures[2];
        std::thread threads[2];
        for (int i = 0; i < 2; ++i)
            threads[i] = std::thread([&, i] {
                try {
                    db::Connection connection(operatorAccount.dsnFor(scratch.name()),
                                              QStringLiteral("writer%1").arg(i));
                    const QSqlDatabase db = connection.database();
                    for (int round = 0; round < kRounds; ++round) {
                        const QString batch = QStringLiteral("w%1-r%2").arg(i).arg(round);
                        db::Transaction transaction(db);
                        openAuditBatch(db);
                        QList<QVariantList> rows;
                        for (int entry = 0; entry < kBatchEntries; ++entry)
                            rows << QVariantList{QStringLiteral("backlog.drain"),
                                                 batch,
                                                 QString::number(entry),
                                                 QString(),
                                                 QVariant(),
                                                 QStringLiteral("{}")};
                        db::execDirect(db, auditBatchInsert() + QStringLiteral("VALUES ") +
                                               db::valueRows(db, rows));
                        appendAuditBatch(db);
                        transaction.commit();
                        appendAudit(db, QStringLiteral("switch.flip"), batch + QStringLiteral("-1"),
                                    QStringLiteral("single"), {}, {}, {});
                    }
                    db::Transaction rolledBack(db);
                    openAuditBatch(db);
                    db::execDirect(db, auditBatchInsert() +
                                           QStringLiteral("VALUES ('backlog.drain', 'gone', "
                                                          "'0', '', NULL, NULL)"));
                    appendAuditBatch(db);
                } catch (const db::Error &error) {
                    failures[i] = QString::fromUtf8(error.what());
                }
            });
        for (auto &thread : threads)
            thread.join();
        QVERIFY2(failures[0].isEmpty(), qPrintable(failures[0]));
        QVERIFY2(failures[1].isEmpty(), qPrintable(failures[1]));

        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        const AuditVerification chain = verifyAuditChain(db);
        QVERIFY2(chain.intact, qPrintable(chain.problem));
        constexpr qint64 kEntries = 2 * kRounds * (kBatchEntries + 1);
        QCOMPARE(chain.rows, kEntries);
        QCOMPARE(chain.headId, kEntries);
        QCOMPARE(db::scalar(db,
                            QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE actor <> ?"),
                            {operatorAccount.user() + QStringLiteral("@localhost")})
                     .toLongLong(),
                 qint64(0));
        QSqlQuery rows = db::exec(db, QStringLiteral("SELECT id, target, reason FROM ops_audit_log "
                                                     "WHERE action = 'backlog.drain' ORDER BY id"));
        qint64 previousId = 0;
        QString previousBatch;
        int expected = 0;
        while (rows.next()) {
            const QString batch = rows.value(1).toString();
            if (batch != previousBatch) {
                QCOMPARE(expected % kBatchEntries, 0);
                expected = 0;
            } else {
                QCOMPARE(rows.value(0).toLongLong(), previousId + 1);
            }
            QCOMPARE(rows.value(2).toString(), QString::number(expected));
            ++expected;
            previousId = rows.value(0).toLongLong();
            previousBatch = batch;
        }
        QCOMPARE(expected, kBatchEntries);

        // A row that only says it is chained, as an account with INSERT could write, is found.
        db::exec(db, QStringLiteral("INSERT INTO ops_audit_log (id, action, prev_hash, row_hash) "
                                    "SELECT last_id + 1, 'switch.flip', last_hash, REPEAT('f', 64) "
                                    "FROM ops_audit_head"));
        const AuditVerification forged = verifyAuditChain(db);
        QVERIFY(!forged.intact);
        QCOMPARE(forged.firstBrokenId, kEntries + 1);
    }

    // A database made with another default character set (a team's older server): the audit
    // procedures keep Chinese text whole all the same, and the chain verifies.
    void chineseEntriesOnALatin1Database()
    {
        test::ScratchDatabase scratch(QStringLiteral("latin"));
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
            db::execDirect(admin.database(),
                           QStringLiteral("ALTER DATABASE %1 CHARACTER SET latin1")
                               .arg(db::quoteIdentifier(scratch.name())));
        }
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection connection(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        const QSqlDatabase db = connection.database();
        const QString reason = QStringLiteral("重复发放：冻结第二张优惠券");
        appendAudit(db, QStringLiteral("switch.flip"), QStringLiteral("回调开关"), reason,
                    QStringLiteral("工单-7"), {}, QStringLiteral("{\"说明\": \"降级\"}"));
        db::Transaction transaction(db);
        openAuditBatch(db);
        db::exec(db,
                 auditBatchInsert() + QStringLiteral("VALUES ('backlog.drain', ?, ?, '', NULL, ?)"),
                 {QStringLiteral("订单:1001"), reason, QStringLiteral("{\"说明\": \"补发\"}")});
        appendAuditBatch(db);
        transaction.commit();
        QSqlQuery rows = db::exec(
            db, QStringLiteral("SELECT target, reason, after_json FROM ops_audit_log ORDER BY id"));
        QVERIFY(rows.next());
        QCOMPARE(rows.value(0).toString(), QStringLiteral("回调开关"));
        QCOMPARE(rows.value(1).toString(), reason);
        QCOMPARE(rows.value(2).toString(), QStringLiteral("{\"说明\": \"降级\"}"));
        QVERIFY(rows.next());
        QCOMPARE(rows.value(0).toString(), QStringLiteral("订单:1001"));
        QCOMPARE(rows.value(1).toString(), reason);
        QCOMPARE(rows.value(2).toString(), QStringLiteral("{\"说明\": \"补发\"}"));
        const AuditVerification chain = verifyAuditChain(db);
        QVERIFY2(chain.intact, qPrintable(chain.problem));
        QCOMPARE(chain.rows, qint64(2));
    }

    void verifyFindsARowEditedByRoot()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("root"));
        const QSqlDatabase db = connection.database();
        for (int i = 0; i < 5; ++i)
            appendAudit(db, QStringLiteral("backlog.drain"), QStringLiteral("t"),
                        QStringLiteral("entry %1").arg(i), {}, {}, {});
        const QString dsn = m_db->dsn().toString();
        QCOMPARE(test::runCli({QStringLiteral("audit"), QStringLiteral("verify"),
                               QStringLiteral("--db"), dsn})
                     .exitCode,
                 0);
        // root can do anything, but not without leaving a trace in the chain.
        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_update"));
        db::execDirect(
            db,
            QStringLiteral("UPDATE ops_audit_log SET reason = 'nothing happened' WHERE id = 3"));
        const test::CliRun edited = test::runCli(
            {QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--db"), dsn});
        QCOMPARE(edited.exitCode, 1);
        QVERIFY2(edited.err.contains(QStringLiteral("broken at row 3")), qPrintable(edited.err));

        db::execDirect(db,
                       QStringLiteral("UPDATE ops_audit_log SET reason = 'entry 2' WHERE id = 3"));
        QVERIFY(verifyAuditChain(db).intact);
        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_delete"));
        db::execDirect(db, QStringLiteral("DELETE FROM ops_audit_log WHERE id = 5"));
        const AuditVerification truncated = verifyAuditChain(db);
        QVERIFY(!truncated.intact);
        QVERIFY2(truncated.problem.contains(QStringLiteral("removed")),
                 qPrintable(truncated.problem));
    }

    // One duplicate group, not its whole order: only that group is planned, and a request
    // for it is approved and carried out as asked, not widened to the order.
    void singleGroupScope()
    {
        db::Connection root(m_db->dsn(), QStringLiteral("root"));
        test::insertDuplicateIncident(root.database(), 2);
        const CompensationScope scope{
            {}, {CompensationGroup{1002, QStringLiteral("coupon:2")}}, false};
        const CompensationPlan plan = planCompensation(root.database(), scope, {});
        QCOMPARE(plan.actions.size(), 1);
        QCOMPARE(plan.couponsFrozen, 1);
        QCOMPARE(plan.moneyFen, qint64(500));
        QCOMPARE(plan.actions.first().orderId, qint64(1002));
        // A scope that names nothing (a filter that matched no group) plans nothing, not all.
        QVERIFY(planCompensation(root.database(), CompensationScope{}, {}).isEmpty());
        QVERIFY(!planCompensation(root.database(), CompensationScope::all(), {}).isEmpty());

        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        db::Connection asAlice(alice.dsnFor(m_db->name()), QStringLiteral("alice"));
        const qint64 id = requestCompensation(asAlice.database(), plan, scope, reason(), ticket());
        QCOMPARE(loadCompensationRequest(root.database(), id)->scope.groups, scope.groups);
        // The requester cannot approve it; the database says so and nothing changes.
        QVERIFY_THROWS_EXCEPTION(db::Error, approveCompensationRequest(asAlice.database(), id, {}));
        QCOMPARE(loadCompensationRequest(root.database(), id)->status, QStringLiteral("PENDING"));

        db::Connection asBob(bob.dsnFor(m_db->name()), QStringLiteral("bob"));
        const Approval approval = approveCompensationRequest(asBob.database(), id, {});
        QVERIFY2(approval.refusal.isEmpty(), qPrintable(approval.refusal));
        QCOMPARE(approval.plan.actions.size(), 1);
        // A run that stopped before it finished is carried on under the same approval.
        const Approval resumed = approveCompensationRequest(asBob.database(), id, {});
        QVERIFY2(resumed.refusal.isEmpty(), qPrintable(resumed.refusal));
        QCOMPARE(resumed.plan.actions.size(), 1);
        QCOMPARE(
            count(root.database(),
                  QStringLiteral(
                      "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'compensation.approve'")),
            qint64(1));
        QCOMPARE(executeCompensation(asBob.database(), approval.plan, reason(), ticket(), {}).done,
                 1);
        markRequestExecuted(asBob.database(), id);
        QCOMPARE(loadCompensationRequest(root.database(), id)->status, QStringLiteral("EXECUTED"));
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM compensation")),
                 qint64(1));
        // An executed request is refused with a reason, not run twice.
        QVERIFY(!approveCompensationRequest(asBob.database(), id, {}).refusal.isEmpty());
        // A rejected request cannot be approved afterwards.
        const qint64 other = requestCompensation(
            asAlice.database(), planCompensation(root.database(), {{1001}, {}, false}, {}),
            CompensationScope{{1001}, {}, false}, reason(), ticket());
        QVERIFY(rejectCompensationRequest(asBob.database(), other));
        QVERIFY(!approveCompensationRequest(asBob.database(), other, {}).refusal.isEmpty());
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM compensation")),
                 qint64(1));
    }

    void fourEyesAboveTheThreshold()
    {
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            test::insertDuplicateIncident(connection.database(), 10);
            db::execDirect(connection.database(),
                           QStringLiteral("UPDATE payops_meta SET value = '5000' WHERE name = "
                                          "'four_eyes_threshold_fen'"));
        }
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        const QStringList act{QStringLiteral("--reason"), reason(), QStringLiteral("--ticket"),
                              ticket()};
        const test::CliRun asked =
            test::runCli(QStringList{QStringLiteral("compensate"), QStringLiteral("--db"),
                                     alice.dsnFor(m_db->name()).toString(true)} +
                         act);
        QCOMPARE(asked.exitCode, 1);
        QVERIFY2(asked.err.contains(QStringLiteral("four-eyes")), qPrintable(asked.err));
        const QString request =
            QRegularExpression(QStringLiteral("request (\\d+) waits")).match(asked.err).captured(1);
        QVERIFY(!request.isEmpty());
        db::Connection root(m_db->dsn(), QStringLiteral("root"));
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM compensation")),
                 qint64(0));

        const test::CliRun self =
            test::runCli(QStringList{QStringLiteral("compensate"), QStringLiteral("--db"),
                                     alice.dsnFor(m_db->name()).toString(true),
                                     QStringLiteral("--approve"), request} +
                         act);
        QCOMPARE(self.exitCode, 1);
        QVERIFY2(self.err.contains(QStringLiteral("another operator")), qPrintable(self.err));
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM compensation")),
                 qint64(0));

        const test::CliRun approved =
            test::runCli(QStringList{QStringLiteral("compensate"), QStringLiteral("--db"),
                                     bob.dsnFor(m_db->name()).toString(true),
                                     QStringLiteral("--approve"), request} +
                         act);
        QVERIFY2(approved.exitCode == 0, qPrintable(approved.err));
        QVERIFY(countLiveDuplicates(root.database()).isEmpty());
        QCOMPARE(
            db::scalar(root.database(),
                       QStringLiteral(
                           "SELECT CONCAT(status, ' by ', decided_by) FROM compensation_request"))
                .toString(),
            QStringLiteral("EXECUTED by %1@localhost").arg(bob.user()));
        // The request and its approval are in the audit log, under the database's names for
        // who did them.
        QCOMPARE(
            db::scalar(
                root.database(),
                QStringLiteral("SELECT GROUP_CONCAT(CONCAT(action, ' ', actor) ORDER BY id "
                               "SEPARATOR '; ') FROM ops_audit_log "
                               "WHERE action IN ('compensation.request', 'compensation.approve')"))
                .toString(),
            QStringLiteral("compensation.request %1@localhost; compensation.approve %2@localhost")
                .arg(alice.user(), bob.user()));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
};

PAYOPS_TEST_MAIN_CORE(TestCompensation)
#include "tst_compensation.moc"
