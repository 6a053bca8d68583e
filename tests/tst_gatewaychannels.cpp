// A gateway with a handler per channel (--upstream-wechatpay, --upstream-alipay): each
// platform's notifications reach their own handler and no other, over real HTTP to a real
// payops-callbackd (as an account holding only payops_endpoint) and a real database, with
// notifications made by openssl and Python; and `payops drain --channel`, as an account holding
// only payops_operator, forwards what a hold recorded to each channel's own handler.
#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "platformkit.h"
#include "scratchdatabase.h"
#include "testmain.h"

using namespace payops;
using test::kAlipayPath;
using test::kForm;
using test::kWechatPath;
using test::PlatformKit;

class TestGatewayChannels final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_operator = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("gwchan"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 5);
        m_kit = std::make_unique<PlatformKit>();
        // Alipay takes only "success" as the handler's final answer; WeChat Pay any 2xx.
        test::CannedAnswer success;
        success.body = "success";
        success.contentType = "text/plain";
        m_wechatHandler = std::make_unique<test::CountingUpstream>(0, success);
        m_alipayHandler = std::make_unique<test::CountingUpstream>(0, success);
        m_gateway = std::make_unique<test::CallbackdProcess>(
            m_endpoint->dsnFor(m_db->name()), QString(), QStringLiteral("G-CHANNELS"),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--upstream-wechatpay"), m_wechatHandler->url(),
                            QStringLiteral("--upstream-alipay"), m_alipayHandler->url()});
    }

    void cleanupTestCase() { QCOMPARE(m_gateway->terminate(), 0); }

    // Each channel's notification reaches its own handler; payops's own format has no handler
    // here (no --upstream), so its path does not exist.
    void eachChannelReachesItsOwnHandler()
    {
        const auto wechat = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612070001"), QStringLiteral("1001"), 9900));
        QCOMPARE(postWechat(wechat).status, 200);
        QCOMPARE(postAlipay(m_kit->alipay(test::alipayTrade(QStringLiteral("2026120722001"),
                                                            QStringLiteral("1002"),
                                                            QStringLiteral("99.00"))))
                     .status,
                 200);
        QCOMPARE(payNosOf(*m_wechatHandler), QList<QByteArray>{"4200000001202612070001"});
        QCOMPARE(payNosOf(*m_alipayHandler), QList<QByteArray>{"2026120722001"});
        QCOMPARE(test::postCallback(m_gateway->port(), test::callbackBody("GW-CH-PAY", 1003, 9900))
                     .status,
                 404);
        // /healthz names each channel's handler.
        const QByteArray health = test::get(m_gateway->port(), QStringLiteral("/healthz")).body;
        QVERIFY2(health.contains("wechatpay " + m_wechatHandler->url().toUtf8() + "; alipay " +
                                 m_alipayHandler->url().toUtf8()),
                 health.constData());
    }

    // What a hold recorded is drained per channel: `--channel wechatpay` to the WeChat Pay
    // handler forwards the WeChat Pay row alone, and the Alipay row waits for its own drain.
    void aDrainPerChannel()
    {
        db::Connection root(m_db->dsn(), QStringLiteral("t"));
        flipSwitch(root.database(), CallbackMode::RecordOnly, QStringLiteral("hold"));
        QCOMPARE(
            postWechat(m_kit->wechat(test::wechatTransaction(
                           QStringLiteral("4200000001202612070002"), QStringLiteral("1004"), 9900)))
                .status,
            200);
        QCOMPARE(postAlipay(m_kit->alipay(test::alipayTrade(QStringLiteral("2026120722002"),
                                                            QStringLiteral("1005"),
                                                            QStringLiteral("99.00"))))
                     .status,
                 200);
        flipSwitch(root.database(), CallbackMode::Normal, QStringLiteral("released"));

        const test::CliRun wechat =
            drainAs({QStringLiteral("--upstream"), m_wechatHandler->url(),
                     QStringLiteral("--channel"), QStringLiteral("wechatpay")});
        QVERIFY2(wechat.exitCode == 0, qPrintable(wechat.err + wechat.out));
        QVERIFY2(wechat.out.contains(QStringLiteral("forwarded 1, failed 0, skipped 0 of 1")),
                 qPrintable(wechat.out));
        QCOMPARE(payNosOf(*m_wechatHandler).size(), 2);
        QCOMPARE(payNosOf(*m_alipayHandler).size(), 1);
        QCOMPARE(statusOf(root.database(), "2026120722002"), QStringLiteral("RECORDED"));

        const test::CliRun alipay =
            drainAs({QStringLiteral("--upstream"), m_alipayHandler->url(),
                     QStringLiteral("--channel"), QStringLiteral("alipay")});
        QVERIFY2(alipay.exitCode == 0, qPrintable(alipay.err + alipay.out));
        QCOMPARE(payNosOf(*m_alipayHandler), (QList<QByteArray>{"2026120722001", "2026120722002"}));
        QCOMPARE(statusOf(root.database(), "2026120722002"), QStringLiteral("FORWARDED"));

        const test::CliRun wrong =
            drainAs({QStringLiteral("--upstream"), m_alipayHandler->url(),
                     QStringLiteral("--channel"), QStringLiteral("unionpay")});
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains(QStringLiteral("--channel takes wechatpay, alipay or pay")),
                 qPrintable(wrong.err));
    }

private:
    static QList<QByteArray> payNosOf(const test::CountingUpstream &handler)
    {
        QList<QByteArray> payNos;
        for (const test::CountingUpstream::Request &request : handler.received())
            payNos << request.payNo();
        return payNos;
    }

    static QString statusOf(const QSqlDatabase &db, const QByteArray &payNo)
    {
        return db::scalar(db,
                          QStringLiteral("SELECT status FROM pay_callback_log WHERE pay_no = ?"),
                          {payNo})
            .toString();
    }

    test::HttpResult postWechat(const PlatformKit::Notification &notification) const
    {
        return test::postTo(m_gateway->port(), kWechatPath, notification.body,
                            notification.headers);
    }

    test::HttpResult postAlipay(const QByteArray &form) const
    {
        return test::postTo(m_gateway->port(), kAlipayPath, form, {}, kForm);
    }

    test::CliRun drainAs(const QStringList &arguments) const
    {
        return test::runCli(QStringList{QStringLiteral("drain"), QStringLiteral("--db"),
                                        m_operator->dsnFor(m_db->name()).toString()} +
                                arguments,
                            {{QStringLiteral("PAYOPS_DB_PASSWORD"), m_operator->password()}});
    }

    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<test::ScratchAccount> m_operator;
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<PlatformKit> m_kit;
    std::unique_ptr<test::CountingUpstream> m_wechatHandler;
    std::unique_ptr<test::CountingUpstream> m_alipayHandler;
    std::unique_ptr<test::CallbackdProcess> m_gateway;
};

PAYOPS_TEST_MAIN_CORE(TestGatewayChannels)
#include "tst_gatewaychannels.moc"
