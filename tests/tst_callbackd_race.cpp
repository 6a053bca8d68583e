#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <chrono>
#include <latch>
#include <thread>

using namespace payops;
using namespace std::chrono_literals;

namespace {

// The seed's delivery pattern: the platform's second success callback for the same payment
// reaches the other instance 40 ms after the first.
std::pair<test::HttpResult, test::HttpResult> deliverTwice(int firstPort, int secondPort,
                                                           const QByteArray &body)
{
    test::HttpResult first;
    test::HttpResult second;
    std::thread a([&] { first = test::postCallback(firstPort, body); });
    std::this_thread::sleep_for(40ms);
    std::thread b([&] { second = test::postCallback(secondPort, body); });
    a.join();
    b.join();
    return {first, second};
}

struct Traces
{
    qint64 count = 0;
    qint64 releasedBeforeCommit = 0;
    qint64 secondReadBeforeFirstCommit = 0; // B held the lock before A had committed
};

Traces tracesOf(const QSqlDatabase &db, qint64 orderId)
{
    Traces traces;
    traces.count =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE order_id = ?"),
                   {orderId})
            .toLongLong();
    traces.releasedBeforeCommit =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE order_id = ? AND "
                                  "lock_released_at < committed_at"),
                   {orderId})
            .toLongLong();
    traces.secondReadBeforeFirstCommit =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM callback_trace a JOIN callback_trace b ON "
                                  "b.order_id = a.order_id AND b.id <> a.id "
                                  "WHERE a.order_id = ? AND b.lock_acquired_at > "
                                  "a.lock_acquired_at AND b.lock_acquired_at < a.committed_at"),
                   {orderId})
            .toLongLong();
    return traces;
}

} // namespace

