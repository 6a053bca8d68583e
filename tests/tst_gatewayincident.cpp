// The incident, and the gateway in front of it: two payops-callbackd --handler unsafe-demo
// instances (the team's handler with the incident's defect) take WeChat Pay notifications made
// by openssl and Python (tests/support/platformkit.h), never by payops. Delivered straight to
// them, duplicates a few milliseconds apart pay coupons and points out twice; delivered through
// two gateways, on a database of their own, each pay_no reaches the handler once and pays once.
#include "callbackfixture.h"
#include "db/connection.h"
#include "platformkit.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace payops;
using namespace std::chrono_literals;
using test::PlatformKit;

namespace {

const char *const kWechatPath = "/callbacks/wechatpay";
constexpr int kOrders = 20;      // per storm
constexpr int kAmountFen = 9900; // what prepareCallbackDatabase's orders cost
constexpr qint64 kStorm1 = 1001; // the first storm's orders, straight at the handler
constexpr qint64 kStorm2 = 1021; // the second's, fresh, through the gateways

QString transactionIdOf(qint64 orderId)
{
    return QStringLiteral("42000000012026120300%1").arg(orderId);
}

} // namespace

class TestGatewayIncident final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_kit = std::make_unique<PlatformKit>();
        // Every instance, the handler's and the gateways', connects as an account holding only
        // payops_endpoint.
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        // The team's database: the incident's schema, a sandbox (unsafe-demo starts on no other).
        m_handlerDb = std::make_unique<test::ScratchDatabase>(QStringLiteral("incident"));
        test::prepareCallbackDatabase(m_handlerDb->dsn(), QStringLiteral("legacy"), 2 * kOrders);
        for (const QString &instance : {QStringLiteral("UA"), QStringLiteral("UB")})
            m_handlers.push_back(std::make_unique<test::CallbackdProcess>(
                m_endpoint->dsnFor(m_handlerDb->name()), QStringLiteral("unsafe-demo"), instance,
                m_kit->callbackdArguments()));
        // The gateways' own database: their pay_callback_log is theirs, not the handler's.
        m_gatewayDb = std::make_unique<test::ScratchDatabase>(QStringLiteral("incidentgw"));
        test::prepareCallbackDatabase(m_gatewayDb->dsn(), QStringLiteral("current"), 0);
        for (size_t i = 0; i < m_handlers.size(); ++i) {
            const QString upstream = QStringLiteral("http://127.0.0.1:%1%2")
                                         .arg(m_handlers[i]->port())
                                         .arg(QLatin1String(kWechatPath));
            m_gateways.push_back(std::make_unique<test::CallbackdProcess>(
                m_endpoint->dsnFor(m_gatewayDb->name()), QString(),
                QStringLiteral("GW%1").arg(i + 1),
                QStringList{QStringLiteral("--upstream"), upstream} + m_kit->callbackdArguments()));
        }
    }

    // Straight at the team's handler, the race is real: some orders get their coupons and
    // points twice, while the order changed state once and pay_callback_log holds each pay_no
    // once (the unique index "works").
    void withoutTheGatewayDuplicatesPayTwice()
    {
        const std::vector<int> statuses = storm(kStorm1, portsOf(m_handlers));
        for (int status : statuses)
            QCOMPARE(status, 200);
        db::Connection connection(m_handlerDb->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const int twice = ordersPaidTwice(db, kStorm1);
        qInfo("%d of %d orders paid twice without the gateway", twice, kOrders);
        QVERIFY2(twice > 0,
                 "no order was paid twice: the race was not reproduced, so the second storm "
                 "would prove nothing");
        QCOMPARE(db::scalar(db,
                            QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE "
                                           "order_id BETWEEN ? AND ?"),
                            {kStorm1, kStorm1 + kOrders - 1})
                     .toInt(),
                 kOrders);
    }

    // The same storm, on fresh orders, through the gateways: every pay_no is forwarded once,
    // so the same handler pays every order once.
    void throughTheGatewaysEachPaysOnce()
    {
        // A copy that comes while its payment's forward is out is answered 503 without a
        // forward, and the platform sends it again; the storm retries such copies as it does.
        int retries = 0;
        const std::vector<int> statuses = storm(kStorm2, portsOf(m_gateways), &retries);
        for (int status : statuses)
            QCOMPARE(status, 200);
        db::Connection handler(m_handlerDb->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = handler.database();
        QCOMPARE(ordersPaidTwice(db, kStorm2), 0);
        for (qint64 order = kStorm2; order < kStorm2 + kOrders; ++order) {
            const test::SideEffects effects = test::sideEffectsOf(db, order);
            QCOMPARE(effects.coupons, 2); // two active templates, once each
            QCOMPARE(effects.points, 1);
            // The handler saw one delivery of each order: one trace, one accepted transition.
            QCOMPARE(db::scalar(db,
                                QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE "
                                               "order_id = ?"),
                                {order})
                         .toInt(),
                     1);
            QCOMPARE(
                db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"), {order})
                    .toString(),
                QStringLiteral("PAID"));
        }

        db::Connection gateways(m_gatewayDb->dsn(), QStringLiteral("g"));
        const QSqlDatabase gw = gateways.database();
        // Each pay_no recorded once and forwarded once, with the handler's 200 as its answer...
        QCOMPARE(db::scalar(gw, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE "
                                               "gateway = 1 AND status = 'FORWARDED' AND "
                                               "forwards = 1 AND upstream_status = 200 AND "
                                               "wire_format = 'wechatpay'"))
                     .toInt(),
                 kOrders);
        // ... while all three deliveries of each reached a gateway, and both gateways took some.
        QCOMPARE(db::scalar(gw, QStringLiteral("SELECT COUNT(*) FROM callback_trace")).toInt(),
                 3 * kOrders + retries);
        QCOMPARE(db::scalar(gw, QStringLiteral("SELECT COUNT(DISTINCT instance) FROM "
                                               "callback_trace"))
                     .toInt(),
                 2);
        QCOMPARE(db::scalar(gw, QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE "
                                               "forwarded_at IS NOT NULL"))
                     .toInt(),
                 kOrders);
    }

