// A gateway in front of a handler that misbehaves the ways real handlers do: slower than the
// platform waits, never answering, cutting its answer, closing a kept-alive connection after
// reading a request; and a gateway whose database connections are killed mid-forward. However
// often the platform delivers meanwhile, each payment reaches the handler once at a time: a
// second forward starts only after the first's connection has ended, and only when the first got
// no final answer. Real processes, real HTTP, a real MariaDB; the gateways connect as an account
// holding only payops_endpoint.
#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/callbacktrace.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QDeadlineTimer>
#include <QHash>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

using namespace payops;
using namespace std::chrono_literals;

namespace {

// What the raw handler does with one request, by its number on its connection (0 first).
enum class Behaviour {
    Answer,        // 200 with a success body, connection kept alive
    CutAnswer,     // the status line and half the body it announces, then close
    CloseSilently, // read the whole request, close without a byte
    Hang,          // read the whole request, say nothing until the gateway closes
};

// A handler on a raw socket, so that it can do what no HTTP library lets a handler do. It keeps
// every request's pay_no with the time it arrived, and when each connection was closed.
class RawUpstream final
{
public:
    explicit RawUpstream(std::function<Behaviour(int requestOnConnection)> behaviour)
        : m_behaviour(std::move(behaviour))
    {
        m_listener = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(m_listener, reinterpret_cast<sockaddr *>(&address), sizeof address);
        ::listen(m_listener, 64);
        socklen_t length = sizeof address;
        ::getsockname(m_listener, reinterpret_cast<sockaddr *>(&address), &length);
        m_port = ntohs(address.sin_port);
        m_acceptor = std::thread([this] { acceptLoop(); });
    }

    ~RawUpstream()
    {
        m_stopping = true;
        ::shutdown(m_listener, SHUT_RDWR);
        m_acceptor.join();
        for (std::thread &connection : m_connections)
            connection.join();
        ::close(m_listener);
    }

    QString url() const { return QStringLiteral("http://127.0.0.1:%1/notify").arg(m_port); }

    struct Arrival
    {
        QByteArray payNo;
        qint64 micros = 0;
        int connection = 0;
    };
    QList<Arrival> arrivals() const
    {
        std::lock_guard lock(m_mutex);
        return m_arrivals;
    }
    qint64 closedMicros(int connection) const
    {
        std::lock_guard lock(m_mutex);
        return m_closed.value(connection);
    }

private:
    void acceptLoop()
    {
        for (int number = 0;; ++number) {
            const int fd = ::accept(m_listener, nullptr, nullptr);
            if (fd < 0)
                return;
            m_connections.emplace_back([this, fd, number] { serve(fd, number); });
        }
    }

    // The next request on the connection, or an empty pay_no when it closed.
    static QByteArray readRequest(int fd, QByteArray &buffer)
    {
        for (;;) {
            const qsizetype end = buffer.indexOf("\r\n\r\n");
            if (end >= 0) {
                const QByteArray head = buffer.left(end);
                qsizetype length = 0;
                QByteArray payNo;
                for (const QByteArray &line : head.split('\n')) {
                    const QByteArray lower = line.trimmed().toLower();
                    if (lower.startsWith("content-length:"))
                        length = lower.mid(15).trimmed().toLongLong();
                    if (lower.startsWith("x-payops-pay-no:"))
                        payNo = line.trimmed().mid(16).trimmed();
                }
                if (buffer.size() >= end + 4 + length) {
                    buffer.remove(0, end + 4 + length);
                    return payNo.isEmpty() ? QByteArray("-") : payNo;
                }
            }
            char chunk[4096];
            const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
            if (got <= 0)
                return {};
            buffer.append(chunk, qsizetype(got));
        }
    }

