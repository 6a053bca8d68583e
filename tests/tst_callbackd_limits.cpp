#include "callbackfixture.h"
#include "db/connection.h"
#include "db/namedlock.h"
#include "domain/callback/callbackswitch.h"
#include "rawhttp.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <csignal>
#include <future>

using namespace payops;

namespace {

int countCallbacks(const Dsn &dsn, const QByteArray &payNo)
{
    db::Connection connection(dsn, QStringLiteral("count"));
    return db::scalar(connection.database(),
                      QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                      {payNo})
        .toInt();
}

QString orderStatus(const Dsn &dsn, qint64 orderId)
{
    db::Connection connection(dsn, QStringLiteral("status"));
    return db::scalar(connection.database(),
                      QStringLiteral("SELECT status FROM orders WHERE id = ?"), {orderId})
        .toString();
}

// Sessions of this database waiting in GET_LOCK. The state says a session waits; matching the
// statement's text also counted sessions that had merely run it (a loaded CI saw two for one).
int lockWaiters(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("waiters"));
    return db::scalar(connection.database(),
                      QStringLiteral("SELECT COUNT(*) FROM information_schema.processlist WHERE db "
                                     "= ? AND state = 'User lock'"),
                      {dsn.database})
        .toInt();
}

// Holds a payment's lock from outside, as a busy instance would, so that its callback
// stays in flight for as long as the test wants.
class HeldPaymentLock final
{
public:
    HeldPaymentLock(const Dsn &dsn, const QByteArray &payNo)
        : m_connection(dsn, QStringLiteral("holder"))
    {
        QCOMPARE(db::scalar(m_connection.database(), QStringLiteral("SELECT GET_LOCK(?, 5)"),
                            {db::payNoLockName(payNo)})
                     .toInt(),
                 1);
        m_name = db::payNoLockName(payNo);
    }
    void release()
    {
        db::scalar(m_connection.database(), QStringLiteral("SELECT RELEASE_LOCK(?)"), {m_name});
    }

private:
    db::Connection m_connection;
    QString m_name;
};

} // namespace

