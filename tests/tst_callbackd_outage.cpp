#include "callbackfixture.h"
#include "db/connection.h"
#include "lab/localserver.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <thread>

using namespace payops;
using namespace std::chrono_literals;

namespace {

// Everything that was committed is whole: no callback stuck half-way, every paid order
// paid once with exactly its side effects.
void verifyNothingHalfWritten(const QSqlDatabase &db)
{
    QCOMPARE(
        db::scalar(
            db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status <> 'PROCESSED'"))
            .toInt(),
        0);
    QCOMPARE(
        db::scalar(
            db,
            QStringLiteral(
                "SELECT COUNT(*) FROM orders o LEFT JOIN pay_callback_log c ON c.order_id = o.id "
                "WHERE (o.status = 'PAID') <> (c.id IS NOT NULL)"))
            .toInt(),
        0);
    QCOMPARE(
        db::scalar(db, QStringLiteral(
                           "SELECT COUNT(*) FROM orders o WHERE o.status = 'PAID' AND "
                           "((SELECT COUNT(*) FROM user_coupon u WHERE u.order_id = o.id) <> 2 OR "
                           " (SELECT COUNT(*) FROM point_log p WHERE p.order_id = o.id) <> 1)"))
            .toInt(),
        0);
    QCOMPARE(
        db::scalar(db,
                   QStringLiteral(
                       "SELECT COUNT(*) FROM user_coupon u LEFT JOIN orders o ON o.id = u.order_id "
                       "WHERE o.status <> 'PAID'"))
            .toInt(),
        0);
}

} // namespace

class TestCallbackdOutage final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // (f) The database goes away mid-storm: answers turn 503, nothing is half-written, and
    // once it is back every callback the platform retries lands exactly once.
    void databaseStoppedMidStorm()
    {
        QTemporaryDir dir(QStringLiteral("/tmp/payops-out-XXXXXX"));
        LocalServer server(dir.path());
        server.start();
        const Dsn dsn = server.rootDsn(QStringLiteral("outage"));
        {
            db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
            db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE outage"));
        }
        constexpr int kOrders = 300;
        test::prepareCallbackDatabase(dsn, QStringLiteral("current"), kOrders);
        test::CallbackdProcess service(dsn);

        std::atomic<int> next{0};
        std::atomic<int> landed{0};
        std::atomic<int> unavailable{0};
        std::atomic<int> unexpected{0};
        std::vector<std::thread> platform;
        for (int c = 0; c < 6; ++c)
            platform.emplace_back([&] {
                for (int i = next++; i < kOrders; i = next++) {
                    const qint64 order = 1001 + i;
                    const QByteArray body =
                        test::callbackBody("WX-" + QByteArray::number(order), order, 9900);
                    // A platform retries until it gets a 2xx.
                    for (int attempt = 0; attempt < 600; ++attempt) {
                        const int status = test::postCallback(service.port(), body).status;
                        if (status == 200) {
                            ++landed;
                            break;
                        }
                        if (status == 503)
                            ++unavailable;
                        else
                            ++unexpected;
                        std::this_thread::sleep_for(50ms);
                    }
                }
            });
        QTRY_VERIFY_WITH_TIMEOUT(landed.load() >= kOrders / 4, 60000);
        QVERIFY(server.stop());
        QTRY_VERIFY_WITH_TIMEOUT(unavailable.load() >= 20, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(test::get(service.port(), QStringLiteral("/healthz")).status, 503,
                                  5000);
        const int landedDuringOutage = landed.load();
        server.start();
        for (auto &thread : platform)
            thread.join();

        QCOMPARE(unexpected.load(), 0);
        QCOMPARE(landed.load(), kOrders);
        QVERIFY(landedDuringOutage < kOrders);
        db::Connection connection(dsn, QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
                     .toInt(),
                 kOrders);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")).toInt(),
                 kOrders);
        verifyNothingHalfWritten(db);
        QTRY_COMPARE_WITH_TIMEOUT(test::get(service.port(), QStringLiteral("/healthz")).status, 200,
                                  5000);
        QCOMPARE(service.terminate(), 0);
        server.stop();
    }