    void serve(int fd, int connection)
    {
        QByteArray buffer;
        for (int request = 0; !m_stopping; ++request) {
            const QByteArray payNo = readRequest(fd, buffer);
            if (payNo.isEmpty())
                break;
            {
                std::lock_guard lock(m_mutex);
                m_arrivals.append({payNo, nowMicros(), connection});
            }
            const Behaviour behaviour = m_behaviour(request);
            if (behaviour == Behaviour::Answer) {
                const QByteArray answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                          "Content-Length: 20\r\n\r\n{\"code\":\"SUCCESS\"}  ";
                ::send(fd, answer.constData(), size_t(answer.size()), MSG_NOSIGNAL);
                continue;
            }
            if (behaviour == Behaviour::CutAnswer) {
                const QByteArray cut = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                       "Content-Length: 100\r\n\r\n{\"code\":\"SUC";
                ::send(fd, cut.constData(), size_t(cut.size()), MSG_NOSIGNAL);
            }
            if (behaviour == Behaviour::Hang) {
                char byte;
                while (::recv(fd, &byte, 1, 0) > 0) {
                }
            }
            break;
        }
        ::close(fd);
        std::lock_guard lock(m_mutex);
        m_closed.insert(connection, nowMicros());
    }

    std::function<Behaviour(int)> m_behaviour;
    int m_listener = -1;
    int m_port = 0;
    std::atomic<bool> m_stopping{false};
    std::thread m_acceptor;
    std::vector<std::thread> m_connections;
    mutable std::mutex m_mutex;
    QList<Arrival> m_arrivals;
    QHash<int, qint64> m_closed;
};

QByteArray bodyOf(const QByteArray &payNo, int i)
{
    return test::callbackBody(payNo, 1001 + i, 9900);
}

QString rowOf(const QSqlDatabase &db, const QByteArray &payNo)
{
    return db::scalar(db,
                      QStringLiteral("SELECT CONCAT(status, ' ', forwards) FROM pay_callback_log "
                                     "WHERE pay_no = ?"),
                      {payNo})
        .toString();
}

// The statuses of a list of answers, as "200 503 504", for messages.
QString statusesOf(const std::vector<test::HttpResult> &answers)
{
    QStringList statuses;
    for (const test::HttpResult &answer : answers)
        statuses << QString::number(answer.status);
    return statuses.join(u' ');
}

} // namespace

