#include "callbackfixture.h"
#include "db/connection.h"
#include "db/namedlock.h"
#include "demodatabase.h"
#include "domain/callback/callbackswitch.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QProcess>
#include <QRegularExpression>

#include <atomic>
#include <thread>

using namespace payops;

namespace {

test::CliRun cli(const test::ScratchDatabase &scratch, const QStringList &arguments)
{
    return test::runCli(
        QStringList{arguments.first(), QStringLiteral("--db"), scratch.dsn().toString()} +
        arguments.mid(1));
}

QString callbackState(const Dsn &dsn, const QByteArray &payNo)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    return db::scalar(
               connection.database(),
               QStringLiteral(
                   "SELECT CONCAT(status, ' ', reason) FROM pay_callback_log WHERE pay_no = ?"),
               {payNo})
        .toString();
}

void addOrder(const Dsn &dsn, qint64 orderId, int count = 1)
{
    db::Connection connection(dsn, QStringLiteral("order-writer"));
    test::addPendingOrders(connection.database(), count, orderId);
}

void flip(const Dsn &dsn, CallbackMode mode)
{
    db::Connection connection(dsn, QStringLiteral("flip"));
    flipSwitch(connection.database(), mode, QStringLiteral("INC-9 test"));
}

// One callback delivered while its order is not there yet; returns the HTTP status.
int sendAheadOfOrder(const Dsn &dsn, const QByteArray &payNo, qint64 orderId)
{
    test::CallbackdProcess endpoint(dsn);
    return test::postCallback(endpoint.port(), test::callbackBody(payNo, orderId, 9900)).status;
}

qint64 audits(const Dsn &dsn)
{
    return test::count(
        dsn, QStringLiteral(
                 "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'backlog.drain_unmatched'"));
}

} // namespace