    // (g) SIGTERM mid-storm: the service finishes what it accepted and loses nothing it
    // answered 200.
    void sigtermMidStormLosesNothingAnswered()
    {
        test::ScratchDatabase scratch(QStringLiteral("sigterm"));
        constexpr int kOrders = 400;
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), kOrders);
        test::CallbackdProcess service(scratch.dsn());

        std::vector<int> status(kOrders, -1);
        std::atomic<int> next{0};
        std::atomic<int> answered{0};
        std::vector<std::thread> platform;
        for (int c = 0; c < 8; ++c)
            platform.emplace_back([&] {
                for (int i = next++; i < kOrders; i = next++) {
                    const qint64 order = 1001 + i;
                    status[size_t(i)] =
                        test::postCallback(
                            service.port(),
                            test::callbackBody("WX-" + QByteArray::number(order), order, 9900))
                            .status;
                    ++answered;
                }
            });
        QTRY_VERIFY_WITH_TIMEOUT(answered.load() >= kOrders / 3, 60000);
        QCOMPARE(service.terminate(), 0);
        for (auto &thread : platform)
            thread.join();

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        int ok = 0;
        for (int i = 0; i < kOrders; ++i) {
            if (status[size_t(i)] != 200)
                continue;
            ++ok;
            const qint64 order = 1001 + i;
            QCOMPARE(
                db::scalar(db,
                           QStringLiteral("SELECT status FROM pay_callback_log WHERE order_id = ?"),
                           {order})
                    .toString(),
                QStringLiteral("PROCESSED"));
            QCOMPARE(test::sideEffectsOf(db, order).coupons, 2);
        }
        QVERIFY(ok >= kOrders / 3);
        QVERIFY2(ok < kOrders, "the storm ended before the signal; nothing was proven");
        verifyNothingHalfWritten(db);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT stopped_at IS NOT NULL FROM callback_instance"))
                .toInt(),
            1);
    }

    // The server ends the connection after COMMIT was executed, so its reply never arrives
    // (PAYOPS_TEST_LOSE_COMMIT_REPLY: the server kills the session right after the commit).
    // The callback was applied: the endpoint looks its pay_no up on a new connection and
    // answers 200 from what it stored, instead of a 503 that would hide a payment made.
    void lostCommitReplyIsAnsweredFromWhatWasStored()
    {
        test::ScratchDatabase scratch(QStringLiteral("lostreply"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 10);
        qputenv("PAYOPS_TEST_LOSE_COMMIT_REPLY", "LOST-1");
        test::CallbackdProcess service(scratch.dsn());
        qunsetenv("PAYOPS_TEST_LOSE_COMMIT_REPLY");

        const test::HttpResult first =
            test::postCallback(service.port(), test::callbackBody("LOST-1", 1001, 9900));
        QCOMPARE(first.status, 200);
        // The answer came from the stored callback: the connection that committed it was gone.
        const test::HttpResult metrics = test::get(service.port(), QStringLiteral("/metrics"));
        QVERIFY(metrics.body.contains("payops_callbacks_total{outcome=\"replayed\"} 1\n"));
        const test::HttpResult again =
            test::postCallback(service.port(), test::callbackBody("LOST-1", 1001, 9900));
        QCOMPARE(again.status, 200);
        QCOMPARE(again.body, first.body);

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            db::scalar(
                db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = 'LOST-1'"))
                .toInt(),
            1);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1001")).toString(),
            QStringLiteral("PAID"));
        QCOMPARE(test::sideEffectsOf(db, 1001).coupons, 2);
        QCOMPARE(test::sideEffectsOf(db, 1001).points, 1);
        verifyNothingHalfWritten(db);
        // Another callback on the same endpoint is paid as usual.
        QCOMPARE(
            test::postCallback(service.port(), test::callbackBody("LOST-2", 1002, 9900)).status,
            200);
        QCOMPARE(service.terminate(), 0);
    }
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdOutage)
#include "tst_callbackd_outage.moc"
