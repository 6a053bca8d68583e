// Every action of the operator's playbook run by an account that holds payops_operator and
// nothing else, at both schema levels, through the same `payops` commands the operators type:
// what root may do proves nothing about the role's grants.
#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/inspection/privileges.h"
#include "domain/money/auditlog.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QTemporaryDir>

#include <functional>

using namespace payops;

namespace {

QMap<QString, QString> passwordOf(const test::ScratchAccount &account)
{
    return {{QStringLiteral("PAYOPS_DB_PASSWORD"), account.password()}};
}

// `payops COMMAND --db DSN-of-account ARGS` with the account's password in the environment.
test::CliRun runAs(const test::ScratchAccount &account, const test::ScratchDatabase &scratch,
                   const QString &command, const QStringList &arguments = {})
{
    return test::runCli(
        QStringList{command, QStringLiteral("--db"), account.dsnFor(scratch.name()).toString()} +
            arguments,
        passwordOf(account));
}

QString accountOf(const test::ScratchAccount &account)
{
    return account.user() + QStringLiteral("@localhost");
}

// A callback as the endpoint leaves it in record-only mode (`status` RECORDED) or when its
// order had not arrived (UNMATCHED): the raw body the drain parses again.
void recordCallback(const QSqlDatabase &db, const QByteArray &payNo, qint64 orderId,
                    const QString &status)
{
    const QByteArray body = test::callbackBody(payNo, orderId, 9900);
    db::exec(
        db,
        QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, body_sha256, "
                       "amount_fen, currency, "
                       "channel, trade_status, status, response_code) "
                       "VALUES (?, ?, ?, SHA2(?, 256), 9900, 'CNY', 'wechat', 'SUCCESS', ?, 200)"),
        {payNo, orderId, body, body, status});
}

qint64 auditEntries(const QSqlDatabase &db, const QString &action,
                    const test::ScratchAccount &actor)
{
    return db::scalar(
               db,
               QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = ? AND actor = ?"),
               {action, accountOf(actor)})
        .toLongLong();
}

} // namespace

