// The merchant's order numbers as WeChat Pay and Alipay send them back (out_trade_no), over
// real HTTP to a real payops-callbackd and a real database, made by openssl and Python
// (tests/support/platformnotify.py): a gateway, connected as an account holding only
// payops_endpoint, records and forwards the platforms' own samples, which are no payops order
// ids; what no platform sends is refused and stores nothing; a handler, which pays payops's
// own orders by their ids, still refuses them.
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

namespace {

// The platforms' published samples: Alipay's notification, WeChat Pay's transaction (too
// large for a BIGINT).
const QByteArray kAlipaySample = "N202404181780861744366403007";
const QByteArray kWechatSample = "1217752501201407033233368018";

} // namespace

class TestOrderNumbers final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("ordernos"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 5);
        m_kit = std::make_unique<PlatformKit>();
        // Alipay takes only "success" as the handler's final answer; WeChat Pay any 2xx.
        test::CannedAnswer success;
        success.body = "success";
        success.contentType = "text/plain";
        m_upstream = std::make_unique<test::CountingUpstream>(0, success);
        m_gateway = std::make_unique<test::CallbackdProcess>(
            m_endpoint->dsnFor(m_db->name()), QString(), QStringLiteral("G-ORDERNO"),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--upstream"), m_upstream->url()});
    }

    void cleanupTestCase() { QCOMPARE(m_gateway->terminate(), 0); }

    // Each platform's sample reaches the team's handler with X-Payops-Order-Id as sent, and
    // its row keeps it; a resend is answered from the row (the same content), not forwarded.
    // A number that is a payops order id is kept as both.
    void theGatewayForwardsTheOrderNumberAsSent()
    {
        const auto wechat = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612030001"), QString::fromLatin1(kWechatSample), 9900));
        QCOMPARE(postWechat(wechat).status, 200);
        const QByteArray alipay = m_kit->alipay(
            test::alipayTrade(QStringLiteral("2026120322001"), QString::fromLatin1(kAlipaySample),
                              QStringLiteral("99.00")));
        const test::HttpResult alipayAnswer = postAlipay(alipay);
        QCOMPARE(alipayAnswer.status, 200);
        QCOMPARE(alipayAnswer.body, QByteArray("success"));
        const auto numbered = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612030002"), QStringLiteral("1001"), 9900));
        QCOMPARE(postWechat(numbered).status, 200);

        const QList<test::CountingUpstream::Request> received = m_upstream->received();
        QCOMPARE(received.size(), 3);
        QCOMPARE(forwardOf("4200000001202612030001").header("X-Payops-Order-Id"), kWechatSample);
        QCOMPARE(forwardOf("2026120322001").header("X-Payops-Order-Id"), kAlipaySample);
        QCOMPARE(forwardOf("4200000001202612030002").header("X-Payops-Order-Id"),
                 QByteArray("1001"));
        QCOMPARE(forwardOf("2026120322001").body, alipay);

        QCOMPARE(rowOf("4200000001202612030001"),
                 QStringLiteral("FORWARDED|1|0|") + QLatin1String(kWechatSample));
        QCOMPARE(rowOf("2026120322001"),
                 QStringLiteral("FORWARDED|1|0|") + QLatin1String(kAlipaySample));
        QCOMPARE(rowOf("4200000001202612030002"), QStringLiteral("FORWARDED|1|1001|1001"));

        const auto resend = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612030001"), QString::fromLatin1(kWechatSample), 9900));
        QCOMPARE(postWechat(resend).status, 200);
        QCOMPARE(m_upstream->count(), 3);
        // Another order number under the same transaction_id is another notification.
        const auto other = m_kit->wechat(
            test::wechatTransaction(QStringLiteral("4200000001202612030001"),
                                    QStringLiteral("1217752501201407033233368019"), 9900));
        QCOMPARE(postWechat(other).status, 409);
        QCOMPARE(m_upstream->count(), 3);
    }

    void whatNoPlatformSendsIsRefused_data()
    {
        QTest::addColumn<QString>("platform");
        QTest::addColumn<QString>("outTradeNo");
        QTest::addColumn<QString>("reason");
        const QString wechat = QStringLiteral("wechat");
        const QString alipay = QStringLiteral("alipay");
        const QString wechatRule = QStringLiteral("out_trade_no must be 1 to 32 characters");
        QTest::newRow("WeChat Pay, 33 characters")
            << wechat << QStringLiteral("1").repeated(33) << wechatRule;
        QTest::newRow("WeChat Pay, a dot") << wechat << QStringLiteral("ORDER.1001") << wechatRule;
        QTest::newRow("WeChat Pay, a space")
            << wechat << QStringLiteral("ORDER 1001") << wechatRule;
        QTest::newRow("WeChat Pay, Chinese")
            << wechat << QStringLiteral("订单100100") << wechatRule;
        QTest::newRow("Alipay, 65 characters")
            << alipay << QStringLiteral("N").repeated(65) << QString();
        QTest::newRow("Alipay, a space") << alipay << QStringLiteral("N2024 0418") << QString();
        QTest::newRow("Alipay, Chinese") << alipay << QStringLiteral("订单N2024") << QString();
    }

    // Refused 400 in the platform's format, nothing stored, nothing forwarded.
    void whatNoPlatformSendsIsRefused()
    {
        QFETCH(QString, platform);
        QFETCH(QString, outTradeNo);
        QFETCH(QString, reason);
        const int forwarded = m_upstream->count();
        const QString before = test::businessFingerprint(m_db->dsn());
        test::HttpResult result;
        if (platform == QLatin1String("wechat")) {
            result = postWechat(m_kit->wechat(test::wechatTransaction(
                QStringLiteral("4200000001202612039999"), outTradeNo, 9900)));
            QVERIFY2(result.body.contains("\"code\":\"FAIL\""), result.body.constData());
        } else {
            result = postAlipay(m_kit->alipay(test::alipayTrade(
                QStringLiteral("2026120322999"), outTradeNo, QStringLiteral("99.00"))));
            QCOMPARE(result.body, QByteArray("fail"));
        }
        QCOMPARE(result.status, 400);
        QVERIFY2(QString::fromUtf8(result.body).contains(reason), result.body.constData());
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
        QCOMPARE(m_upstream->count(), forwarded);
    }

    // Recorded in record-only mode, the order number is forwarded as sent by the operator's
    // drain, from the row alone: nothing of the delivery is at hand then.
    void aRecordedOrderNumberIsDrainedAsSent()
    {
        test::ScratchDatabase scratch(QStringLiteral("ordernosdrain"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CallbackdProcess recording(
            m_endpoint->dsnFor(scratch.name()), QString(), QStringLiteral("G-ORDERNO-REC"),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--upstream"), m_upstream->url()});
        const test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()), QStringLiteral("op"));
        const FlipResult flip =
            flipSwitch(asOperator.database(), CallbackMode::RecordOnly, QStringLiteral("test"));
        QVERIFY(waitForAcknowledgement(asOperator.database(), flip.after.version, 5000)
                    .first()
                    .acknowledged);
        const QByteArray alipay = m_kit->alipay(
            test::alipayTrade(QStringLiteral("2026120322201"), QString::fromLatin1(kAlipaySample),
                              QStringLiteral("99.00")));
        QCOMPARE(test::postTo(recording.port(), kAlipayPath, alipay, {}, kForm).status, 200);
        QCOMPARE(forwardOf("2026120322201").payNo(), QByteArray());
        flipSwitch(asOperator.database(), CallbackMode::Normal, QStringLiteral("test over"));

        const test::CliRun drain =
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"),
                          operatorAccount.dsnFor(scratch.name()).toString(),
                          QStringLiteral("--upstream"), m_upstream->url()},
                         {{QStringLiteral("PAYOPS_DB_PASSWORD"), operatorAccount.password()}});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err + drain.out));
        QCOMPARE(forwardOf("2026120322201").header("X-Payops-Order-Id"), kAlipaySample);
        QCOMPARE(recording.terminate(), 0);
    }

    // A handler pays payops's own orders by their ids: the samples are refused there as
    // before, with a message that says so, and store nothing.
    void aHandlerStillRefusesThem()
    {
        test::ScratchDatabase scratch(QStringLiteral("ordernoshandler"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 2);
        test::CallbackdProcess handler(m_endpoint->dsnFor(scratch.name()), QStringLiteral("safe"),
                                       QStringLiteral("H-ORDERNO"), m_kit->callbackdArguments());
        const QString before = test::businessFingerprint(scratch.dsn());
        const auto wechat = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612030101"), QString::fromLatin1(kWechatSample), 9900));
        const test::HttpResult refused =
            test::postTo(handler.port(), kWechatPath, wechat.body, wechat.headers);
        QCOMPARE(refused.status, 400);
        QVERIFY2(refused.body.contains("out_trade_no must be a payops order id"),
                 refused.body.constData());
        const QByteArray alipay = m_kit->alipay(
            test::alipayTrade(QStringLiteral("2026120322101"), QString::fromLatin1(kAlipaySample),
                              QStringLiteral("99.00")));
        QCOMPARE(test::postTo(handler.port(), kAlipayPath, alipay, {}, kForm).status, 400);
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
        // An order id is still paid.
        const auto paying = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612030102"), QStringLiteral("1001"), 9900));
        QCOMPARE(test::postTo(handler.port(), kWechatPath, paying.body, paying.headers).status,
                 200);
        db::Connection root(scratch.dsn(), QStringLiteral("t"));
        QCOMPARE(
            db::scalar(root.database(), QStringLiteral("SELECT status FROM orders WHERE id = 1001"))
                .toString(),
            QStringLiteral("PAID"));
        QCOMPARE(handler.terminate(), 0);
    }

private:
    test::HttpResult postWechat(const PlatformKit::Notification &notification) const
    {
        return test::postTo(m_gateway->port(), kWechatPath, notification.body,
                            notification.headers);
    }

    test::HttpResult postAlipay(const QByteArray &form) const
    {
        return test::postTo(m_gateway->port(), kAlipayPath, form, {}, kForm);
    }

    test::CountingUpstream::Request forwardOf(const QByteArray &payNo) const
    {
        for (const test::CountingUpstream::Request &request : m_upstream->received())
            if (request.payNo() == payNo)
                return request;
        return {};
    }

    // status|gateway|order_id|out_trade_no of the row of `payNo`.
    QString rowOf(const char *payNo) const
    {
        db::Connection root(m_db->dsn(), QStringLiteral("t"));
        return db::scalar(root.database(),
                          QStringLiteral("SELECT CONCAT_WS('|', status, gateway, order_id, "
                                         "out_trade_no) FROM pay_callback_log WHERE pay_no = ?"),
                          {QByteArray(payNo)})
            .toString();
    }

    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<PlatformKit> m_kit;
    std::unique_ptr<test::CountingUpstream> m_upstream;
    std::unique_ptr<test::CallbackdProcess> m_gateway;
};

PAYOPS_TEST_MAIN_CORE(TestOrderNumbers)
#include "tst_ordernumbers.moc"