class TestCallbackdRace final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // (a) First prove that these tests can see the bug: the incident's handler, on the
    // incident's schema, pays out twice.
    void unsafeHandlerReproducesTheIncident()
    {
        test::ScratchDatabase scratch(QStringLiteral("unsafe"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 5);
        const QStringList delay{QStringLiteral("--commit-delay-ms"), QStringLiteral("150")};
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("A"),
                                 delay);
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("B"),
                                 delay);

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        for (qint64 order = 1001; order <= 1005; ++order) {
            const auto [first, second] =
                deliverTwice(a.port(), b.port(),
                             test::callbackBody("WX-" + QByteArray::number(order), order, 9900));
            QCOMPARE(first.status, 200);
            QCOMPARE(second.status, 200);
            const test::SideEffects effects = test::sideEffectsOf(db, order);
            QCOMPARE(effects.coupons, 4); // two templates, each issued twice
            QCOMPARE(effects.couponTemplatesTwice, 2);
            QCOMPARE(effects.points, 2); // points added twice
            // ... while the order changed state exactly once and the unique index held.
            QCOMPARE(
                db::scalar(
                    db,
                    QStringLiteral(
                        "SELECT COUNT(*) FROM order_state_log WHERE order_id = ? AND accepted = 1"),
                    {order})
                    .toInt(),
                1);
            QCOMPARE(db::scalar(
                         db,
                         QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE order_id = ?"),
                         {order})
                         .toInt(),
                     1);
            // The evidence names the cause: each lock was released before its commit, and the
            // second callback held the lock before the first had committed.
            const Traces traces = tracesOf(db, order);
            QCOMPARE(traces.count, qint64(2));
            QCOMPARE(traces.releasedBeforeCommit, qint64(2));
            QCOMPARE(traces.secondReadBeforeFirstCommit, qint64(1));
        }
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT SUM(points_balance) FROM users")).toLongLong(),
            qint64(5 * 200));
    }

    // The record-only switch stops the incident's handler too: what arrives after the flip is
    // recorded for the drain, pays nothing out, and a platform retry adds nothing.
    void unsafeHandlerStopsAtTheSwitch()
    {
        test::ScratchDatabase scratch(QStringLiteral("unsafeswitch"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 3);
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("A"));
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(test::postCallback(a.port(), test::callbackBody("WX-1001", 1001, 9900)).status,
                 200);
        QCOMPARE(test::sideEffectsOf(db, 1001).coupons, 2);

        flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("stop the bleeding"));
        for (int copy = 0; copy < 2; ++copy) {
            const auto answer =
                test::postCallback(a.port(), test::callbackBody("WX-1002", 1002, 9900));
            QCOMPARE(answer.status, 200);
            QVERIFY2(answer.body.contains("RECORDED") || answer.body.contains("recorded"),
                     answer.body.constData());
        }
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT status FROM pay_callback_log WHERE pay_no = 'WX-1002'"))
                     .toString(),
                 QStringLiteral("RECORDED"));
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1002")).toString(),
            QStringLiteral("PENDING"));
        QCOMPARE(test::sideEffectsOf(db, 1002).coupons, 0);
        QCOMPARE(test::sideEffectsOf(db, 1002).points, 0);
    }

    void unsafeHandlerRefusesARealDatabase()
    {
        test::ScratchDatabase scratch(QStringLiteral("notsandbox"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("t"));
            db::execDirect(connection.database(),
                           QStringLiteral("DELETE FROM payops_meta WHERE name = 'sandbox'"));
        }
        try {
            test::CallbackdProcess refused(scratch.dsn(), QStringLiteral("unsafe-demo"));
            QFAIL("the unsafe handler started on a database that is not a sandbox");
        } catch (const std::runtime_error &error) {
            QVERIFY2(
                QString::fromUtf8(error.what()).contains(QStringLiteral("not marked as a sandbox")),
                error.what());
        }
    }

    // (b) The same pattern against the safe handler, on both schema levels.
    void safeHandlerPaysOnce_data() { test::addSchemaLevelRows(); }

    void safeHandlerPaysOnce()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("safe"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 20);
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("A"));
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("B"));
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();

        QList<QByteArray> answered;
        // 40 ms apart on two instances.
        for (qint64 order = 1001; order <= 1005; ++order) {
            const QByteArray body =
                test::callbackBody("WX-" + QByteArray::number(order), order, 9900);
            const auto [first, second] = deliverTwice(a.port(), b.port(), body);
            QCOMPARE(first.status, 200);
            QCOMPARE(second.status, 200);
            answered << body;
        }
        // 20 copies at the same instant, alternating between the instances.
        for (qint64 order = 1006; order <= 1010; ++order) {
            const QByteArray body =
                test::callbackBody("WX-" + QByteArray::number(order), order, 9900);
            std::latch start(20);
            std::vector<test::HttpResult> results(20);
            std::vector<std::thread> senders;
            for (int i = 0; i < 20; ++i)
                senders.emplace_back([&, i] {
                    start.arrive_and_wait();
                    results[size_t(i)] = test::postCallback(i % 2 ? b.port() : a.port(), body);
                });
            for (auto &sender : senders)
                sender.join();
            int processed = 0;
            for (const auto &result : results) {
                QVERIFY2(result.status == 200, result.body.constData());
                if (result.status == 200)
                    processed += QJsonDocument::fromJson(result.body)
                                     .object()
                                     .value(QStringLiteral("outcome"))
                                     .toString() == QLatin1String("processed");
            }
            QVERIFY2(processed >= 1, "no copy was answered as processed");
            answered << body;
        }
        for (qint64 order = 1001; order <= 1010; ++order) {
            const test::SideEffects effects = test::sideEffectsOf(db, order);
            QCOMPARE(effects.coupons, 2);
            QCOMPARE(effects.couponTemplatesTwice, 0);
            QCOMPARE(effects.points, 1);
        }
        const qint64 balance =
            db::scalar(db, QStringLiteral("SELECT SUM(points_balance) FROM users")).toLongLong();
        QCOMPARE(balance, qint64(10 * 100));

        // Replays seconds later get the first answer and change nothing.
        QTest::qWait(2000);
        const QString before = test::businessFingerprint(scratch.dsn());
        for (const QByteArray &body : std::as_const(answered)) {
            const test::HttpResult replay = test::postCallback(b.port(), body);
            QCOMPARE(replay.status, 200);
            QVERIFY2(replay.body.contains("\"outcome\":\"processed\""), replay.body.constData());
        }
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);

        // A second payment of an already paid order (another channel) is refused by the
        // state machine: PAID -> PAID, recorded, no side effect.
        const test::HttpResult other =
            test::postCallback(a.port(), test::callbackBody("ALI-1001", 1001, 9900));
        QCOMPARE(other.status, 200);
        QVERIFY(other.body.contains("order_already_paid"));
        QCOMPARE(test::sideEffectsOf(db, 1001).coupons, 2);
        QCOMPARE(
            db::scalar(
                db, QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE order_id = 1001 AND "
                                   "from_state = 'PAID' AND to_state = 'PAID' AND accepted = 0"))
                .toInt(),
            1);

        // Every callback answered 200 is in pay_callback_log, once.
        for (qint64 order = 1001; order <= 1010; ++order)
            QCOMPARE(
                db::scalar(db,
                           QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                           {"WX-" + QByteArray::number(order)})
                    .toInt(),
                1);
        // And the evidence shows every lock released after its commit.
        QCOMPARE(
            db::scalar(
                db,
                QStringLiteral(
                    "SELECT COUNT(*) FROM callback_trace WHERE lock_released_at < committed_at"))
                .toInt(),
            0);

        const test::HttpResult metrics = test::get(a.port(), QStringLiteral("/metrics"));
        QVERIFY(metrics.body.contains("payops_duplicates_suppressed_total{defence=\"replay\"}"));
    }

    // The second defence alone: the incident's handler on a schema whose side effects have
    // their own keys cannot issue a coupon twice.
    void sideEffectKeysStopTheUnsafeHandler()
    {
        test::ScratchDatabase scratch(QStringLiteral("keys"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 3);
        const QStringList delay{QStringLiteral("--commit-delay-ms"), QStringLiteral("150")};
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("A"),
                                 delay);
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("B"),
                                 delay);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        for (qint64 order = 1001; order <= 1003; ++order) {
            deliverTwice(a.port(), b.port(),
                         test::callbackBody("WX-" + QByteArray::number(order), order, 9900));
            const test::SideEffects effects = test::sideEffectsOf(connection.database(), order);
            QCOMPARE(effects.couponTemplatesTwice, 0);
            QCOMPARE(effects.points, 1);
        }
    }
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdRace)
#include "tst_callbackd_race.moc"