// The endpoint on the open internet: what idle, slow, huge and pipelined clients cost it,
// over real sockets against a real payops-callbackd and database.
class TestCallbackdLimits final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("limits"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 1400);
    }

    // 500 idle and 50 dripping connections cost descriptors, not threads: another client's
    // 200 callbacks are each answered within 2 s while they are held open.
    void idleAndSlowClientsStallNobody()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--threads"), QStringLiteral("4")});
        test::Crowd crowd(service.port(), 500, 50);
        QCOMPARE(crowd.connected(), 550);
        QTRY_VERIFY_WITH_TIMEOUT(
            test::metric(service.port(), "payops_http_open_connections") >= 550, 5000);

        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(fd >= 0);
        qint64 slowest = 0;
        for (int i = 0; i < 200; ++i) {
            QElapsedTimer timer;
            timer.start();
            QVERIFY(test::sendAll(fd, test::signedPost(test::callbackBody(
                                          "IDLE-" + QByteArray::number(i), 1001 + i, 9900))));
            const auto responses = test::readResponses(fd, 1, 2000);
            QCOMPARE(responses.size(), 1);
            QCOMPARE(responses.first().status, 200);
            slowest = std::max(slowest, timer.elapsed());
        }
        test::closeSocket(fd);
        QVERIFY2(slowest < 2000, qPrintable(QStringLiteral("slowest answer %1 ms").arg(slowest)));
        QCOMPARE(orderStatus(m_db->dsn(), 1200), QStringLiteral("PAID"));
        QCOMPARE(service.terminate(), 0);
    }

    // Eight addresses try to hold more connections than there are slots, each connection
    // sending a cheap GET every 4 s and reconnecting a second after it is closed. Each address
    // keeps only its sixteenth, so a client on a ninth address gets its callbacks answered.
    void eightAddressesCannotTakeEverySlot()
    {
        test::CallbackdProcess service(
            m_db->dsn(), QStringLiteral("safe"), QString(),
            {QStringLiteral("--max-connections"), QStringLiteral("400")});
        test::Occupier attack(service.port(), 2, 8, 60, 4000);
        QTRY_VERIFY_WITH_TIMEOUT(attack.open() >= 8 * 25, 10000);
        QTest::qWait(1000); // every address at its share, its overflow closed and retrying
        expectCallbacksAnswered(service.port(), "SLOT-8-", 1401);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(test::metric(service.port(),
                             "payops_http_connections_closed_total{reason=\"address_limit\"}") > 0);
        QCOMPARE(service.terminate(), 0);
    }

    // Forty addresses, each within its share, together want more than every slot: a newcomer
    // evicts the connection that has been least useful, so the callbacks still get through.
    void aCrowdOfAddressesEvictsTheLeastUseful()
    {
        test::CallbackdProcess service(
            m_db->dsn(), QStringLiteral("safe"), QString(),
            {QStringLiteral("--max-connections"), QStringLiteral("400")});
        test::Occupier attack(service.port(), 30, 40, 20, 4000);
        QTRY_VERIFY_WITH_TIMEOUT(
            test::metric(service.port(),
                         "payops_http_connections_closed_total{reason=\"evicted\"}") > 0,
            10000);
        expectCallbacksAnswered(service.port(), "SLOT-40-", 1601);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(test::metric(service.port(), "payops_http_open_connections") <= 400 + 50);
        QCOMPARE(service.terminate(), 0);
    }

    // Only a signed callback renews a connection's keep-alive time: one polling /healthz is
    // closed as idle, one sending callbacks stays, until its age is up.
    void onlyCallbacksKeepAConnection()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--keep-alive-idle"), QStringLiteral("2"),
                                        QStringLiteral("--max-connection-age"),
                                        QStringLiteral("5")});
        const int polling = test::connectFrom("127.0.0.1", service.port());
        const int paying = test::connectFrom("127.0.0.1", service.port());
        QElapsedTimer timer;
        timer.start();
        qint64 pollingClosedAt = -1, payingClosedAt = -1;
        for (int round = 0; timer.elapsed() < 9000 && payingClosedAt < 0; ++round) {
            if (pollingClosedAt < 0 &&
                (!test::sendAll(polling, "GET /healthz HTTP/1.1\r\nHost: payops\r\n\r\n") ||
                 test::readResponses(polling, 1, 1000).size() != 1))
                pollingClosedAt = timer.elapsed();
            const QByteArray body =
                test::callbackBody("KEEP-" + QByteArray::number(round), 1801 + round, 9900);
            if (!test::sendAll(paying, test::signedPost(body)) ||
                test::readResponses(paying, 1, 1000).size() != 1)
                payingClosedAt = timer.elapsed();
            QTest::qWait(400);
        }
        test::closeSocket(polling);
        test::closeSocket(paying);
        QVERIFY2(pollingClosedAt >= 1500 && pollingClosedAt < 4000,
                 qPrintable(QString::number(pollingClosedAt)));
        QVERIFY2(payingClosedAt >= 4500 && payingClosedAt < 8000,
                 qPrintable(QString::number(payingClosedAt)));
        QCOMPARE(
            test::metric(service.port(), "payops_http_connections_closed_total{reason=\"idle\"}"),
            1);
        QCOMPARE(
            test::metric(service.port(), "payops_http_connections_closed_total{reason=\"age\"}"),
            1);
        QCOMPARE(service.terminate(), 0);
    }

    // A connection dripping its request is closed at the request timeout, however steadily
    // it drips.
    void drippingRequestIsCutAtTheDeadline()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--request-timeout"), QStringLiteral("2")});
        test::Crowd crowd(service.port(), 0, 5);
        QTRY_COMPARE_WITH_TIMEOUT(
            test::metric(service.port(), "payops_http_request_timeouts_total"), 5, 6000);
        QCOMPARE(service.terminate(), 0);
    }

    // A body must declare its length. Any Transfer-Encoding is refused at once, before a byte
    // of the body is read: chunked alone with 400, any other list with 501. libmicrohttpd would
    // answer a huge chunk extension with 500, and wait out the request timeout for the others.
    void transferEncodingsAreRefusedUnread_data()
    {
        QTest::addColumn<QByteArray>("encoding");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<qint64>("afterOrder");
        const QByteArray chunk = "5\r\nhello\r\n0\r\n\r\n";
        QTest::newRow("chunked") << QByteArray("chunked") << chunk << 400 << qint64(1990);
        QTest::newRow("70 KB chunk extension")
            << QByteArray("chunked")
            << "5;ext=" + QByteArray(70 * 1024, 'x') + "\r\nhello\r\n0\r\n\r\n"
            << 400 << qint64(1991);
        QTest::newRow("endless chunked body")
            << QByteArray("chunked") << "10000\r\n" + QByteArray(0x10000, 'a') + "\r\n"
            << 400 << qint64(1992);
        QTest::newRow("chunked, identity")
            << QByteArray("chunked, identity") << chunk << 501 << qint64(1993);
        QTest::newRow("gzip, chunked")
            << QByteArray("gzip, chunked") << chunk << 501 << qint64(1994);
        QTest::newRow("identity") << QByteArray("identity") << chunk << 501 << qint64(1995);
    }
    void transferEncodingsAreRefusedUnread()
    {
        QFETCH(QByteArray, encoding);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(qint64, afterOrder);
        test::CallbackdProcess service(m_db->dsn());
        const qint64 before = test::residentKiB(service.pid());
        const int fd = test::connectFrom("127.0.0.1", service.port());
        QElapsedTimer timer;
        timer.start();
        QVERIFY(test::sendAll(
            fd, "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\nTransfer-Encoding: " + encoding +
                    "\r\n\r\n"));
        // An endless body keeps coming until the endpoint closes the connection.
        for (int sent = 0; sent < 160 && test::sendAll(fd, body); ++sent) {
        }
        const auto responses = test::readResponses(fd, 1, 5000);
        test::closeSocket(fd);
        QCOMPARE(responses.size(), 1);
        QCOMPARE(responses.first().status, status);
        QVERIFY2(timer.elapsed() < test::busyLimitMs(2000),
                 qPrintable(QString::number(timer.elapsed())));
        const qint64 grown = test::residentKiB(service.pid()) - before;
        QVERIFY2(grown < 16 * 1024,
                 qPrintable(QStringLiteral("resident memory grew %1 KiB").arg(grown)));
        // The endpoint goes on serving: a callback sent properly afterwards is paid.
        const QByteArray payNo = "AFTER-TE-" + QByteArray::number(afterOrder);
        QCOMPARE(
            test::postCallback(service.port(), test::callbackBody(payNo, afterOrder, 9900)).status,
            200);
        QCOMPARE(service.terminate(), 0);
    }

    void declaredBodyOverTheLimitIsRefusedUnread()
    {
        test::CallbackdProcess service(
            m_db->dsn(), QStringLiteral("safe"), QString(),
            {QStringLiteral("--max-body-bytes"), QStringLiteral("2048")});
        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(
            fd, "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\nContent-Length: 4096\r\n"
                "Expect: 100-continue\r\n\r\n"));
        const auto responses = test::readResponses(fd, 1, 5000);
        test::closeSocket(fd);
        QCOMPARE(responses.size(), 1);
        QCOMPARE(responses.first().status, 413);
        QCOMPARE(service.terminate(), 0);
    }

    // Requests sent back to back on one connection are each answered, in order.
    void pipelinedRequestsAreAnsweredInOrder()
    {
        test::CallbackdProcess service(m_db->dsn());
        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fd, test::signedPost(test::callbackBody("PIPE-1", 1301, 9900)) +
                                      test::signedPost("{not json") +
                                      test::signedPost(test::callbackBody("PIPE-2", 1302, 9900)) +
                                      "GET /healthz HTTP/1.1\r\nHost: payops\r\n\r\n"));
        const auto responses = test::readResponses(fd, 4, 10000);
        test::closeSocket(fd);
        QCOMPARE(responses.size(), 4);
        QCOMPARE(responses.at(0).status, 200);
        QCOMPARE(responses.at(1).status, 400);
        QCOMPARE(responses.at(2).status, 200);
        QCOMPARE(responses.at(3).status, 200);
        QVERIFY(responses.at(3).body.contains("\"instance\""));
        QCOMPARE(orderStatus(m_db->dsn(), 1301), QStringLiteral("PAID"));
        QCOMPARE(orderStatus(m_db->dsn(), 1302), QStringLiteral("PAID"));
        QCOMPARE(service.terminate(), 0);
    }

    // With one worker busy, a full queue answers 503 at once and a callback that waited past
    // the bound answers 503 without touching the database: neither is recorded.
    void fullQueueAndLongWaitAnswer503AndChangeNothing()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--threads"), QStringLiteral("1"),
                                        QStringLiteral("--queue-depth"), QStringLiteral("2"),
                                        QStringLiteral("--queue-wait-ms"), QStringLiteral("500"),
                                        QStringLiteral("--lock-timeout"), QStringLiteral("30")});
        HeldPaymentLock lock(m_db->dsn(), "Q-BUSY");
        const int port = service.port();
        auto busy = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-BUSY", 1310, 9900));
        });
        QTRY_COMPARE_WITH_TIMEOUT(lockWaiters(m_db->dsn()), 1,
                                  10000); // the one worker waits for Q-BUSY's lock
        auto waited1 = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-WAIT-1", 1311, 9900));
        });
        auto waited2 = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-WAIT-2", 1312, 9900));
        });
        QTRY_COMPARE_WITH_TIMEOUT(test::metric(port, "payops_queue_waiting"), 2, 10000);

        QElapsedTimer timer;
        timer.start();
        const test::HttpResult full =
            test::postCallback(port, test::callbackBody("Q-FULL", 1313, 9900));
        QCOMPARE(full.status, 503);
        QVERIFY(timer.elapsed() < 1000);

        QTest::qWait(700); // past the queue wait
        lock.release();
        QCOMPARE(busy.get().status, 200);
        QCOMPARE(waited1.get().status, 503);
        QCOMPARE(waited2.get().status, 503);
        for (const QByteArray payNo : {"Q-FULL", "Q-WAIT-1", "Q-WAIT-2"})
            QCOMPARE(countCallbacks(m_db->dsn(), payNo), 0);
        for (const qint64 orderId : {1311, 1312, 1313})
            QCOMPARE(orderStatus(m_db->dsn(), orderId), QStringLiteral("PENDING"));
        QCOMPARE(orderStatus(m_db->dsn(), 1310), QStringLiteral("PAID"));
        QCOMPARE(service.terminate(), 0);
    }

    // A callback's transaction waits for a row no longer than --lock-timeout, in both modes (a
    // callback paid one at a time, a record-only batch): then 503, and nothing of it stays. The
    // server's own wait is 50 s, long after the platform gave up on the answer. A session
    // holding the switch's row, as a flip does, is what each waits for here.
    void aRowHeldPastTheLockTimeoutAnswers503AndChangesNothing()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--lock-timeout"), QStringLiteral("1")});
        const int port = service.port();
        const auto postWhileTheSwitchIsHeld = [&](const QByteArray &payNo, qint64 orderId) {
            db::Connection holder(m_db->dsn(), QStringLiteral("switch-holder"));
            db::execDirect(holder.database(), QStringLiteral("BEGIN"));
            db::execDirect(
                holder.database(),
                QStringLiteral("SELECT mode FROM callback_switch WHERE id = 1 FOR UPDATE"));
            QElapsedTimer waited;
            waited.start();
            const test::HttpResult answered =
                test::postCallback(port, test::callbackBody(payNo, orderId, 9900));
            const qint64 waitedMs = waited.elapsed();
            db::execDirect(holder.database(), QStringLiteral("ROLLBACK"));
            QCOMPARE(answered.status, 503);
            QVERIFY2(waitedMs < 20000,
                     qPrintable(QStringLiteral("answered after %1 ms").arg(waitedMs)));
            QCOMPARE(countCallbacks(m_db->dsn(), payNo), 0);
            QCOMPARE(orderStatus(m_db->dsn(), orderId), QStringLiteral("PENDING"));
            // The platform's retry, once the row is free, is taken.
            QCOMPARE(test::postCallback(port, test::callbackBody(payNo, orderId, 9900)).status,
                     200);
            QCOMPARE(countCallbacks(m_db->dsn(), payNo), 1);
        };
        const auto setMode = [&](CallbackMode mode) {
            db::Connection admin(m_db->dsn(), QStringLiteral("mode"));
            flipSwitch(admin.database(), mode, QStringLiteral("row-lock bound test"));
            QTRY_COMPARE_WITH_TIMEOUT(
                QJsonDocument::fromJson(test::get(port, QStringLiteral("/healthz")).body)
                    .object()
                    .value(QStringLiteral("mode"))
                    .toString(),
                callbackModeName(mode), 10000);
        };

        postWhileTheSwitchIsHeld("ROW-NORMAL", 1340);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(orderStatus(m_db->dsn(), 1340), QStringLiteral("PAID"));
        setMode(CallbackMode::RecordOnly);
        postWhileTheSwitchIsHeld("ROW-RECORD-ONLY", 1341);
        setMode(CallbackMode::Normal);
        QCOMPARE(service.terminate(), 0);
    }

    // SIGTERM while attacked: the callback in flight is answered and committed, new
    // connections are refused, and the process exits 0.
    void sigtermUnderAttackFinishesTheCallbackInFlight()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--lock-timeout"), QStringLiteral("30")});
        test::Crowd crowd(service.port(), 300, 30);
        HeldPaymentLock lock(m_db->dsn(), "TERM-1");
        const int port = service.port();
        auto inFlight = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("TERM-1", 1320, 9900));
        });
        QTRY_COMPARE_WITH_TIMEOUT(lockWaiters(m_db->dsn()), 1, 10000);
        ::kill(pid_t(service.pid()), SIGTERM);
        QTest::qWait(500);
        QCOMPARE(test::get(port, QStringLiteral("/healthz")).status, 0); // no longer accepting
        lock.release();
        const test::HttpResult answered = inFlight.get();
        QCOMPARE(answered.status, 200);
        QVERIFY(answered.body.contains("processed"));
        QCOMPARE(service.terminate(), 0);
        QCOMPARE(orderStatus(m_db->dsn(), 1320), QStringLiteral("PAID"));
    }

    void headersOverTheLimitAreRefused()
    {
        test::CallbackdProcess service(m_db->dsn());
        const int fits = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fits, "GET /healthz HTTP/1.1\r\nHost: payops\r\nX-Padding: " +
                                        QByteArray(12000, 'a') + "\r\n\r\n"));
        const auto answered = test::readResponses(fits, 1, 5000);
        test::closeSocket(fits);
        QCOMPARE(answered.size(), 1);
        QCOMPARE(answered.first().status, 200);

        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: payops\r\nX-Padding: " +
                                      QByteArray(40000, 'a') + "\r\n\r\n"));
        const auto responses = test::readResponses(fd, 1, 5000);
        test::closeSocket(fd);
        QCOMPARE(responses.size(), 1);
        QCOMPARE(responses.first().status, 431);
        QCOMPARE(test::get(service.port(), QStringLiteral("/healthz")).status, 200);
        QCOMPARE(service.terminate(), 0);
    }

    // A port in use is an error, not a silent share of the traffic; so is a live instance's
    // name, unless --take-over says it is gone.
    void portAndInstanceNameInUseAreRefused()
    {
        test::CallbackdProcess first(m_db->dsn(), QStringLiteral("safe"),
                                     QStringLiteral("limits-a"));
        const QStringList common{QStringLiteral("--db"), m_db->dsn().toString(true),
                                 QStringLiteral("--secret-file"), test::secretFilePath()};
        QProcess second;
        second.start(test::callbackdPath(),
                     common + QStringList{QStringLiteral("--listen"),
                                          QStringLiteral("127.0.0.1:%1").arg(first.port())});
        QVERIFY(second.waitForFinished(20000));
        QCOMPARE(second.exitCode(), 2);
        const QString portError = QString::fromUtf8(second.readAllStandardError()).trimmed();
        QVERIFY2(portError.contains(QStringLiteral("already in use")) &&
                     !portError.contains(QLatin1Char('\n')),
                 qPrintable(portError));

        QProcess sameName;
        sameName.start(test::callbackdPath(), common + QStringList{QStringLiteral("--listen"),
                                                                   QStringLiteral("127.0.0.1:0"),
                                                                   QStringLiteral("--instance"),
                                                                   QStringLiteral("limits-a")});
        QVERIFY(sameName.waitForFinished(20000));
        QCOMPARE(sameName.exitCode(), 2);
        QVERIFY(QString::fromUtf8(sameName.readAllStandardError())
                    .contains(QStringLiteral("in use by a live")));

        test::CallbackdProcess takeOver(m_db->dsn(), QStringLiteral("safe"),
                                        QStringLiteral("limits-a"),
                                        {QStringLiteral("--take-over")});
        QCOMPARE(takeOver.terminate(), 0);
        QCOMPARE(first.terminate(), 0);
    }

private:
    // A client on an address of its own sends 200 signed callbacks, each on a new connection.
    static void expectCallbacksAnswered(int port, const QByteArray &payNoPrefix,
                                        qint64 firstOrderId)
    {
        const QString problem = test::shortOfTheBar(
            test::sendCallbacksFrom("127.0.0.250", port, payNoPrefix, firstOrderId, 200, 5000, 2),
            200, test::busyLimitMs(1000));
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    std::unique_ptr<test::ScratchDatabase> m_db;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdLimits)
#include "tst_callbackd_limits.moc"
