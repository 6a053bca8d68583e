#include "callbackfixture.h"
#include "db/connection.h"
#include "db/namedlock.h"
#include "rawhttp.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QProcess>

#include <csignal>
#include <future>

using namespace payops;

namespace {

int countCallbacks(const Dsn &dsn, const QByteArray &payNo)
{
    db::Connection connection(dsn, QStringLiteral("count"));
    return db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                      {payNo}).toInt();
}

QString orderStatus(const Dsn &dsn, qint64 orderId)
{
    db::Connection connection(dsn, QStringLiteral("status"));
    return db::scalar(connection.database(), QStringLiteral("SELECT status FROM orders WHERE id = ?"), {orderId}).toString();
}

// Sessions of this database waiting in GET_LOCK.
int lockWaiters(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("waiters"));
    return db::scalar(connection.database(), QStringLiteral(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = ? AND info LIKE '%GET_LOCK%' "
        "AND id <> CONNECTION_ID()"), {dsn.database}).toInt();
}

qint64 metric(int port, const QByteArray &name)
{
    for (const QByteArray &line : test::get(port, QStringLiteral("/metrics")).body.split('\n')) {
        if (line.startsWith(name + ' '))
            return line.mid(name.size() + 1).toLongLong();
    }
    return -1;
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
                            {db::payNoLockName(payNo)}).toInt(), 1);
        m_name = db::payNoLockName(payNo);
    }
    void release() { db::scalar(m_connection.database(), QStringLiteral("SELECT RELEASE_LOCK(?)"), {m_name}); }

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
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 400);
    }

    // 500 idle and 50 dripping connections cost descriptors, not threads: another client's
    // 200 callbacks are each answered within 2 s while they are held open.
    void idleAndSlowClientsStallNobody()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(), {QStringLiteral("--threads"), QStringLiteral("4")});
        test::Crowd crowd(service.port(), 500, 50);
        QCOMPARE(crowd.connected(), 550);
        QTRY_VERIFY_WITH_TIMEOUT(metric(service.port(), "payops_http_open_connections") >= 550, 5000);

        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(fd >= 0);
        qint64 slowest = 0;
        for (int i = 0; i < 200; ++i) {
            QElapsedTimer timer;
            timer.start();
            QVERIFY(test::sendAll(fd, test::signedPost(test::callbackBody("IDLE-" + QByteArray::number(i), 1001 + i, 9900))));
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

    // A connection dripping its request is closed at the request timeout, however steadily
    // it drips.
    void drippingRequestIsCutAtTheDeadline()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--request-timeout"), QStringLiteral("2")});
        test::Crowd crowd(service.port(), 0, 5);
        QTRY_COMPARE_WITH_TIMEOUT(metric(service.port(), "payops_http_request_timeouts_total"), 5, 6000);
        QCOMPARE(service.terminate(), 0);
    }

    // A chunked body has no length to refuse up front: it is counted as it is decoded and
    // refused at the limit, without the process holding what the client sends.
    void endlessChunkedBodyIsRefusedAtTheLimit()
    {
        test::CallbackdProcess service(m_db->dsn());
        const qint64 before = test::residentKiB(service.pid());
        QVERIFY(before > 0);
        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fd, "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\nTransfer-Encoding: chunked\r\n\r\n"));
        const QByteArray chunk = "10000\r\n" + QByteArray(0x10000, 'a') + "\r\n";
        qint64 sent = 0;
        while (sent < 10 * 1024 * 1024 && test::sendAll(fd, chunk))
            sent += 0x10000;
        const auto responses = test::readResponses(fd, 1, 5000);
        test::closeSocket(fd);
        QCOMPARE(responses.size(), 1);
        QCOMPARE(responses.first().status, 413);
        QCOMPARE(metric(service.port(), "payops_callbacks_total{outcome=\"too_large\"}"), 1);
        const qint64 grown = test::residentKiB(service.pid()) - before;
        QVERIFY2(grown < 16 * 1024, qPrintable(QStringLiteral("resident memory grew %1 KiB").arg(grown)));
        QCOMPARE(test::postCallback(service.port(), test::callbackBody("AFTER-413", 1300, 9900)).status, 200);
        QCOMPARE(service.terminate(), 0);
    }

    void declaredBodyOverTheLimitIsRefusedUnread()
    {
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(),
                                       {QStringLiteral("--max-body-bytes"), QStringLiteral("2048")});
        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fd, "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\nContent-Length: 4096\r\n"
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
        QVERIFY(test::sendAll(fd, test::signedPost(test::callbackBody("PIPE-1", 1301, 9900))
                                      + test::signedPost("{not json")
                                      + test::signedPost(test::callbackBody("PIPE-2", 1302, 9900))
                                      + "GET /healthz HTTP/1.1\r\nHost: payops\r\n\r\n"));
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
                                       {QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--queue-depth"),
                                        QStringLiteral("2"), QStringLiteral("--queue-wait-ms"), QStringLiteral("500"),
                                        QStringLiteral("--lock-timeout"), QStringLiteral("30")});
        HeldPaymentLock lock(m_db->dsn(), "Q-BUSY");
        const int port = service.port();
        auto busy = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-BUSY", 1310, 9900));
        });
        QTRY_COMPARE_WITH_TIMEOUT(lockWaiters(m_db->dsn()), 1, 10000); // the one worker waits for Q-BUSY's lock
        auto waited1 = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-WAIT-1", 1311, 9900));
        });
        auto waited2 = std::async(std::launch::async, [port] {
            return test::postCallback(port, test::callbackBody("Q-WAIT-2", 1312, 9900));
        });
        QTRY_COMPARE_WITH_TIMEOUT(metric(port, "payops_queue_waiting"), 2, 10000);

        QElapsedTimer timer;
        timer.start();
        const test::HttpResult full = test::postCallback(port, test::callbackBody("Q-FULL", 1313, 9900));
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
        QVERIFY(test::sendAll(fits, "GET /healthz HTTP/1.1\r\nHost: payops\r\nX-Padding: " + QByteArray(12000, 'a')
                                        + "\r\n\r\n"));
        const auto answered = test::readResponses(fits, 1, 5000);
        test::closeSocket(fits);
        QCOMPARE(answered.size(), 1);
        QCOMPARE(answered.first().status, 200);

        const int fd = test::connectFrom("127.0.0.1", service.port());
        QVERIFY(test::sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: payops\r\nX-Padding: " + QByteArray(40000, 'a')
                                      + "\r\n\r\n"));
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
        test::CallbackdProcess first(m_db->dsn(), QStringLiteral("safe"), QStringLiteral("limits-a"));
        const QStringList common{QStringLiteral("--db"), m_db->dsn().toString(true), QStringLiteral("--secret-file"),
                                 test::secretFilePath()};
        QProcess second;
        second.start(test::callbackdPath(), common + QStringList{QStringLiteral("--listen"),
                                                                QStringLiteral("127.0.0.1:%1").arg(first.port())});
        QVERIFY(second.waitForFinished(20000));
        QCOMPARE(second.exitCode(), 2);
        const QString portError = QString::fromUtf8(second.readAllStandardError()).trimmed();
        QVERIFY2(portError.contains(QStringLiteral("already in use")) && !portError.contains(QLatin1Char('\n')),
                 qPrintable(portError));

        QProcess sameName;
        sameName.start(test::callbackdPath(), common + QStringList{QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                                                                  QStringLiteral("--instance"), QStringLiteral("limits-a")});
        QVERIFY(sameName.waitForFinished(20000));
        QCOMPARE(sameName.exitCode(), 2);
        QVERIFY(QString::fromUtf8(sameName.readAllStandardError()).contains(QStringLiteral("in use by a live")));

        test::CallbackdProcess takeOver(m_db->dsn(), QStringLiteral("safe"), QStringLiteral("limits-a"),
                                        {QStringLiteral("--take-over")});
        QCOMPARE(takeOver.terminate(), 0);
        QCOMPARE(first.terminate(), 0);
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdLimits)
#include "tst_callbackd_limits.moc"