class TestUnmatched final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Each case starts from callbacks' reference data and no orders at all.
    void init()
    {
        m_scratch = std::make_unique<test::ScratchDatabase>(QStringLiteral("unmatched"));
        test::prepareCallbackDatabase(m_scratch->dsn(), QStringLiteral("current"), 0);
    }
    void cleanup() { m_scratch.reset(); }

    // A callback ahead of its order is kept, not refused; the drain pays it once when the
    // order arrives, and never again.
    void lateOrderIsPaidOnceByTheDrain()
    {
        test::ScratchDatabase &scratch = *m_scratch;
        test::CallbackdProcess endpoint(scratch.dsn(), QStringLiteral("safe"),
                                        QStringLiteral("inst-late"));
        const QByteArray body = test::callbackBody("LATE-5001", 5001, 9900);

        const test::HttpResult first = test::postCallback(endpoint.port(), body);
        QCOMPARE(first.status, 200);
        QVERIFY2(first.body.contains("unknown_order"), first.body.constData());
        QCOMPARE(callbackState(scratch.dsn(), "LATE-5001"),
                 QStringLiteral("UNMATCHED unknown_order"));
        // The platform's retry is a replay: the first answer again, nothing changed.
        const QString fingerprint = test::businessFingerprint(scratch.dsn());
        const test::HttpResult retry = test::postCallback(endpoint.port(), body);
        QCOMPARE(retry.status, 200);
        QCOMPARE(retry.body, first.body);
        QCOMPARE(test::businessFingerprint(scratch.dsn()), fingerprint);

        // No order yet: reported, not alerted on, and the drain leaves it as it is.
        test::CliRun inspect = cli(scratch, {QStringLiteral("inspect")});
        QCOMPARE(inspect.exitCode, 0);
        QVERIFY2(inspect.out.contains(
                     QStringLiteral("1 unmatched callback(s), 0 of them now with their order")),
                 qPrintable(inspect.out));
        test::CliRun drain = cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err));
        QVERIFY2(drain.out.contains(QStringLiteral(
                     "processed 0, rejected 0; 1 unmatched callback(s) left, 1 of them "
                     "still without their order")),
                 qPrintable(drain.out));
        QCOMPARE(test::businessFingerprint(scratch.dsn()), fingerprint);
        QCOMPARE(audits(scratch.dsn()), qint64(0));

        // The order arrives: a payment waits to be applied, and cron hears of it.
        addOrder(scratch.dsn(), 5001);
        inspect = cli(scratch, {QStringLiteral("inspect")});
        QCOMPARE(inspect.exitCode, 1);
        QVERIFY2(
            inspect.out.contains(QStringLiteral("1 of them now with their order (99.00 yuan")) &&
                inspect.out.contains(QStringLiteral("payops drain --unmatched")),
            qPrintable(inspect.out));

        drain = cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err));
        QVERIFY2(drain.out.contains(
                     QStringLiteral("processed 1, rejected 0; 0 unmatched callback(s) left")),
                 qPrintable(drain.out));
        db::Connection connection(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            db::scalar(db, QStringLiteral(
                               "SELECT CONCAT(status, ' ', pay_no) FROM orders WHERE id = 5001"))
                .toString(),
            QStringLiteral("PAID LATE-5001"));
        const test::SideEffects effects = test::sideEffectsOf(db, 5001);
        QCOMPARE(effects.coupons, 2);
        QCOMPARE(effects.couponTemplatesTwice, 0);
        QCOMPARE(effects.points, 1);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT points_balance FROM users WHERE id = 1")).toInt(),
            100);
        QCOMPARE(callbackState(scratch.dsn(), "LATE-5001"), QStringLiteral("PROCESSED "));
        QVERIFY(
            db::scalar(db, QStringLiteral(
                               "SELECT instance FROM pay_callback_log WHERE pay_no = 'LATE-5001'"))
                .toString()
                .startsWith(QStringLiteral("drain:")));
        // The drain's evidence: the lock on pay_no around the whole transaction.
        QCOMPARE(db::scalar(
                     db, QStringLiteral(
                             "SELECT COUNT(*) FROM callback_trace WHERE pay_no = 'LATE-5001' AND "
                             "handler = 'drain' "
                             "AND lock_acquired_at <= tx_begin_at AND tx_begin_at <= committed_at "
                             "AND committed_at <= lock_released_at"))
                     .toInt(),
                 1);
        QCOMPARE(
            db::scalar(
                db,
                QStringLiteral(
                    "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'backlog.drain_unmatched' "
                    "AND JSON_VALUE(after_json, '$.processed') = 1 AND actor = 'root@localhost'"))
                .toInt(),
            1);

        // Once is once: neither the platform nor a second drain changes anything now.
        const QString paid = test::businessFingerprint(scratch.dsn());
        QCOMPARE(test::postCallback(endpoint.port(), body).status, 200);
        drain = cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.out.contains(QStringLiteral("processed 0, rejected 0")),
                 qPrintable(drain.out));
        QCOMPARE(test::businessFingerprint(scratch.dsn()), paid);
        QCOMPARE(audits(scratch.dsn()), qint64(1));
        inspect = cli(scratch, {QStringLiteral("inspect")});
        QCOMPARE(inspect.exitCode, 0);
        QVERIFY2(inspect.out.contains(QStringLiteral("no unmatched callbacks")),
                 qPrintable(inspect.out));
    }

    // The order arrived but was paid meanwhile by another payment: the state machine refuses
    // the late one, and it stays visible as a rejection (a double payment to refund).
    void orderAlreadyPaidRejectsTheLatePayment()
    {
        test::ScratchDatabase &scratch = *m_scratch;
        QCOMPARE(sendAheadOfOrder(scratch.dsn(), "LATE-6001", 6001), 200);
        addOrder(scratch.dsn(), 6001);
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("other-channel"));
            db::execDirect(connection.database(),
                           QStringLiteral("UPDATE orders SET status = 'PAID', pay_no = 'ALI-6001', "
                                          "paid_at = NOW(3) WHERE id = 6001"));
        }
        QCOMPARE(cli(scratch, {QStringLiteral("inspect")}).exitCode, 1);
        const test::CliRun drain =
            cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.out.contains(QStringLiteral("processed 0, rejected 1; 0 unmatched")),
                 qPrintable(drain.out + drain.err));
        QCOMPARE(callbackState(scratch.dsn(), "LATE-6001"),
                 QStringLiteral("REJECTED order_already_paid"));
        QCOMPARE(test::count(
                     scratch.dsn(),
                     QStringLiteral("SELECT CONCAT(status, pay_no) = 'PAIDALI-6001' FROM orders")),
                 qint64(1));
        QCOMPARE(test::count(scratch.dsn(), QStringLiteral("SELECT COUNT(*) FROM user_coupon")),
                 qint64(0));
        QCOMPARE(test::count(scratch.dsn(),
                             QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE pay_no = "
                                            "'LATE-6001' AND from_state = 'PAID' "
                                            "AND accepted = 0 AND reason = 'order_already_paid' "
                                            "AND instance LIKE 'drain:%'")),
                 qint64(1));
        // No payment waits any more, but the customer paid twice: a refund owed is a finding.
        const test::CliRun after = cli(scratch, {QStringLiteral("inspect")});
        QCOMPARE(after.exitCode, 1);
        QVERIFY2(after.out.contains(QStringLiteral("unmatched: no unmatched callbacks")) &&
                     after.out.contains(
                         QStringLiteral("paid twice: 1 order(s) paid twice by the customer")),
                 qPrintable(after.out));
    }

    // Recorded in RECORD_ONLY mode for an order not there yet: the backlog drain keeps it as
    // UNMATCHED instead of refusing it for good; the unmatched drain honours the switch.
    void recordedCallbackWithoutItsOrderBecomesUnmatched()
    {
        test::ScratchDatabase &scratch = *m_scratch;
        flip(scratch.dsn(), CallbackMode::RecordOnly);
        QCOMPARE(sendAheadOfOrder(scratch.dsn(), "REC-7001", 7001), 200);
        QCOMPARE(callbackState(scratch.dsn(), "REC-7001"), QStringLiteral("RECORDED "));
        addOrder(scratch.dsn(), 7002);
        const test::CliRun refused =
            cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(QStringLiteral("RECORD_ONLY")), qPrintable(refused.err));

        flip(scratch.dsn(), CallbackMode::Normal);
        const test::CliRun backlog = cli(scratch, {QStringLiteral("drain")});
        QVERIFY2(backlog.out.contains(
                     QStringLiteral("processed 0, rejected 0, ignored 0, unmatched 1; 0 left")),
                 qPrintable(backlog.out + backlog.err));
        QCOMPARE(callbackState(scratch.dsn(), "REC-7001"),
                 QStringLiteral("UNMATCHED unknown_order"));
        QCOMPARE(test::count(scratch.dsn(),
                             QStringLiteral("SELECT JSON_VALUE(after_json, '$.unmatched') FROM "
                                            "ops_audit_log WHERE action = 'backlog.drain'")),
                 qint64(1));

        addOrder(scratch.dsn(), 7001);
        const test::CliRun drain =
            cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.out.contains(QStringLiteral("processed 1, rejected 0")),
                 qPrintable(drain.out + drain.err));
        QCOMPARE(test::count(scratch.dsn(),
                             QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(1));
    }

    // The drain takes the payment's lock before its transaction, as the endpoint does: while
    // someone else holds it, the callback is left for later instead of waited on.
    void drainSkipsAPaymentWhoseLockIsHeld()
    {
        test::ScratchDatabase &scratch = *m_scratch;
        QCOMPARE(sendAheadOfOrder(scratch.dsn(), "LOCK-8001", 8001), 200);
        addOrder(scratch.dsn(), 8001);
        db::Connection holder(scratch.dsn(), QStringLiteral("holder"));
        db::NamedLock lock(holder.database(), db::payNoLockName("LOCK-8001"));
        QVERIFY(lock.acquire(0));
        test::CliRun drain = cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.out.contains(QStringLiteral(
                     "processed 0, rejected 0; 1 unmatched callback(s) left, 0 of them "
                     "still without their order")),
                 qPrintable(drain.out + drain.err));
        QCOMPARE(callbackState(scratch.dsn(), "LOCK-8001"),
                 QStringLiteral("UNMATCHED unknown_order"));
        lock.release();
        drain = cli(scratch, {QStringLiteral("drain"), QStringLiteral("--unmatched")});
        QVERIFY2(drain.out.contains(QStringLiteral("processed 1")),
                 qPrintable(drain.out + drain.err));
    }

    // 200 callbacks ahead of their orders, 150 orders arrive, two drains run at once: each
    // payment is applied exactly once and the other 50 keep waiting.
    void twoDrainsApplyEachOnce()
    {
        constexpr int sent = 200;
        constexpr int arrived = 150;
        test::ScratchDatabase &scratch = *m_scratch;
        {
            test::CallbackdProcess endpoint(scratch.dsn());
            std::atomic<int> next{0};
            std::atomic<int> answered{0};
            std::vector<std::thread> clients;
            for (int c = 0; c < 4; ++c)
                clients.emplace_back([&] {
                    for (int i = next++; i < sent; i = next++) {
                        const qint64 order = 10001 + i;
                        const test::HttpResult result = test::postCallback(
                            endpoint.port(),
                            test::callbackBody("BULK-" + QByteArray::number(order), order, 9900));
                        answered += result.status == 200 && result.body.contains("unknown_order");
                    }
                });
            for (auto &client : clients)
                client.join();
            QCOMPARE(answered.load(), sent);
        }
        addOrder(scratch.dsn(), 10001, arrived);
        QCOMPARE(
            test::count(
                scratch.dsn(),
                QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'UNMATCHED'")),
            qint64(sent));

        QProcess first;
        QProcess second;
        const QStringList arguments{QStringLiteral("drain"), QStringLiteral("--unmatched"),
                                    QStringLiteral("--db"), scratch.dsn().toString()};
        for (QProcess *drainer : {&first, &second})
            drainer->start(test::cliPath(), arguments);
        QVERIFY(first.waitForFinished(120000) && second.waitForFinished(120000));
        const QRegularExpression counts(QStringLiteral("processed (\\d+), rejected (\\d+)"));
        int processed = 0;
        for (QProcess *drainer : {&first, &second}) {
            QCOMPARE(drainer->exitCode(), 0);
            const auto match = counts.match(QString::fromUtf8(drainer->readAllStandardOutput()));
            QVERIFY(match.hasMatch());
            QCOMPARE(match.captured(2).toInt(), 0);
            processed += match.captured(1).toInt();
        }
        QCOMPARE(processed, arrived);

        const Dsn &dsn = scratch.dsn();
        QCOMPARE(
            test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
            qint64(arrived));
        QCOMPARE(test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM user_coupon")),
                 qint64(2 * arrived));
        QCOMPARE(test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM point_log")),
                 qint64(arrived));
        QCOMPARE(test::count(dsn, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(100 * arrived));
        QCOMPARE(test::count(dsn, QStringLiteral(
                                      "SELECT COUNT(*) FROM order_state_log WHERE accepted = 1")),
                 qint64(arrived));
        QCOMPARE(test::count(
                     dsn, QStringLiteral(
                              "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'PROCESSED'")),
                 qint64(arrived));
        QCOMPARE(
            test::count(dsn, QStringLiteral(
                                 "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'UNMATCHED' "
                                 "AND order_id > 10000 + 150")),
            qint64(sent - arrived));
        QCOMPARE(
            test::count(dsn,
                        QStringLiteral(
                            "SELECT SUM(JSON_VALUE(after_json, '$.processed')) FROM ops_audit_log "
                            "WHERE action = 'backlog.drain_unmatched'")),
            qint64(arrived));
        const test::CliRun inspect = cli(scratch, {QStringLiteral("inspect")});
        QCOMPARE(inspect.exitCode, 0);
        QVERIFY2(inspect.out.contains(QStringLiteral("50 unmatched callback(s), 0 of them")),
                 qPrintable(inspect.out));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_scratch;
};

PAYOPS_TEST_MAIN_CORE(TestUnmatched)
#include "tst_unmatched.moc"