private:
    template <typename Processes> static std::vector<int> portsOf(const Processes &processes)
    {
        std::vector<int> ports;
        for (const auto &process : processes)
            ports.push_back(process->port());
        return ports;
    }

    // The platform's duplicate delivery: each order's one notification delivered three times,
    // a few milliseconds apart, alternating between the two ports; four orders at a time.
    std::vector<int> storm(qint64 firstOrder, const std::vector<int> &ports,
                           int *retries = nullptr) const
    {
        std::atomic<int> retried{0};
        std::vector<PlatformKit::Notification> notifications;
        for (qint64 order = firstOrder; order < firstOrder + kOrders; ++order)
            notifications.push_back(m_kit->wechat(test::wechatTransaction(
                transactionIdOf(order), QString::number(order), kAmountFen)));
        constexpr int kCopies = 3;
        std::vector<int> statuses(size_t(kOrders * kCopies));
        std::atomic<int> next{0};
        std::vector<std::thread> clients;
        for (int c = 0; c < 4; ++c)
            clients.emplace_back([&] {
                for (int i = next++; i < kOrders; i = next++) {
                    std::vector<std::thread> copies;
                    for (int copy = 0; copy < kCopies; ++copy) {
                        copies.emplace_back([&, i, copy] {
                            const PlatformKit::Notification &n = notifications[size_t(i)];
                            int &status = statuses[size_t(i * kCopies + copy)];
                            status = test::postTo(ports[size_t(copy) % ports.size()], kWechatPath,
                                                  n.body, n.headers)
                                         .status;
                            for (int again = 0; retries && status == 503 && again < 50; ++again) {
                                std::this_thread::sleep_for(100ms);
                                ++retried;
                                status = test::postTo(ports[size_t(copy) % ports.size()],
                                                      kWechatPath, n.body, n.headers)
                                             .status;
                            }
                        });
                        std::this_thread::sleep_for(2ms);
                    }
                    for (std::thread &copy : copies)
                        copy.join();
                }
            });
        for (std::thread &client : clients)
            client.join();
        if (retries)
            *retries = retried;
        return statuses;
    }

    // Orders of a storm whose coupons or points were issued more than once.
    static int ordersPaidTwice(const QSqlDatabase &db, qint64 firstOrder)
    {
        int twice = 0;
        for (qint64 order = firstOrder; order < firstOrder + kOrders; ++order) {
            const test::SideEffects effects = test::sideEffectsOf(db, order);
            if (effects.couponTemplatesTwice > 0 || effects.points > 1)
                ++twice;
        }
        return twice;
    }

    std::unique_ptr<PlatformKit> m_kit;
    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<test::ScratchDatabase> m_handlerDb;
    std::unique_ptr<test::ScratchDatabase> m_gatewayDb;
    std::vector<std::unique_ptr<test::CallbackdProcess>> m_handlers;
    std::vector<std::unique_ptr<test::CallbackdProcess>> m_gateways;
};

PAYOPS_TEST_MAIN_CORE(TestGatewayIncident)
#include "tst_gatewayincident.moc"