class TestGatewayFaults final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
    }

    // The platform waits 1 s; the handler takes 2.5 s. Each of 10 payments is delivered twice
    // 30 ms apart and retried after the first answer: one forward each. The delivery whose claim
    // won is answered 504 when the platform's time is up, the others 503 while the forward is
    // out; a delivery after the handler answered gets that answer from the row.
    void aSlowHandlerGetsEachPaymentOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwfslow"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 10);
        test::CountingUpstream upstream(0, {}, 2500);
        const auto service = gateway(scratch, upstream.url(),
                                     {QStringLiteral("--upstream-timeout"), QStringLiteral("1")});

        constexpr int kPayments = 10;
        std::vector<std::vector<test::HttpResult>> answers(kPayments);
        std::vector<std::thread> platform;
        for (int i = 0; i < kPayments; ++i)
            platform.emplace_back([&, i] {
                const QByteArray payNo = "GWS-" + QByteArray::number(i);
                test::HttpResult copy;
                std::thread second([&] {
                    std::this_thread::sleep_for(30ms);
                    copy = test::postCallback(service->port(), bodyOf(payNo, i));
                });
                const test::HttpResult first =
                    test::postCallback(service->port(), bodyOf(payNo, i));
                second.join();
                const test::HttpResult retry =
                    test::postCallback(service->port(), bodyOf(payNo, i));
                answers[size_t(i)] = {first, copy, retry};
            });
        for (std::thread &thread : platform)
            thread.join();
        std::this_thread::sleep_for(2s); // the handler's answers arrive and are stored

        QCOMPARE(upstream.count(), kPayments);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        for (int i = 0; i < kPayments; ++i) {
            const QByteArray payNo = "GWS-" + QByteArray::number(i);
            const auto &got = answers[size_t(i)];
            // Whichever of the two copies claimed first (on a loaded machine it may be the
            // later) was answered 504 at the platform's time, the other 503.
            QVERIFY2(std::min(got[0].status, got[1].status) == 503 &&
                         std::max(got[0].status, got[1].status) == 504 && got[2].status == 503,
                     qPrintable(statusesOf(got)));
            QCOMPARE(rowOf(root.database(), payNo), QStringLiteral("FORWARDED 1"));
            const test::HttpResult later = test::postCallback(service->port(), bodyOf(payNo, i));
            QCOMPARE(later.status, 200);
            QCOMPARE(later.body, upstream.answerBodyFor(payNo));
        }
        QCOMPARE(upstream.count(), kPayments);
        QCOMPARE(service->terminate(), 0);
    }

    // The gateway's database connections are killed while the handler works, and a copy comes
    // meanwhile: the claim is a committed row, so the copy is not forwarded, and the first
    // delivery's answer is stored on a new connection and passed on. While the forward is out
    // the gateway holds no transaction open, so the server's idle_transaction_timeout has
    // nothing to end either.
    void killedConnectionsKeepTheClaim()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwfkill"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 5);
        test::CountingUpstream upstream(0, {}, 2000);
        const auto service = gateway(scratch, upstream.url(), {});
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        const QString account = m_endpoint->user();

        constexpr int kPayments = 5;
        std::vector<test::HttpResult> first(kPayments);
        std::vector<std::thread> platform;
        for (int i = 0; i < kPayments; ++i)
            platform.emplace_back([&, i] {
                first[size_t(i)] =
                    test::postCallback(service->port(), bodyOf("GWK-" + QByteArray::number(i), i));
            });
        // Everything measured before the first check: a failed check returns at once, and the
        // platform's threads must be joined first.
        QDeadlineTimer reached(5000);
        while (upstream.count() < kPayments && !reached.hasExpired())
            std::this_thread::sleep_for(20ms);
        const int forwardsOut = upstream.count();
        const int open = db::scalar(db,
                                    QStringLiteral("SELECT COUNT(*) FROM information_schema."
                                                   "innodb_trx t JOIN information_schema."
                                                   "processlist p ON p.id = t.trx_mysql_thread_id "
                                                   "WHERE p.user = ?"),
                                    {account})
                             .toInt();
        QSqlQuery sessions = db::exec(
            db, QStringLiteral("SELECT id FROM information_schema.processlist WHERE user = ?"),
            {account});
        int killed = 0;
        while (sessions.next()) {
            db::exec(db, QStringLiteral("KILL CONNECTION %1").arg(sessions.value(0).toLongLong()));
            ++killed;
        }
        std::vector<int> copies;
        for (int i = 0; i < kPayments; ++i)
            copies.push_back(
                test::postCallback(service->port(), bodyOf("GWK-" + QByteArray::number(i), i))
                    .status);
        for (std::thread &thread : platform)
            thread.join();

        QCOMPARE(forwardsOut, kPayments);
        QCOMPARE(open, 0);
        QVERIFY(killed > 0);
        QCOMPARE(copies, std::vector<int>(kPayments, 503));
        QCOMPARE(upstream.count(), kPayments);
        for (int i = 0; i < kPayments; ++i) {
            const QByteArray payNo = "GWK-" + QByteArray::number(i);
            QCOMPARE(first[size_t(i)].status, 200);
            QCOMPARE(first[size_t(i)].body, upstream.answerBodyFor(payNo));
            QCOMPARE(rowOf(db, payNo), QStringLiteral("FORWARDED 1"));
        }
        QCOMPARE(service->terminate(), 0);
    }

    // A SUCCESS that comes while the forward of the same payment's earlier notice is out: it
    // is answered 503 and not stored over the notice, whose outcome would otherwise settle the
    // row and leave the SUCCESS unforwarded for good. The platform's next delivery of it is
    // forwarded once the notice's forward has ended.
    void aSuccessDuringANoticesForwardIsForwardedAfterIt()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwfnotice"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CountingUpstream upstream(0, {}, 1500);
        const auto service = gateway(scratch, upstream.url(), {});
        const QByteArray notice = test::callbackBody("GWN-1", 1001, 9900, QStringLiteral("CNY"),
                                                     QStringLiteral("NOTPAY"));
        const QByteArray success = test::callbackBody("GWN-1", 1001, 9900);
        test::HttpResult noticeAnswer;
        std::thread platform([&] { noticeAnswer = test::postCallback(service->port(), notice); });
        std::this_thread::sleep_for(300ms);
        const int during = test::postCallback(service->port(), success).status;
        platform.join();
        QCOMPARE(noticeAnswer.status, 200);
        QCOMPARE(during, 503);

        QCOMPARE(test::postCallback(service->port(), success).status, 200);
        QCOMPARE(upstream.count(), 2);
        QCOMPARE(upstream.received().last().body, success);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(
            db::scalar(root.database(),
                       QStringLiteral("SELECT CONCAT(status, ' ', forwards, ' ', trade_status) "
                                      "FROM pay_callback_log WHERE pay_no = 'GWN-1'"))
                .toString(),
            QStringLiteral("FORWARDED 2 SUCCESS"));
        QCOMPARE(service->terminate(), 0);
    }

    // A handler that never answers: the platform is answered 504 at its time, copies 503, and
    // the gateway closes the connection at its bound. Only then does the next delivery go out,
    // as forward 2.
    void aHungHandlerIsForwardedAgainOnlyAfterItsConnectionClosed()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwfhung"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        RawUpstream upstream([](int) { return Behaviour::Hang; });
        const auto service = gateway(scratch, upstream.url(),
                                     {QStringLiteral("--upstream-timeout"), QStringLiteral("1"),
                                      QStringLiteral("--upstream-bound"), QStringLiteral("3")});
        const QByteArray body = bodyOf("GWH-1", 0);
        QCOMPARE(test::postCallback(service->port(), body).status, 504);
        QCOMPARE(test::postCallback(service->port(), body).status, 503);
        QCOMPARE(upstream.arrivals().size(), 1);
        std::this_thread::sleep_for(3s);
        test::postCallback(service->port(), body); // the platform's next retry
        QTRY_COMPARE_WITH_TIMEOUT(upstream.arrivals().size(), 2, 5000);

        const QList<RawUpstream::Arrival> arrivals = upstream.arrivals();
        const qint64 firstClosed = upstream.closedMicros(arrivals[0].connection);
        QVERIFY(firstClosed > 0);
        QVERIFY2(arrivals[1].micros >= firstClosed, "the second forward overlapped the first");
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(rowOf(root.database(), "GWH-1"), QStringLiteral("FORWARDING 2"));
        QCOMPARE(service->terminate(), 0);
    }

    // An answer cut mid-way, and a kept-alive connection the handler closes after reading the
    // next request: neither is an answer, and neither request is sent again by the gateway
    // (libcurl would resend the second on a fresh connection). The platform's retry is the next
    // forward.
    void aRequestIsSentOnce_data()
    {
        QTest::addColumn<int>("behaviour");
        QTest::newRow("answer cut mid-way") << int(Behaviour::CutAnswer);
        QTest::newRow("kept-alive connection closed") << int(Behaviour::CloseSilently);
    }
    void aRequestIsSentOnce()
    {
        QFETCH(int, behaviour);
        test::ScratchDatabase scratch(QStringLiteral("gwfonce"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 2);
        // The first request on each connection is answered, the second meets the fault.
        RawUpstream upstream([behaviour](int request) {
            return request == 0 ? Behaviour::Answer : Behaviour(behaviour);
        });
        const auto service = gateway(scratch, upstream.url(), {});
        QCOMPARE(test::postCallback(service->port(), bodyOf("GWO-1", 0)).status, 200);
        QCOMPARE(test::postCallback(service->port(), bodyOf("GWO-2", 1)).status, 502);
        std::this_thread::sleep_for(500ms);
        const QList<RawUpstream::Arrival> arrivals = upstream.arrivals();
        QCOMPARE(arrivals.size(), 2);
        QCOMPARE(arrivals[1].connection, arrivals[0].connection); // on the kept-alive one
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(rowOf(root.database(), "GWO-2"), QStringLiteral("FORWARDING 1"));
        // The retry goes on a fresh connection, whose first request is answered.
        QCOMPARE(test::postCallback(service->port(), bodyOf("GWO-2", 1)).status, 200);
        QCOMPARE(upstream.arrivals().size(), 3);
        QCOMPARE(rowOf(root.database(), "GWO-2"), QStringLiteral("FORWARDED 2"));
        QCOMPARE(service->terminate(), 0);
    }

private:
    std::unique_ptr<test::CallbackdProcess> gateway(const test::ScratchDatabase &scratch,
                                                    const QString &url, const QStringList &extra)
    {
        return std::make_unique<test::CallbackdProcess>(
            m_endpoint->dsnFor(scratch.name()), QString(), QStringLiteral("GF"),
            QStringList{QStringLiteral("--upstream"), url} + extra);
    }

    std::unique_ptr<test::ScratchAccount> m_endpoint;
};

PAYOPS_TEST_MAIN_CORE(TestGatewayFaults)
#include "tst_gatewayfaults.moc"
