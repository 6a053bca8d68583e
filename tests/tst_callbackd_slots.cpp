// The endpoint's connection slots against requests that cost an attacker nothing: unsigned junk
// to each channel, answered before its signature is checked, and one signed notification
// captured and replayed. Only a request whose signature verified keeps its connection, and only
// as one of its signed content's first copies (ReplayWindow): a legitimate client's callbacks
// still get through. Real sockets from many loopback addresses, a real payops-callbackd and
// database.
#include "callbackfixture.h"
#include "platformkit.h"
#include "rawhttp.h"
#include "scratchdatabase.h"
#include "service/httplimits.h"
#include "testmain.h"

#include <QElapsedTimer>

#include <algorithm>

using namespace payops;

namespace {

// A POST as an attacker writes it, the body and headers as given.
QByteArray rawPost(const char *path, const QByteArray &body,
                   const QByteArray &contentType = "application/x-www-form-urlencoded")
{
    return QByteArray("POST ") + path +
           " HTTP/1.1\r\nHost: payops\r\nContent-Type: " + contentType +
           "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace

class TestCallbackdSlots final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("slots"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 2400);
        m_kit = std::make_unique<test::PlatformKit>();
        // One signed Alipay notification, captured once and replayed for ever: Alipay's carry no
        // time that would make them expire.
        m_capturedAlipay = rawPost(
            "/callbacks/alipay",
            m_kit->alipay(test::alipayTrade(QStringLiteral("2026120722001"), QStringLiteral("1350"),
                                            QStringLiteral("99.00"))));
    }

