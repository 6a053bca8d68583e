#include "domain/callback/alipay.h"
#include "domain/callback/wechatpay.h"
#include "testmain.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

using namespace payops;

namespace {

// Vectors made by tests/data/platforms/make-vectors with openssl and Python, never by payops.
QByteArray vector(const char *name)
{
    QFile file(QStringLiteral(PAYOPS_PLATFORM_VECTORS "/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

RsaPublicKey publicKey(const char *name)
{
    QString error;
    const auto key = RsaPublicKey::fromPem(vector(name), &error);
    if (!key)
        qFatal("%s: %s", name, qPrintable(error));
    return *key;
}

// What a refusal case changes in a vector or the keys.
enum class Change { None, Later, OtherSerial, BodyByte, OtherMchid, OtherAppid, OtherApiV3Key };

constexpr qint64 kSignedAt = 1796500000; // the vectors' Wechatpay-Timestamp
const QByteArray kSerial = "5157F09EFDC096DE15EBE81A47057A72";

WechatPayKeys wechatKeys()
{
    WechatPayKeys keys;
    keys.mchid = "1900000109";
    keys.appids = {"wxd678efh567hg6787"};
    keys.apiV3Key = vector("apiv3.key");
    keys.platformKeys.insert(kSerial, publicKey("wechat.pub.pem"));
    return keys;
}

AlipayKeys alipayKeys()
{
    AlipayKeys keys;
    keys.apps.insert("2021000000000001", publicKey("alipay.pub.pem"));
    return keys;
}

struct Notification
{
    QByteArray body;
    QHash<QByteArray, QByteArray> headers; // by lower-case name, as HTTP compares them
};

Notification wechatVector(const char *name)
{
    const QJsonObject made = QJsonDocument::fromJson(vector(name)).object();
    Notification notification{made.value(QStringLiteral("body")).toString().toUtf8(), {}};
    const QJsonObject headers = made.value(QStringLiteral("headers")).toObject();
    for (auto it = headers.begin(); it != headers.end(); ++it)
        notification.headers.insert(it.key().toUtf8().toLower(), it.value().toString().toUtf8());
    return notification;
}

HeaderLookup lookup(const QHash<QByteArray, QByteArray> &headers)
{
    return [headers](const char *name) { return headers.value(QByteArray(name).toLower()); };
}

Admission admitWechat(const Notification &notification, const WechatPayKeys &keys = wechatKeys(),
                      qint64 now = kSignedAt)
{
    return admitWechatPay(keys, lookup(notification.headers), notification.body, now);
}

// The refusal's status and message; 0 when admitted.
std::pair<int, QString> refusal(const Admission &admission)
{
    const auto *answer = std::get_if<CallbackAnswer>(&admission);
    if (!answer)
        return {0, {}};
    return {
        answer->httpStatus,
        QJsonDocument::fromJson(answer->body).object().value(QStringLiteral("message")).toString()};
}

// The decoded fields, in one line for one comparison.
QString fields(const CallbackRequest &request)
{
    return QStringList{QString::fromUtf8(request.payNo),
                       QString::number(request.orderId),
                       QString::number(request.amountFen),
                       request.currency,
                       request.tradeStatus,
                       request.paidAt,
                       request.channel,
                       QLatin1String(wireFormatName(request.wire))}
        .join(QLatin1Char(' '));
}

} // namespace

// The platforms' notifications as the domain admits them, against vectors made independently.
class TestPlatformNotifications final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void wechatPayIsDecryptedAndRead()
    {
        const Notification notification = wechatVector("wechat.json");
        const Admission admission = admitWechat(notification);
        QVERIFY2(std::holds_alternative<CallbackRequest>(admission),
                 qPrintable(refusal(admission).second));
        const auto &request = std::get<CallbackRequest>(admission);
        QCOMPARE(fields(request), QStringLiteral("4200000001202612020001 1001 9900 CNY SUCCESS "
                                                 "2026-12-02T17:00:00+08:00 wechat wechatpay"));
        QVERIFY(request.isSuccess());
        QCOMPARE(request.orderNo, QByteArray("1001"));
        QCOMPARE(request.rawBody, notification.body);
        QVERIFY2(request.rawHeaders.contains("Wechatpay-Serial: " + kSerial),
                 request.rawHeaders.constData());
        QVERIFY(request.rawHeaders.contains("Wechatpay-Nonce: 593BEC0C930BF1AFEB40B4A08C8FB242"));
    }

    void wechatPayRefusals_data()
    {
        QTest::addColumn<QString>("vector");
        QTest::addColumn<int>("change"); // what differs from the vector as made
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("message");
        const QString good = QStringLiteral("wechat.json");
        QTest::newRow("301 s later")
            << good << int(Change::Later) << 401 << QStringLiteral("300 s");
        QTest::newRow("serial not configured") << good << int(Change::OtherSerial) << 401
                                               << QStringLiteral("no configured platform key");
        QTest::newRow("a byte of the body changed")
            << good << int(Change::BodyByte) << 401 << QStringLiteral("does not match");
        QTest::newRow("flipped ciphertext bit")
            << QStringLiteral("wechat-flipped-ciphertext.json") << int(Change::None) << 401
            << QStringLiteral("does not decrypt");
        QTest::newRow("flipped tag bit")
            << QStringLiteral("wechat-flipped-tag.json") << int(Change::None) << 401
            << QStringLiteral("does not decrypt");
        QTest::newRow("another merchant")
            << good << int(Change::OtherMchid) << 400 << QStringLiteral("mchid");
        QTest::newRow("another app")
            << good << int(Change::OtherAppid) << 400 << QStringLiteral("appid");
        QTest::newRow("another APIv3 key")
            << good << int(Change::OtherApiV3Key) << 401 << QStringLiteral("does not decrypt");
    }

    void wechatPayRefusals()
    {
        QFETCH(QString, vector);
        QFETCH(int, change);
        QFETCH(int, status);
        QFETCH(QString, message);
        Notification notification = wechatVector(vector.toUtf8().constData());
        WechatPayKeys keys = wechatKeys();
        qint64 now = kSignedAt;
        switch (Change(change)) {
        case Change::None:
            break;
        case Change::Later:
            now += 301;
            break;
        case Change::OtherSerial:
            keys.platformKeys = {{"PUB_KEY_ID_OTHER", keys.platformKeys.value(kSerial)}};
            break;
        case Change::BodyByte:
            notification.body.replace("TRANSACTION.SUCCESS", "TRANSACTION.SUCCESs");
            break;
        case Change::OtherMchid:
            keys.mchid = "1900000999";
            break;
        case Change::OtherAppid:
            keys.appids = {"wx0000000000000000"};
            break;
        case Change::OtherApiV3Key:
            keys.apiV3Key = QByteArray(32, 'k');
            break;
        }
        const auto [code, text] = refusal(admitWechat(notification, keys, now));
        QCOMPARE(code, status);
        QVERIFY2(text.contains(message), qPrintable(text));
    }

    void alipayIsVerifiedInItsCharset_data()
    {
        QTest::addColumn<QString>("vector");
        QTest::newRow("utf-8") << QStringLiteral("alipay-utf8.form");
        QTest::newRow("gbk") << QStringLiteral("alipay-gbk.form");
    }

    void alipayIsVerifiedInItsCharset()
    {
        QFETCH(QString, vector);
        const QByteArray body = ::vector(vector.toUtf8().constData());
        const Admission admission = admitAlipay(alipayKeys(), lookup({}), body);
        QVERIFY2(std::holds_alternative<CallbackRequest>(admission),
                 qPrintable(refusal(admission).second));
        const auto &request = std::get<CallbackRequest>(admission);
        QCOMPARE(fields(request), QStringLiteral("2026120222001 1001 8880 CNY TRADE_FINISHED "
                                                 "2026-12-02T17:00:00+08:00 alipay alipay"));
        QVERIFY(request.isSuccess());
        QCOMPARE(request.rawBody, body);
    }

    void alipayRefusals()
    {
        const QByteArray gbk = vector("alipay-gbk.form");
        QCOMPARE(
            refusal(admitAlipay(alipayKeys(), lookup({}), vector("alipay-gbk-signed-utf8.form")))
                .first,
            401);
        AlipayKeys otherApp;
        otherApp.apps.insert("2021000000000999", publicKey("alipay.pub.pem"));
        QCOMPARE(refusal(admitAlipay(otherApp, lookup({}), gbk)).first, 400);
        AlipayKeys otherKey;
        otherKey.apps.insert("2021000000000001", publicKey("wechat.pub.pem"));
        QCOMPARE(refusal(admitAlipay(otherKey, lookup({}), gbk)).first, 401);
        // Several apps: a notification is verified with its own app's key alone, even where
        // another app's key would verify it.
        AlipayKeys twoApps = otherKey;
        twoApps.apps.insert("2021000000000999", publicKey("alipay.pub.pem"));
        QCOMPARE(refusal(admitAlipay(twoApps, lookup({}), gbk)).first, 401);
        twoApps.apps.insert("2021000000000001", publicKey("alipay.pub.pem"));
        QVERIFY(std::holds_alternative<CallbackRequest>(admitAlipay(twoApps, lookup({}), gbk)));
        QCOMPARE(refusal(admitAlipay(alipayKeys(), lookup({}),
                                     QByteArray(gbk).replace("88.80", "88.81")))
                     .first,
                 401);
        QCOMPARE(refusal(admitAlipay(alipayKeys(), lookup({}), gbk + "&extra=%G1")).first, 400);
        QCOMPARE(refusal(admitAlipay(alipayKeys(), lookup({}), gbk + "&charset=utf-8")).first, 400);
        QCOMPARE(refusal(admitAlipay(alipayKeys(), lookup({}),
                                     QByteArray(gbk).replace("sign_type=RSA2", "sign_type=RSA")))
                     .first,
                 400);
    }

    // Only a request whose signature verified carries the digest that may keep its connection:
    // not one refused before the check (not a form, a charset, a sign_type) nor by it. The same
    // form in another parameter order or escape is the same signed content.
    void onlyVerifiedNotificationsCarryASignedDigest()
    {
        const QByteArray gbk = vector("alipay-gbk.form");
        const auto digest = [](const Admission &admission) {
            return std::visit([](const auto &admitted) { return admitted.signedDigest; },
                              admission);
        };
        const QByteArray verified = digest(admitAlipay(alipayKeys(), lookup({}), gbk));
        QCOMPARE(verified.size(), 32);
        for (const QByteArray &unsigned_ :
             {QByteArray("x"), gbk + "&extra=%G1", gbk + "&charset=utf-8",
              QByteArray(gbk).replace("sign_type=RSA2", "sign_type=RSA"),
              QByteArray(gbk).replace("88.80", "88.81")})
            QVERIFY2(digest(admitAlipay(alipayKeys(), lookup({}), unsigned_)).isEmpty(),
                     unsigned_.left(60).constData());

        QByteArrayList reordered = gbk.split('&');
        std::reverse(reordered.begin(), reordered.end());
        QCOMPARE(digest(admitAlipay(alipayKeys(), lookup({}), reordered.join('&'))), verified);
        QCOMPARE(digest(admitAlipay(alipayKeys(), lookup({}),
                                    QByteArray(gbk).replace("&trade_no=2", "&trade_no=%32"))),
                 verified);
        // An app not configured has no key to verify with: refused before the signature.
        AlipayKeys otherApp;
        otherApp.apps.insert("2021000000000999", publicKey("alipay.pub.pem"));
        QVERIFY(digest(admitAlipay(otherApp, lookup({}), gbk)).isEmpty());

        const Notification wechat = wechatVector("wechat.json");
        QCOMPARE(digest(admitWechat(wechat)).size(), 32);
        QVERIFY(digest(admitWechat(wechat, wechatKeys(), kSignedAt + 301)).isEmpty());
        Notification forged = wechat;
        forged.body.replace("TRANSACTION.SUCCESS", "TRANSACTION.SUCCESs");
        QVERIFY(digest(admitWechat(forged)).isEmpty());
    }

    void yuanToFenIsExact_data()
    {
        QTest::addColumn<QByteArray>("yuan");
        QTest::addColumn<qint64>("fen"); // -1: refused
        QTest::newRow("whole") << QByteArray("88") << qint64(8800);
        QTest::newRow("one decimal") << QByteArray("88.8") << qint64(8880);
        QTest::newRow("two decimals") << QByteArray("88.80") << qint64(8880);
        QTest::newRow("a fen") << QByteArray("0.01") << qint64(1);
        QTest::newRow("zero") << QByteArray("0") << qint64(0);
        // 0.29 * 100 is 28.999999999999996 in binary floating point.
        QTest::newRow("no floating point") << QByteArray("0.29") << qint64(29);
        QTest::newRow("15 digits") << QByteArray("999999999999999.99") << qint64(99999999999999999);
        QTest::newRow("three decimals") << QByteArray("1.005") << qint64(-1);
        QTest::newRow("16 digits") << QByteArray("1000000000000000") << qint64(-1);
        QTest::newRow("negative") << QByteArray("-1.00") << qint64(-1);
        QTest::newRow("plus") << QByteArray("+1.00") << qint64(-1);
        QTest::newRow("leading zero") << QByteArray("01.00") << qint64(-1);
        QTest::newRow("trailing point") << QByteArray("1.") << qint64(-1);
        QTest::newRow("leading point") << QByteArray(".5") << qint64(-1);
        QTest::newRow("exponent") << QByteArray("1e2") << qint64(-1);
        QTest::newRow("space") << QByteArray(" 1") << qint64(-1);
        QTest::newRow("comma") << QByteArray("1,00") << qint64(-1);
        QTest::newRow("empty") << QByteArray() << qint64(-1);
    }

    void yuanToFenIsExact()
    {
        QFETCH(QByteArray, yuan);
        QFETCH(qint64, fen);
        QCOMPARE(yuanToFen(yuan).value_or(-1), fen);
    }

    // The platforms' own rules for the merchant's order number; their published samples pass.
    void orderNumbersByPlatform_data()
    {
        QTest::addColumn<QByteArray>("outTradeNo");
        QTest::addColumn<bool>("wechatPay");
        QTest::addColumn<bool>("alipay");
        QTest::newRow("WeChat Pay's sample")
            << QByteArray("1217752501201407033233368018") << true << true;
        QTest::newRow("Alipay's sample")
            << QByteArray("N202404181780861744366403007") << true << true;
        QTest::newRow("WeChat Pay's signs") << QByteArray("A_b-c|d*9") << true << true;
        QTest::newRow("payops's order id") << QByteArray("1001") << true << true;
        QTest::newRow("1 character") << QByteArray("7") << true << true;
        QTest::newRow("32 characters") << QByteArray(32, 'W') << true << true;
        QTest::newRow("33 characters") << QByteArray(33, 'W') << false << true;
        QTest::newRow("64 characters") << QByteArray(64, 'A') << false << true;
        QTest::newRow("65 characters") << QByteArray(65, 'A') << false << false;
        QTest::newRow("a dot") << QByteArray("ORDER.1001") << false << true;
        QTest::newRow("a space") << QByteArray("ORDER 1001") << false << false;
        QTest::newRow("a tab") << QByteArray("ORDER\t1001") << false << false;
        QTest::newRow("Chinese") << QByteArray("订单1001") << false << false;
        QTest::newRow("empty") << QByteArray() << false << false;
    }

    void orderNumbersByPlatform()
    {
        QFETCH(QByteArray, outTradeNo);
        QFETCH(bool, wechatPay);
        QFETCH(bool, alipay);
        QString error;
        QCOMPARE(checkWechatPayOrderNo(outTradeNo, &error), wechatPay);
        QCOMPARE(error.isEmpty(), wechatPay);
        error.clear();
        QCOMPARE(checkAlipayOrderNo(outTradeNo, &error), alipay);
        QCOMPARE(error.isEmpty(), alipay);
    }

    // A handler takes only payops order ids, and its refusal is still the platform's signed
    // request; a gateway takes any order number.
    void aHandlerTakesOnlyOrderIds()
    {
        CallbackRequest named;
        named.orderNo = "N202404181780861744366403007";
        named.signedDigest = "digest";
        QCOMPARE(refusal(forMode(named, false)).first, 0);
        const Admission refused = forMode(named, true);
        QCOMPARE(refusal(refused).first, 400);
        QVERIFY2(refusal(refused).second.contains(QStringLiteral("must be a payops order id")),
                 qPrintable(refusal(refused).second));
        QCOMPARE(std::get<CallbackAnswer>(refused).signedDigest, QByteArray("digest"));
        CallbackRequest numbered;
        numbered.orderNo = "1001";
        numbered.orderId = 1001;
        QCOMPARE(refusal(forMode(numbered, true)).first, 0);
        QCOMPARE(orderIdFrom("1217752501201407033233368018"), std::nullopt); // past a BIGINT
        QCOMPARE(orderIdFrom("9223372036854775807"), std::optional<qint64>(9223372036854775807));
    }

    // Alipay's two success statuses pay, and one following the other is the same payment.
    void alipaySuccessStatuses()
    {
        CallbackRequest success;
        success.wire = WireFormat::Alipay;
        success.tradeStatus = QStringLiteral("TRADE_SUCCESS");
        CallbackRequest finished = success;
        finished.tradeStatus = QStringLiteral("TRADE_FINISHED");
        CallbackRequest waiting = success;
        waiting.tradeStatus = QStringLiteral("WAIT_BUYER_PAY");
        QVERIFY(success.isSuccess());
        QVERIFY(finished.isSuccess());
        QVERIFY(!waiting.isSuccess());
        QVERIFY(success.sameContentAs(finished));
        QVERIFY(!success.sameContentAs(waiting));
        CallbackRequest payops = success; // SUCCESS is payops's and WeChat Pay's word, not Alipay's
        payops.wire = WireFormat::Payops;
        QVERIFY(!payops.isSuccess());
    }

    void keysMustBePublicRsa()
    {
        QString error;
        QVERIFY(!RsaPublicKey::fromPem(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", &error));
        QVERIFY2(error.contains(QStringLiteral("no public key")), qPrintable(error));
        // An Ed25519 key (RFC 8410's example) is a public key, but not RSA.
        QVERIFY(
            !RsaPublicKey::fromPem("-----BEGIN PUBLIC KEY-----\n"
                                   "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n"
                                   "-----END PUBLIC KEY-----\n",
                                   &error));
        QVERIFY2(error.contains(QStringLiteral("not an RSA key")), qPrintable(error));
    }
};

PAYOPS_TEST_MAIN_CORE(TestPlatformNotifications)
#include "tst_platformnotifications.moc"