class TestOperatorActions final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void drainAndDrainUnmatched_data() { test::addSchemaLevelRows(); }
    void drainAndDrainUnmatched()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opdrain"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 3);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        for (qint64 order = 1001; order <= 1003; ++order)
            recordCallback(db, "REC-" + QByteArray::number(order), order,
                           QStringLiteral("RECORDED"));
        // A payment whose order arrived after its callback.
        test::addPendingOrders(db, 1, 2001);
        recordCallback(db, "LATE-2001", 2001, QStringLiteral("UNMATCHED"));

        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        {
            // The console's probe asks about the statements the drain runs, so it agrees with
            // what the server does below.
            db::Connection asOperator(operatorAccount.dsnFor(scratch.name()),
                                      QStringLiteral("probe"));
            QVERIFY(probePrivileges(asOperator.database()).drain);
        }
        const test::CliRun drain = runAs(operatorAccount, scratch, QStringLiteral("drain"));
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err + drain.out));
        const test::CliRun unmatched = runAs(operatorAccount, scratch, QStringLiteral("drain"),
                                             {QStringLiteral("--unmatched")});
        QVERIFY2(unmatched.exitCode == 0, qPrintable(unmatched.err + unmatched.out));

        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
                     .toInt(),
                 4);
        QCOMPARE(
            db::scalar(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'PROCESSED'"))
                .toInt(),
            4);
        for (const qint64 order : {1001, 1002, 1003, 2001}) {
            const test::SideEffects effects = test::sideEffectsOf(db, order);
            QCOMPARE(effects.coupons, 2);
            QCOMPARE(effects.couponTemplatesTwice, 0);
            QCOMPARE(effects.points, 1);
        }
        QCOMPARE(auditEntries(db, QStringLiteral("backlog.drain"), operatorAccount), qint64(1));
        QCOMPARE(auditEntries(db, QStringLiteral("backlog.drain_unmatched"), operatorAccount),
                 qint64(1));
        // Every order the drain paid is in the change log under the operator's account.
        QCOMPARE(
            db::scalar(db,
                       QStringLiteral(
                           "SELECT COUNT(*) FROM business_change_log WHERE table_name = 'orders' "
                           "AND changed_by = ?"),
                       {accountOf(operatorAccount)})
                .toInt(),
            4);
    }

    // The probe and the server agree for an account that may not drain.
    void financeMayNotDrain_data() { test::addSchemaLevelRows(); }
    void financeMayNotDrain()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opnodrain"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        {
            db::Connection root(scratch.dsn(), QStringLiteral("root"));
            recordCallback(root.database(), "REC-1001", 1001, QStringLiteral("RECORDED"));
        }
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        {
            db::Connection asFinance(finance.dsnFor(scratch.name()), QStringLiteral("probe"));
            QVERIFY(!probePrivileges(asFinance.database()).drain);
        }
        const QString before = test::businessFingerprint(scratch.dsn());
        const test::CliRun drain = runAs(finance, scratch, QStringLiteral("drain"));
        QCOMPARE(drain.exitCode, 1);
        QVERIFY2(drain.err.contains(QStringLiteral("may not")), qPrintable(drain.err));
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
    }

    void switchOnAndOff_data() { test::addSchemaLevelRows(); }
    void switchOnAndOff()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opswitch"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        const test::CliRun on = runAs(
            operatorAccount, scratch, QStringLiteral("degrade"),
            {QStringLiteral("on"), QStringLiteral("--reason"), QStringLiteral("duplicate storm")});
        QVERIFY2(on.exitCode == 0, qPrintable(on.err + on.out));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT mode FROM callback_switch")).toString(),
                 QStringLiteral("RECORD_ONLY"));
        const test::CliRun off = runAs(
            operatorAccount, scratch, QStringLiteral("degrade"),
            {QStringLiteral("off"), QStringLiteral("--reason"), QStringLiteral("storm over")});
        QVERIFY2(off.exitCode == 0, qPrintable(off.err + off.out));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT mode FROM callback_switch")).toString(),
                 QStringLiteral("NORMAL"));
        QCOMPARE(auditEntries(db, QStringLiteral("switch.flip"), operatorAccount), qint64(2));
    }

    // Above the four-eyes threshold the compensation waits as a request that another operator
    // account approves. At level current the side-effect keys leave no duplicate to compensate:
    // the command still runs as an operator and changes nothing.
    void compensateAndApprove_data() { test::addSchemaLevelRows(); }
    void compensateAndApprove()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opcomp"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 3);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        const bool legacy = level == QLatin1String("legacy");
        if (legacy)
            test::insertDuplicateIncident(db, 3);
        db::exec(db,
                 QStringLiteral(
                     "UPDATE payops_meta SET value = '1' WHERE name = 'four_eyes_threshold_fen'"));
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        const QStringList why{QStringLiteral("--reason"), QStringLiteral("duplicate payout"),
                              QStringLiteral("--ticket"), QStringLiteral("INC-7")};

        {
            // The probe asks about the very statements a compensation batch writes with.
            db::Connection asOperator(alice.dsnFor(scratch.name()), QStringLiteral("probe"));
            QVERIFY(probePrivileges(asOperator.database()).compensate);
        }
        const test::CliRun dryRun =
            runAs(alice, scratch, QStringLiteral("compensate"), {QStringLiteral("--dry-run")});
        QVERIFY2(dryRun.exitCode == 0, qPrintable(dryRun.err + dryRun.out));
        const test::CliRun asked = runAs(alice, scratch, QStringLiteral("compensate"), why);
        if (!legacy) {
            QVERIFY2(asked.exitCode == 0, qPrintable(asked.err + asked.out));
            QVERIFY2(asked.out.contains(QStringLiteral("0 coupon(s) to freeze")),
                     qPrintable(asked.out));
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM compensation")).toInt(),
                     0);
            return;
        }
        QCOMPARE(asked.exitCode, 1);
        QVERIFY2(asked.err.contains(QStringLiteral("waits for another operator")),
                 qPrintable(asked.err));
        const QString request =
            db::scalar(db, QStringLiteral("SELECT MAX(id) FROM compensation_request")).toString();
        QCOMPARE(auditEntries(db, QStringLiteral("compensation.request"), alice), qint64(1));

        const QStringList approve = QStringList{QStringLiteral("--approve"), request} + why;
        const test::CliRun own = runAs(alice, scratch, QStringLiteral("compensate"), approve);
        QCOMPARE(own.exitCode, 1);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM compensation")).toInt(), 0);
        const test::CliRun approved = runAs(bob, scratch, QStringLiteral("compensate"), approve);
        QVERIFY2(approved.exitCode == 0, qPrintable(approved.err + approved.out));
        QVERIFY2(approved.out.contains(QStringLiteral("compensated 9, skipped 0")),
                 qPrintable(approved.out));
        QCOMPARE(auditEntries(db, QStringLiteral("compensation.approve"), bob), qint64(1));
        QCOMPARE(db::scalar(db,
                            QStringLiteral(
                                "SELECT COUNT(*) FROM ops_audit_log WHERE action IN "
                                "('compensation.freeze_coupon', 'compensation.write_off_coupon', "
                                "'compensation.reverse_points') AND actor = ?"),
                            {accountOf(bob)})
                     .toInt(),
                 9);
    }

    void report_data() { test::addSchemaLevelRows(); }
    void report()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opreport"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 3);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("incident.pdf"));
        const test::CliRun run =
            runAs(operatorAccount, scratch, QStringLiteral("report"),
                  {QStringLiteral("--from"), QStringLiteral("2020-01-01T00:00:00Z"),
                   QStringLiteral("--to"), QStringLiteral("2099-01-01T00:00:00Z"),
                   QStringLiteral("--out"), pdf});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5) == "%PDF-");
    }

    // Importing and reconciling a statement is finance's work: the finance account does both,
    // the operator account is refused in one sentence and nothing is stored.
    void importAndReconcile_data() { test::addSchemaLevelRows(); }
    void importAndReconcile()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opreconcile"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 2);
        QTemporaryDir dir;
        const QString statement = dir.filePath(QStringLiteral("statement.csv"));
        {
            QFile file(statement);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("pay_no,order_id,amount,status,paid_at,channel\n"
                       "4200001,1001,99.00,SUCCESS,2026-12-01T10:00:00Z,wechat\n"
                       "4200002,1002,99.00,SUCCESS,2026-12-01T10:01:00Z,wechat\n");
        }
        const QStringList arguments{QStringLiteral("--statement"), statement,
                                    QStringLiteral("--format"), QStringLiteral("generic")};
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        const test::CliRun refused =
            runAs(operatorAccount, scratch, QStringLiteral("reconcile"), arguments);
        // reconcile's exit 2: an error, not a finding.
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(QStringLiteral("may not change table platform_statement")),
                 qPrintable(refused.err));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM platform_statement")).toInt(),
                 0);

        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const test::CliRun reconciled =
            runAs(finance, scratch, QStringLiteral("reconcile"), arguments);
        // Exit 1: both payments are on the statement and not in pay_callback_log (findings).
        QVERIFY2(reconciled.exitCode == 0 || reconciled.exitCode == 1,
                 qPrintable(reconciled.err + reconciled.out));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM platform_statement")).toInt(),
                 1);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM platform_statement_line")).toInt(),
            2);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM reconciliation_run")).toInt(),
                 1);
    }

    // An audit entry names one of payops' own actions: an operator cannot write an entry of
    // its own making under its account, and root cannot either.
    void auditTakesOnlyKnownActions_data() { test::addSchemaLevelRows(); }
    void auditTakesOnlyKnownActions()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opaudit"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QString unknown = QStringLiteral("compensation.all_clear");
        const QString nothing = QStringLiteral("nothing to see");
        const std::function<void()> attempts[] = {
            [&] { appendAudit(asOperator.database(), unknown, {}, nothing, {}, {}, {}); },
            [&] {
                const QSqlDatabase db = asOperator.database();
                openAuditBatch(db);
                db::exec(db,
                         auditBatchInsert() + QStringLiteral("VALUES (?, '', ?, '', NULL, NULL)"),
                         {unknown, nothing});
                appendAuditBatch(db);
            },
            [&] {
                db::exec(root.database(),
                         QStringLiteral("INSERT INTO ops_audit_log (action, reason) VALUES (?, ?)"),
                         {unknown, nothing});
            }};
        for (const auto &attempt : attempts) {
            try {
                attempt();
                QFAIL("an unknown audit action was accepted");
            } catch (const db::Error &error) {
                QCOMPARE(error.serverCode(), 1644);
            }
        }
        QCOMPARE(db::scalar(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"))
                     .toInt(),
                 0);
        // ... and the operator cannot add an action to the list.
        QVERIFY_THROWS_EXCEPTION(
            db::Error,
            db::execDirect(
                asOperator.database(),
                QStringLiteral(
                    "INSERT INTO ops_audit_action (name) VALUES ('compensation.all_clear')")));
    }

    // The drain needs UPDATE on orders.status, so plain SQL can mark an order paid: the
    // change is kept with the account that made it, and the account cannot remove that trace.
    void plainSqlChangesAreLogged_data() { test::addSchemaLevelRows(); }
    void plainSqlChangesAreLogged()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("opplain"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        const QSqlDatabase db = asOperator.database();
        db::execDirect(db, QStringLiteral("UPDATE orders SET status = 'PAID' WHERE id = 1001"));
        db::execDirect(db,
                       QStringLiteral("UPDATE users SET points_balance = 1000000 WHERE id = 1"));
        QSqlQuery logged = db::exec(
            db, QStringLiteral("SELECT table_name, row_id, JSON_VALUE(before_json, '$.status'), "
                               "JSON_VALUE(after_json, '$.status'), changed_by "
                               "FROM business_change_log ORDER BY id"));
        QVERIFY(logged.next());
        QCOMPARE(logged.value(0).toString(), QStringLiteral("orders"));
        QCOMPARE(logged.value(1).toLongLong(), qint64(1001));
        QCOMPARE(logged.value(2).toString(), QStringLiteral("PENDING"));
        QCOMPARE(logged.value(3).toString(), QStringLiteral("PAID"));
        QCOMPARE(logged.value(4).toString(), accountOf(operatorAccount));
        QVERIFY(logged.next());
        QCOMPARE(logged.value(0).toString(), QStringLiteral("users"));
        QCOMPARE(logged.value(4).toString(), accountOf(operatorAccount));
        QVERIFY(!logged.next());
        for (const QString &statement :
             {QStringLiteral("DELETE FROM business_change_log"),
              QStringLiteral("UPDATE business_change_log SET changed_by = 'someone'"),
              QStringLiteral("INSERT INTO business_change_log (table_name, row_id, before_json, "
                             "after_json, changed_by, changed_at) "
                             "VALUES ('orders', 1, '', '', 'x', NOW())")}) {
            try {
                db::execDirect(db, statement);
                QFAIL(qPrintable(QStringLiteral("allowed: ") + statement));
            } catch (const db::Error &error) {
                QVERIFY2(error.isAccessDenied(), error.what());
            }
        }
        // Amounts stay out of reach altogether.
        QVERIFY_THROWS_EXCEPTION(
            db::Error,
            db::execDirect(db, QStringLiteral("UPDATE orders SET amount_fen = 1 WHERE id = 1001")));
    }
};

PAYOPS_TEST_MAIN_CORE(TestOperatorActions)
#include "tst_operatoractions.moc"