    // Only the platform's own request renews a connection, and only while it is new: one
    // posting a body that is not a form to /callbacks/alipay (answered 400 before the signature
    // is checked), or a form with another sign_type, is closed as idle like one polling
    // /healthz; one replaying a signed notification every 400 ms keeps its connection for the
    // first copies (ReplayWindow::kCopies, 1.2 s) and is then closed as idle; one sending new
    // signed callbacks stays.
    void onlyNewSignedRequestsKeepAConnection()
    {
        QStringList arguments = m_kit->callbackdArguments();
        arguments << QStringLiteral("--keep-alive-idle") << QStringLiteral("2")
                  << QStringLiteral("--max-connection-age") << QStringLiteral("60");
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(), arguments);
        QByteArray otherSignType = m_kit->alipay(test::alipayTrade(
            QStringLiteral("2026120722002"), QStringLiteral("1351"), QStringLiteral("99.00")));
        otherSignType.replace("sign_type=RSA2", "sign_type=RSA");
        struct Client
        {
            const char *name;
            QByteArray request; // empty: a new signed callback each round
            qint64 closedAt = -1;
            int fd = -1;
        };
        Client clients[] = {
            {"not a form", rawPost("/callbacks/alipay", "x")},
            {"sign_type RSA", rawPost("/callbacks/alipay", otherSignType)},
            {"unsigned wechatpay", rawPost("/callbacks/wechatpay", "{}", "application/json")},
            {"replay", m_capturedAlipay},
            {"new callbacks", {}}};
        for (Client &client : clients)
            client.fd = test::connectFrom("127.0.0.1", service.port());
        QElapsedTimer timer;
        timer.start();
        for (int round = 0; timer.elapsed() < 9000; ++round) {
            for (Client &client : clients) {
                if (client.closedAt >= 0)
                    continue;
                const QByteArray request =
                    client.request.isEmpty()
                        ? test::signedPost(test::callbackBody("RENEW-" + QByteArray::number(round),
                                                              2201 + round, 9900))
                        : client.request;
                if (!test::sendAll(client.fd, request) ||
                    test::readResponses(client.fd, 1, 1000).size() != 1)
                    client.closedAt = timer.elapsed();
            }
            QTest::qWait(400);
        }
        QStringList closed;
        for (Client &client : clients) {
            test::closeSocket(client.fd);
            closed << QStringLiteral("%1: %2 ms")
                          .arg(QLatin1String(client.name), QString::number(client.closedAt));
        }
        const QString report = closed.join(QStringLiteral(", "));
        for (int i = 0; i < 3; ++i)
            QVERIFY2(clients[i].closedAt >= 1500 && clients[i].closedAt < 4500, qPrintable(report));
        // Its first copies (1.2 s), then the idle time (2 s).
        QVERIFY2(clients[3].closedAt >= 3000 && clients[3].closedAt < 8000, qPrintable(report));
        QVERIFY2(clients[4].closedAt < 0, qPrintable(report));
        QCOMPARE(service.terminate(), 0);
    }

    // Twenty addresses post unsigned junk to a channel (or four replay one captured signed
    // notification), each connection every 4 s, wanting more slots than there are: a client on
    // an address of its own still gets its callbacks answered, at the default limits and with
    // no limit per address (behind a proxy).
    void junkAndReplaysCannotKeepTheSlots_data()
    {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<int>("addresses");
        QTest::addColumn<int>("perAddress");
        QTest::addColumn<int>("settleMs"); // the attack's time before the client's
        QTest::addColumn<bool>("behindProxy");
        QTest::addColumn<qint64>("firstOrderId");
        const QByteArray alipay = rawPost("/callbacks/alipay", "x");
        const QByteArray wechat = rawPost("/callbacks/wechatpay", "x", "application/json");
        const QByteArray pay = rawPost("/callbacks/pay", "x", "application/json");
        qint64 orders = 2401;
        for (const bool behindProxy : {false, true}) {
            const char *limit = behindProxy ? ", no limit per address" : "";
            // Junk keeps nothing from its first request; a replay is past the window after 6 s.
            QTest::addRow("unsigned to alipay%s", limit)
                << alipay << 20 << 250 << 2000 << behindProxy << orders;
            QTest::addRow("unsigned to wechatpay%s", limit)
                << wechat << 20 << 250 << 2000 << behindProxy << (orders += 100);
            QTest::addRow("unsigned to pay%s", limit)
                << pay << 20 << 250 << 2000 << behindProxy << (orders += 100);
            QTest::addRow("a signed notification replayed%s", limit)
                << m_capturedAlipay << 4 << 1100 << 6000 << behindProxy << (orders += 100);
            orders += 100;
        }
    }

    void junkAndReplaysCannotKeepTheSlots()
    {
        QFETCH(QByteArray, request);
        QFETCH(int, addresses);
        QFETCH(int, perAddress);
        QFETCH(int, settleMs);
        QFETCH(bool, behindProxy);
        QFETCH(qint64, firstOrderId);
        QStringList arguments = m_kit->callbackdArguments();
        if (behindProxy)
            arguments << QStringLiteral("--max-connections-per-ip") << QStringLiteral("0");
        // Under a sanitizer the endpoint runs several times slower: the same flood a tenth the
        // size against a tenth of the slots (and of an address's share) checks the same code in
        // its time. The Debug run keeps the default limits.
        const int tenth = qEnvironmentVariableIntValue("PAYOPS_TEST_TIME_SCALE") > 1 ? 10 : 1;
        if (tenth > 1)
            arguments << QStringLiteral("--max-connections")
                      << QString::number(HttpLimits().maxConnections / tenth);
        perAddress /= tenth;
        test::CallbackdProcess service(m_db->dsn(), QStringLiteral("safe"), QString(), arguments);
        // Each connection connects again at once when closed, as the attack that found the hole
        // did: the endpoint evicts all the time.
        test::Occupier attack(service.port(), 2, addresses, perAddress, 4000, request, 0);
        QElapsedTimer attacking;
        attacking.start();
        // Every slot is wanted: the endpoint closes the attacker's connections to make room
        // (evicted, or over an address's share).
        QTRY_VERIFY_WITH_TIMEOUT(attack.closedByPeer() > 0, test::busyLimitMs(30000));
        QTest::qWait(int(std::max<qint64>(0, settleMs - attacking.elapsed())));
        const QString problem = test::shortOfTheBar(
            test::sendCallbacksFrom("127.0.0.250", service.port(),
                                    "JUNK-" + QByteArray::number(firstOrderId) + "-", firstOrderId,
                                    100, 5000, 1),
            100, test::busyLimitMs(1000));
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(service.terminate(), 0);
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<test::PlatformKit> m_kit;
    QByteArray m_capturedAlipay; // a signed notification's POST, as an attacker replays it
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdSlots)
#include "tst_callbackd_slots.moc"
