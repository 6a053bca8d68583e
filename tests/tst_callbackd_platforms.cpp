#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/money/duplicates/doublepayments.h"
#include "platformkit.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QDateTime>
#include <QFile>

#include <stdexcept>
#include <sys/stat.h>

using namespace payops;
using test::kAlipayPath;
using test::kForm;
using test::kWechatPath;
using test::PlatformKit;

// WeChat Pay's and Alipay's own notifications over real HTTP to a real payops-callbackd and a
// real database, made by openssl and Python (tests/support/platformnotify.py), never by
// payops: each pays through the pipeline of /callbacks/pay, and each refusal has its code and
// stores nothing.
class TestCallbackdPlatforms final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("platforms"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 20);
        m_kit = std::make_unique<PlatformKit>();
        m_service = std::make_unique<test::CallbackdProcess>(
            m_db->dsn(), QStringLiteral("safe"), QString(), m_kit->callbackdArguments());
    }

    void cleanupTestCase() { QCOMPARE(m_service->terminate(), 0); }

    // A WeChat Pay notification pays its order; WeChat reads the empty 200 as success. The row
    // keeps the body as received (still encrypted), the platform's headers and the decoded
    // columns.
    void wechatPayPays()
    {
        const auto notification = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612020001"), QStringLiteral("1001"), 9900));
        const test::HttpResult result = post(kWechatPath, notification);
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray());
        QCOMPARE(orderStatus(1001), QStringLiteral("PAID"));
        QCOMPARE(text("SELECT CONCAT_WS('|', status, wire_format, channel, trade_status, "
                      "amount_fen, currency, order_id, platform_paid_at) FROM pay_callback_log "
                      "WHERE pay_no = '4200000001202612020001'"),
                 QStringLiteral("PROCESSED|wechatpay|wechat|SUCCESS|9900|CNY|1001|"
                                "2026-12-02 09:00:00.000"));
        QCOMPARE(bytes("SELECT raw_body FROM pay_callback_log WHERE pay_no = "
                       "'4200000001202612020001'"),
                 notification.body);
        const QString headers = text(
            "SELECT raw_headers FROM pay_callback_log WHERE pay_no = '4200000001202612020001'");
        QVERIFY2(headers.contains(QStringLiteral("Wechatpay-Serial: ") +
                                  QLatin1String(PlatformKit::kSerial)),
                 qPrintable(headers));
        QVERIFY2(headers.contains(QStringLiteral("Wechatpay-Signature: ")), qPrintable(headers));
    }

    // WeChat Pay encrypts each resend afresh (new nonce, new ciphertext, new headers): the
    // decoded content is the same, so it is a replay, answered as the first, one row.
    void wechatPayResendIsAReplay()
    {
        const QJsonObject transaction = test::wechatTransaction(
            QStringLiteral("4200000001202612020002"), QStringLiteral("1002"), 9900);
        const auto first = m_kit->wechat(transaction);
        QCOMPARE(post(kWechatPath, first).status, 200);
        const QString paid = text("SELECT CONCAT(status, paid_at) FROM orders WHERE id = 1002");
        const auto resend = m_kit->wechat(transaction);
        QVERIFY(resend.body != first.body);
        const test::HttpResult result = post(kWechatPath, resend);
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray());
        QCOMPARE(text("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = "
                      "'4200000001202612020002'"),
                 QStringLiteral("1"));
        QCOMPARE(text("SELECT CONCAT(status, paid_at) FROM orders WHERE id = 1002"), paid);
        QCOMPARE(text("SELECT outcome FROM callback_trace WHERE pay_no = "
                      "'4200000001202612020002' ORDER BY id DESC LIMIT 1"),
                 QStringLiteral("replayed"));
        QCOMPARE(bytes("SELECT raw_body FROM pay_callback_log WHERE pay_no = "
                       "'4200000001202612020002'"),
                 first.body);
        // Another amount under the same transaction_id is a conflict, in WeChat's format.
        const auto changed = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612020002"), QStringLiteral("1002"), 9800));
        const test::HttpResult conflict = post(kWechatPath, changed);
        QCOMPARE(conflict.status, 409);
        QVERIFY2(conflict.body.contains("\"code\":\"FAIL\""), conflict.body.constData());
    }

    // While one platform key is rotated out, either verifies: each by the serial it names.
    void wechatPayKeysRotate()
    {
        PlatformKit::WechatOptions next;
        next.key = QStringLiteral("wechat-next");
        next.serial = QLatin1String(PlatformKit::kNextSerial);
        const auto notification =
            m_kit->wechat(test::wechatTransaction(QStringLiteral("4200000001202612020003"),
                                                  QStringLiteral("1003"), 9900),
                          next);
        QCOMPARE(post(kWechatPath, notification).status, 200);
        QCOMPARE(orderStatus(1003), QStringLiteral("PAID"));
    }

    void wechatPayRefusalsStoreNothing_data()
    {
        QTest::addColumn<QJsonObject>("transaction");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("serial");
        QTest::addColumn<qint64>("timestamp");
        QTest::addColumn<QString>("flip");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("reason");
        const QJsonObject good = test::wechatTransaction(QStringLiteral("4200000001202612029999"),
                                                         QStringLiteral("1010"), 9900);
        const QString wechat = QStringLiteral("wechat");
        const QString serial = QLatin1String(PlatformKit::kSerial);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        QTest::newRow("forged signature")
            << good << QStringLiteral("stranger") << serial << qint64(0) << QString() << 401
            << QStringLiteral("Wechatpay-Signature does not match");
        QTest::newRow("the other key's serial")
            << good << wechat << QString::fromLatin1(PlatformKit::kNextSerial) << qint64(0)
            << QString() << 401 << QStringLiteral("Wechatpay-Signature does not match");
        QTest::newRow("unknown serial")
            << good << wechat << QStringLiteral("0000UNKNOWN") << qint64(0) << QString() << 401
            << QStringLiteral("names no configured platform key");
        QTest::newRow("stale timestamp") << good << wechat << serial << qint64(now - 301)
                                         << QString() << 401 << QStringLiteral("300 s");
        QTest::newRow("future timestamp") << good << wechat << serial << qint64(now + 400)
                                          << QString() << 401 << QStringLiteral("300 s");
        QTest::newRow("flipped ciphertext bit")
            << good << wechat << serial << qint64(0) << QStringLiteral("ciphertext") << 401
            << QStringLiteral("does not decrypt");
        QTest::newRow("flipped tag bit")
            << good << wechat << serial << qint64(0) << QStringLiteral("tag") << 401
            << QStringLiteral("does not decrypt");
        QJsonObject other = good;
        other.insert(QStringLiteral("mchid"), QStringLiteral("1900000999"));
        QTest::newRow("wrong mchid") << other << wechat << serial << qint64(0) << QString() << 400
                                     << QStringLiteral("mchid");
        other = good;
        other.insert(QStringLiteral("appid"), QStringLiteral("wx0000000000000000"));
        QTest::newRow("wrong appid") << other << wechat << serial << qint64(0) << QString() << 400
                                     << QStringLiteral("appid");
        other = good;
        other.insert(QStringLiteral("out_trade_no"), QStringLiteral("ORDER-1010"));
        QTest::newRow("out_trade_no not an order id")
            << other << wechat << serial << qint64(0) << QString() << 400
            << QStringLiteral("out_trade_no must be a payops order id");
        // Three bytes are not three letters: ISO 4217's number for the yuan, and the yuan's
        // sign in UTF-8, were once taken and stored.
        for (const QString &currency : {QStringLiteral("156"), QStringLiteral("元"),
                                        QStringLiteral("CN"), QStringLiteral("CNY ")}) {
            other = good;
            QJsonObject amount = other.value(QStringLiteral("amount")).toObject();
            amount.insert(QStringLiteral("currency"), currency);
            other.insert(QStringLiteral("amount"), amount);
            QTest::newRow(qPrintable(QStringLiteral("currency ") + currency))
                << other << wechat << serial << qint64(0) << QString() << 400
                << QStringLiteral("amount.currency must be three letters");
        }
        other = good;
        other.remove(QStringLiteral("amount"));
        QTest::newRow("no amount") << other << wechat << serial << qint64(0) << QString() << 400
                                   << QStringLiteral("resource.amount must be an object");
    }

    void wechatPayRefusalsStoreNothing()
    {
        QFETCH(QJsonObject, transaction);
        QFETCH(QString, key);
        QFETCH(QString, serial);
        QFETCH(qint64, timestamp);
        QFETCH(QString, flip);
        QFETCH(int, status);
        QFETCH(QString, reason);
        PlatformKit::WechatOptions options;
        options.key = key;
        options.serial = serial;
        options.timestamp = timestamp;
        options.flip = flip;
        const auto notification = m_kit->wechat(transaction, options);
        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult result = post(kWechatPath, notification);
        QCOMPARE(result.status, status);
        QVERIFY2(result.body.contains("\"code\":\"FAIL\"") &&
                     QString::fromUtf8(result.body).contains(reason),
                 result.body.constData());
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    // An Alipay notice (WAIT_BUYER_PAY) is recorded and pays nothing; its TRADE_SUCCESS pays;
    // the TRADE_FINISHED Alipay sends when the refund period ends is the same payment, a replay;
    // its TRADE_CLOSED after a full refund is taken and stores nothing.
    void alipayNoticeThenSuccessThenFinished()
    {
        const auto send = [this](const QString &status) {
            return test::postTo(m_service->port(), kAlipayPath,
                                m_kit->alipay(test::alipayTrade(QStringLiteral("2026120222001"),
                                                                QStringLiteral("1004"),
                                                                QStringLiteral("99.00"), status)),
                                {}, kForm);
        };
        test::HttpResult result = send(QStringLiteral("WAIT_BUYER_PAY"));
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray("success"));
        QCOMPARE(orderStatus(1004), QStringLiteral("PENDING"));
        QCOMPARE(text("SELECT status FROM pay_callback_log WHERE pay_no = '2026120222001'"),
                 QStringLiteral("IGNORED"));

        result = send(QStringLiteral("TRADE_SUCCESS"));
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray("success"));
        QCOMPARE(orderStatus(1004), QStringLiteral("PAID"));
        QCOMPARE(text("SELECT CONCAT_WS('|', status, wire_format, channel, trade_status, "
                      "amount_fen, currency, platform_paid_at) FROM pay_callback_log WHERE "
                      "pay_no = '2026120222001'"),
                 QStringLiteral("PROCESSED|alipay|alipay|TRADE_SUCCESS|9900|CNY|"
                                "2026-12-02 09:00:00.000"));

        const QString before = test::businessFingerprint(m_db->dsn());
        result = send(QStringLiteral("TRADE_FINISHED"));
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray("success"));
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);

        // TRADE_CLOSED once the paid trade is refunded in full: taken, so that Alipay stops
        // resending it, and nothing changes. Another amount is still a conflict.
        result = send(QStringLiteral("TRADE_CLOSED"));
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray("success"));
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
        QCOMPARE(text("SELECT outcome FROM callback_trace WHERE pay_no = '2026120222001' "
                      "ORDER BY id DESC LIMIT 1"),
                 QStringLiteral("ignored"));
        result = test::postTo(m_service->port(), kAlipayPath,
                              m_kit->alipay(test::alipayTrade(
                                  QStringLiteral("2026120222001"), QStringLiteral("1004"),
                                  QStringLiteral("98.00"), QStringLiteral("TRADE_CLOSED"))),
                              {}, kForm);
        QCOMPARE(result.status, 409);
        QCOMPARE(result.body, QByteArray("fail"));
    }

    // A GBK form with a Chinese subject verifies over its GBK bytes, and its row keeps those
    // bytes exactly.
    void alipayGbkIsStoredAsReceived()
    {
        QStringList trade = test::alipayTrade(QStringLiteral("2026120222002"),
                                              QStringLiteral("1005"), QStringLiteral("99"));
        trade << QStringLiteral("body=支付宝测试：订单一〇〇五");
        trade.replaceInStrings(QStringLiteral("subject=payops order 1005"),
                               QStringLiteral("subject=测试商品（大号）"));
        const QByteArray body = m_kit->alipay(trade, QStringLiteral("gbk"));
        QVERIFY(body.contains("%B2%E2%CA%D4")); // 测试 in GBK
        const test::HttpResult result =
            test::postTo(m_service->port(), kAlipayPath, body, {}, kForm);
        QCOMPARE(result.status, 200);
        QCOMPARE(result.body, QByteArray("success"));
        QCOMPARE(orderStatus(1005), QStringLiteral("PAID"));
        QCOMPARE(bytes("SELECT raw_body FROM pay_callback_log WHERE pay_no = '2026120222002'"),
                 body);
        QCOMPARE(text("SELECT amount_fen FROM pay_callback_log WHERE pay_no = '2026120222002'"),
                 QStringLiteral("9900"));
    }

    void alipayRefusalsStoreNothing_data()
    {
        QTest::addColumn<QStringList>("parameters");
        QTest::addColumn<QString>("charset");
        QTest::addColumn<QString>("signCharset");
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("status");
        const QStringList good = test::alipayTrade(QStringLiteral("2026120222999"),
                                                   QStringLiteral("1011"), QStringLiteral("99.00"));
        const QString utf8 = QStringLiteral("utf-8");
        const QString alipay = QStringLiteral("alipay");
        QTest::newRow("forged signature")
            << good << utf8 << QString() << QStringLiteral("stranger") << 401;
        QTest::newRow("signed over UTF-8, sent in GBK")
            << (QStringList(good) << QStringLiteral("body=测试商品")) << QStringLiteral("gbk")
            << utf8 << alipay << 401;
        QTest::newRow("signed over GBK, sent in UTF-8")
            << (QStringList(good) << QStringLiteral("body=测试商品")) << utf8
            << QStringLiteral("gbk") << alipay << 401;
        QStringList other = good;
        other.replaceInStrings(QStringLiteral("app_id=") + QLatin1String(PlatformKit::kAlipayAppId),
                               QStringLiteral("app_id=2021000000000999"));
        QTest::newRow("wrong app_id") << other << utf8 << QString() << alipay << 400;
        other = good;
        other.replaceInStrings(QStringLiteral("total_amount=99.00"),
                               QStringLiteral("total_amount=99.001"));
        QTest::newRow("three decimals") << other << utf8 << QString() << alipay << 400;
        other = good;
        other.replaceInStrings(QStringLiteral("total_amount=99.00"),
                               QStringLiteral("total_amount=9.9e1"));
        QTest::newRow("exponent") << other << utf8 << QString() << alipay << 400;
        other = good;
        other.replaceInStrings(QStringLiteral("out_trade_no=1011"),
                               QStringLiteral("out_trade_no=A1011"));
        QTest::newRow("out_trade_no not an order id")
            << other << utf8 << QString() << alipay << 400;
        QTest::newRow("charset big5")
            << good << QStringLiteral("big5") << QString() << alipay << 400;
    }

    void alipayRefusalsStoreNothing()
    {
        QFETCH(QStringList, parameters);
        QFETCH(QString, charset);
        QFETCH(QString, signCharset);
        QFETCH(QString, key);
        QFETCH(int, status);
        const QByteArray body = m_kit->alipay(parameters, charset, signCharset, key);
        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult result =
            test::postTo(m_service->port(), kAlipayPath, body, {}, kForm);
        QCOMPARE(result.status, status);
        QCOMPARE(result.body, QByteArray("fail"));
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    // The customer pays an order by WeChat Pay, then again by Alipay: the second is refused
    // order_already_paid and counted as a payment to refund, under Alipay's TRADE_SUCCESS.
    void secondPaymentByAnotherPlatformIsADoublePayment()
    {
        const auto wechat = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612020008"), QStringLiteral("1008"), 9900));
        QCOMPARE(post(kWechatPath, wechat).status, 200);
        const test::HttpResult second = test::postTo(
            m_service->port(), kAlipayPath,
            m_kit->alipay(test::alipayTrade(QStringLiteral("2026120222008"), QStringLiteral("1008"),
                                            QStringLiteral("99.00"))),
            {}, kForm);
        QCOMPARE(second.status, 200); // recorded: Alipay must stop retrying
        QCOMPARE(second.body, QByteArray("success"));
        QCOMPARE(text("SELECT CONCAT(status, ' ', reason) FROM pay_callback_log WHERE pay_no = "
                      "'2026120222008'"),
                 QStringLiteral("REJECTED order_already_paid"));
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const DoublePayments doubles = countDoublePayments(connection.database());
        QVERIFY2(doubles.sampleOrderIds.contains(1008), qPrintable(doubles.describe()));
    }

    // Recorded while RECORD_ONLY, a WeChat Pay row is paid by `payops drain` from its decoded
    // columns: its raw body is ciphertext no drain could read.
    void recordedWechatPayRowIsDrained()
    {
        const QString dsn = m_db->dsn().toString();
        const test::CliRun on =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"),
                          dsn, QStringLiteral("--reason"), QStringLiteral("drill"),
                          QStringLiteral("--wait"), QStringLiteral("10")});
        QVERIFY2(on.exitCode == 0, qPrintable(on.err + on.out));
        const auto notification = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612020006"), QStringLiteral("1006"), 9900));
        QCOMPARE(post(kWechatPath, notification).status, 200);
        QCOMPARE(text("SELECT status FROM pay_callback_log WHERE pay_no = "
                      "'4200000001202612020006'"),
                 QStringLiteral("RECORDED"));
        QCOMPARE(orderStatus(1006), QStringLiteral("PENDING"));

        const test::CliRun off =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("off"), QStringLiteral("--db"),
                          dsn, QStringLiteral("--reason"), QStringLiteral("drill over"),
                          QStringLiteral("--wait"), QStringLiteral("10")});
        QVERIFY2(off.exitCode == 0, qPrintable(off.err + off.out));
        const test::CliRun drain =
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"), dsn});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err + drain.out));
        QCOMPARE(text("SELECT CONCAT(status, reason) FROM pay_callback_log WHERE pay_no = "
                      "'4200000001202612020006'"),
                 QStringLiteral("PROCESSED"));
        QCOMPARE(orderStatus(1006), QStringLiteral("PAID"));
        QCOMPARE(text("SELECT pay_no FROM orders WHERE id = 1006"),
                 QStringLiteral("4200000001202612020006"));
    }

    // The endpoint's account (payops_endpoint alone) takes both platforms, a notice upgraded
    // to its success included; the operator's account (payops_operator alone) drains a WeChat
    // Pay row recorded while RECORD_ONLY.
    void eachRoleDoesItsPart()
    {
        test::ScratchDatabase scratch(QStringLiteral("platformroles"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 5);
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        test::CallbackdProcess service(endpoint.dsnFor(scratch.name()), QStringLiteral("safe"),
                                       QString(), m_kit->callbackdArguments());
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const auto status = [&root](const char *sql) {
            return db::scalar(root.database(), QString::fromUtf8(sql)).toString();
        };

        const auto wechat = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612021001"), QStringLiteral("1001"), 9900));
        QCOMPARE(test::postTo(service.port(), kWechatPath, wechat.body, wechat.headers).status,
                 200);
        QCOMPARE(status("SELECT status FROM orders WHERE id = 1001"), QStringLiteral("PAID"));
        for (const char *tradeStatus : {"WAIT_BUYER_PAY", "TRADE_SUCCESS"}) {
            const QByteArray form = m_kit->alipay(
                test::alipayTrade(QStringLiteral("2026120222101"), QStringLiteral("1002"),
                                  QStringLiteral("99.00"), QLatin1String(tradeStatus)));
            QCOMPARE(test::postTo(service.port(), kAlipayPath, form, {}, kForm).body,
                     QByteArray("success"));
        }
        QCOMPARE(status("SELECT CONCAT(o.status, ' ', c.status, ' ', c.trade_status) FROM orders "
                        "o JOIN pay_callback_log c ON c.order_id = o.id WHERE o.id = 1002"),
                 QStringLiteral("PAID PROCESSED TRADE_SUCCESS"));

        const QMap<QString, QString> password{
            {QStringLiteral("PAYOPS_DB_PASSWORD"), operatorAccount.password()}};
        const QString operatorDsn = operatorAccount.dsnFor(scratch.name()).toString();
        const auto runAsOperator = [&](const QStringList &arguments) {
            const test::CliRun run =
                test::runCli(QStringList{arguments.first(), QStringLiteral("--db"), operatorDsn} +
                                 arguments.mid(1),
                             password);
            return run.exitCode == 0 ? QString() : run.err + run.out;
        };
        QCOMPARE(runAsOperator({QStringLiteral("degrade"), QStringLiteral("on"),
                                QStringLiteral("--reason"), QStringLiteral("drill"),
                                QStringLiteral("--wait"), QStringLiteral("10")}),
                 QString());
        const auto recorded = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612021003"), QStringLiteral("1003"), 9900));
        QCOMPARE(test::postTo(service.port(), kWechatPath, recorded.body, recorded.headers).status,
                 200);
        QCOMPARE(status("SELECT status FROM pay_callback_log WHERE pay_no = "
                        "'4200000001202612021003'"),
                 QStringLiteral("RECORDED"));
        QCOMPARE(runAsOperator({QStringLiteral("degrade"), QStringLiteral("off"),
                                QStringLiteral("--reason"), QStringLiteral("drill over"),
                                QStringLiteral("--wait"), QStringLiteral("10")}),
                 QString());
        QCOMPARE(runAsOperator({QStringLiteral("drain")}), QString());
        QCOMPARE(status("SELECT CONCAT(o.status, ' ', c.status) FROM orders o JOIN "
                        "pay_callback_log c ON c.order_id = o.id WHERE o.id = 1003"),
                 QStringLiteral("PAID PROCESSED"));
        QCOMPARE(service.terminate(), 0);
    }

    // One merchant, several apps (an app and a mini program, each with its own appid under the
    // one mchid): --wechatpay-appid once for each. A payment from either pays; one from an app
    // not given is refused and stores nothing.
    void aMerchantsSecondAppPays()
    {
        test::ScratchDatabase scratch(QStringLiteral("platformapps"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 3);
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        const QString miniProgram = QStringLiteral("wx5a1b2c3d4e5f6a7b");
        test::CallbackdProcess service(
            endpoint.dsnFor(scratch.name()), QStringLiteral("safe"), QString(),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--wechatpay-appid"), miniProgram});
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const auto payFrom = [&](const QString &appid, const QString &payNo, qint64 order) {
            QJsonObject transaction = test::wechatTransaction(payNo, QString::number(order), 9900);
            transaction.insert(QStringLiteral("appid"), appid);
            const auto notification = m_kit->wechat(transaction);
            return test::postTo(service.port(), kWechatPath, notification.body,
                                notification.headers);
        };
        QCOMPARE(payFrom(QLatin1String(PlatformKit::kAppid),
                         QStringLiteral("4200000001202612025001"), 1001)
                     .status,
                 200);
        QCOMPARE(payFrom(miniProgram, QStringLiteral("4200000001202612025002"), 1002).status, 200);
        const test::HttpResult stranger = payFrom(QStringLiteral("wx0000000000000000"),
                                                  QStringLiteral("4200000001202612025003"), 1003);
        QCOMPARE(stranger.status, 400);
        QVERIFY2(stranger.body.contains("--wechatpay-appid"), stranger.body.constData());
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(CONCAT(id, ' ', status) ORDER BY "
                                           "id) FROM orders"))
                     .toString(),
                 QStringLiteral("1001 PAID,1002 PAID,1003 PENDING"));
        QCOMPARE(
            db::scalar(root.database(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log"))
                .toInt(),
            2);
        QCOMPARE(service.terminate(), 0);
    }

    // Several Alipay apps (an app and a mini program), each with Alipay's public key for it:
    // --alipay-app ID=PEMFILE beside the first. Each notification is verified with its own
    // app's key alone: one signed with another app's key is refused and stores nothing.
    void eachAlipayAppIsVerifiedWithItsOwnKey()
    {
        test::ScratchDatabase scratch(QStringLiteral("platformalipayapps"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 3);
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        const QString miniProgram = QStringLiteral("2021000000000002");
        test::CallbackdProcess service(
            endpoint.dsnFor(scratch.name()), QStringLiteral("safe"), QString(),
            m_kit->callbackdArguments() +
                QStringList{QStringLiteral("--alipay-app"),
                            miniProgram + QLatin1Char('=') +
                                m_kit->publicKey(QStringLiteral("stranger"))});
        const auto pay = [&](const QString &appId, const QString &key, const QString &tradeNo,
                             qint64 order) {
            QStringList form =
                test::alipayTrade(tradeNo, QString::number(order), QStringLiteral("99.00"));
            form.replaceInStrings(QStringLiteral("app_id=") +
                                      QLatin1String(PlatformKit::kAlipayAppId),
                                  QStringLiteral("app_id=") + appId);
            return test::postTo(service.port(), kAlipayPath,
                                m_kit->alipay(form, QStringLiteral("utf-8"), QString(), key), {},
                                kForm)
                .status;
        };
        QCOMPARE(pay(QLatin1String(PlatformKit::kAlipayAppId), QStringLiteral("alipay"),
                     QStringLiteral("2026120222501"), 1001),
                 200);
        QCOMPARE(
            pay(miniProgram, QStringLiteral("stranger"), QStringLiteral("2026120222502"), 1002),
            200);
        // The mini program's notification signed with the first app's key.
        QCOMPARE(pay(miniProgram, QStringLiteral("alipay"), QStringLiteral("2026120222503"), 1003),
                 401);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(CONCAT(id, ' ', status) ORDER BY "
                                           "id) FROM orders"))
                     .toString(),
                 QStringLiteral("1001 PAID,1002 PAID,1003 PENDING"));
        QCOMPARE(service.terminate(), 0);
    }

    // Without its keys a platform's path does not exist; /callbacks/pay is unchanged.
    void unconfiguredPlatformsAre404()
    {
        test::CallbackdProcess bare(m_db->dsn());
        const auto notification = m_kit->wechat(test::wechatTransaction(
            QStringLiteral("4200000001202612020007"), QStringLiteral("1007"), 9900));
        QCOMPARE(
            test::postTo(bare.port(), kWechatPath, notification.body, notification.headers).status,
            404);
        const QByteArray form = m_kit->alipay(test::alipayTrade(
            QStringLiteral("2026120222007"), QStringLiteral("1007"), QStringLiteral("99.00")));
        QCOMPARE(test::postTo(bare.port(), kAlipayPath, form, {}, kForm).status, 404);
        QCOMPARE(orderStatus(1007), QStringLiteral("PENDING"));
        QCOMPARE(bare.terminate(), 0);
    }

    // A key file others may read, or a PEM without a public RSA key, stops the start.
    void unusableKeysAreRefusedAtStart_data()
    {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("mode"); // of the file, octal
        QTest::addColumn<QString>("error");
        QTest::newRow("APIv3 key readable by the group")
            << QStringLiteral("--wechatpay-apiv3-key-file") << m_kit->apiV3KeyFile() << 0640
            << QStringLiteral("is open to other users (mode 0640)");
        QTest::newRow("Alipay key readable by all")
            << QStringLiteral("--alipay-public-key") << m_kit->publicKey(QStringLiteral("alipay"))
            << 0644 << QStringLiteral("is open to other users (mode 0644)");
        QTest::newRow("a private key for a public one")
            << QStringLiteral("--alipay-public-key") << m_kit->privateKey(QStringLiteral("alipay"))
            << 0600 << QStringLiteral("is not an RSA public key");
    }

    void unusableKeysAreRefusedAtStart()
    {
        QFETCH(QString, option);
        QFETCH(QString, file);
        QFETCH(int, mode);
        QFETCH(QString, error);
        const QString copy = m_kit->directory() + QStringLiteral("/refused.pem");
        QFile::remove(copy);
        QVERIFY(QFile::copy(file, copy));
        QCOMPARE(::chmod(QFile::encodeName(copy).constData(), mode_t(mode)), 0);
        QStringList arguments = m_kit->callbackdArguments();
        arguments[arguments.indexOf(option) + 1] = copy;
        try {
            test::CallbackdProcess refused(m_db->dsn(), QStringLiteral("safe"), QString(),
                                           arguments);
            QFAIL("payops-callbackd started with an unusable key file");
        } catch (const std::runtime_error &failure) {
            QVERIFY2(QString::fromUtf8(failure.what()).contains(error), failure.what());
        }
    }

private:
    test::HttpResult post(const char *path, const PlatformKit::Notification &notification) const
    {
        return test::postTo(m_service->port(), path, notification.body, notification.headers);
    }

    QString text(const char *sql) const
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        return db::scalar(connection.database(), QString::fromUtf8(sql)).toString();
    }

    QByteArray bytes(const char *sql) const
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        return db::scalar(connection.database(), QString::fromUtf8(sql)).toByteArray();
    }

    QString orderStatus(qint64 orderId) const
    {
        return text(QStringLiteral("SELECT status FROM orders WHERE id = %1")
                        .arg(orderId)
                        .toUtf8()
                        .constData());
    }

    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<PlatformKit> m_kit;
    std::unique_ptr<test::CallbackdProcess> m_service;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdPlatforms)
#include "tst_callbackd_platforms.moc"
