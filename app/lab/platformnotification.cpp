#include "platformnotification.h"

#include "domain/callback/signature.h"
#include "domain/money/money.h"
#include "labcrypto.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QUrl>

#include <map>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct PlatformNotifierText
{
    Q_DECLARE_TR_FUNCTIONS(payops::PlatformNotifier)
};

QByteArray randomAlphanumeric(int length)
{
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    QByteArray text;
    for (int i = 0; i < length; ++i)
        text += kAlphabet[QRandomGenerator::global()->bounded(int(sizeof kAlphabet) - 1)];
    return text;
}

// RFC 3339 in Beijing time, as WeChat Pay writes its times: 2026-12-01T10:00:00+08:00.
QString beijingRfc3339(const QDateTime &utc)
{
    return utc.toOffsetFromUtc(8 * 3600).toString(Qt::ISODate);
}

// Alipay's times: "2026-12-01 10:00:00", Beijing time.
QByteArray beijingPlain(const QDateTime &utc)
{
    return utc.toOffsetFromUtc(8 * 3600).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")).toLatin1();
}

class PayopsNotifier final : public PlatformNotifier
{
public:
    explicit PayopsNotifier(QByteArray secret)
        : m_secret(std::move(secret))
    {
    }

    PlatformRequest render(const PlatformPayment &payment, bool forged) const override
    {
        PlatformRequest request;
        request.path = wireFormatPath(WireFormat::Payops);
        request.contentType = "application/json";
        request.body =
            QJsonDocument(
                QJsonObject{
                    {QStringLiteral("pay_no"), QString::fromLatin1(payment.payNo)},
                    {QStringLiteral("order_id"), payment.order},
                    {QStringLiteral("amount_fen"), payment.amountFen},
                    {QStringLiteral("currency"), payment.currency},
                    {QStringLiteral("channel"), QStringLiteral("wechat")},
                    {QStringLiteral("trade_status"), QStringLiteral("SUCCESS")},
                    {QStringLiteral("paid_at"), payment.paidAt.toString(Qt::ISODateWithMs)}})
                .toJson(QJsonDocument::Compact);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        request.headers = {
            {"X-Payops-Timestamp", QByteArray::number(now)},
            {"X-Payops-Signature",
             signatureHeader(forged ? m_secret + "-forged" : m_secret, now, request.body)}};
        return request;
    }

private:
    QByteArray m_secret;
};

// A platform that signs with an RSA key of the sandbox's.
class RsaSigningNotifier : public PlatformNotifier
{
protected:
    RsaSigningNotifier(const PlatformKeys &keys, const QByteArray &privateKeyPem)
        : m_keys(keys)
        , m_key(RsaPrivateKey::fromPem(privateKeyPem))
    {
    }

    // The RSA-SHA256 signature over `data`; for a forged delivery one that does not verify,
    // what an attacker without the platform's key sends.
    QByteArray sign(const QByteArray &data, bool forged) const
    {
        QByteArray signature = m_key.signSha256(data);
        if (forged)
            signature[0] = char(signature[0] ^ 0x5a);
        return signature;
    }

    const PlatformKeys m_keys;

private:
    const RsaPrivateKey m_key;
};

// WeChat Pay API v3's notification of a successful payment: the transaction encrypted with
// the merchant's APIv3 key (AES-256-GCM, a fresh nonce each time), the request signed with the
// platform's private key over "timestamp\nnonce\nbody\n".
class WechatPayNotifier final : public RsaSigningNotifier
{
public:
    explicit WechatPayNotifier(const PlatformKeys &keys)
        : RsaSigningNotifier(keys, keys.wechatPrivateKeyPem)
    {
    }

    PlatformRequest render(const PlatformPayment &payment, bool forged) const override
    {
        const QString paidAt = beijingRfc3339(payment.paidAt);
        const QJsonObject transaction{
            {QStringLiteral("mchid"), QString::fromLatin1(m_keys.wechatMchId)},
            {QStringLiteral("appid"), QString::fromLatin1(m_keys.wechatAppId)},
            {QStringLiteral("out_trade_no"), QString::number(payment.order)},
            {QStringLiteral("transaction_id"), QString::fromLatin1(payment.payNo)},
            {QStringLiteral("trade_type"), QStringLiteral("JSAPI")},
            {QStringLiteral("trade_state"), QStringLiteral("SUCCESS")},
            {QStringLiteral("trade_state_desc"), QStringLiteral("支付成功")},
            {QStringLiteral("bank_type"), QStringLiteral("OTHERS")},
            {QStringLiteral("attach"), QString()},
            {QStringLiteral("success_time"), paidAt},
            {QStringLiteral("payer"),
             QJsonObject{{QStringLiteral("openid"),
                          QStringLiteral("oSandbox%1")
                              .arg(payment.order % 1000, 3, 10, QLatin1Char('0'))}}},
            {QStringLiteral("amount"),
             QJsonObject{{QStringLiteral("total"), payment.amountFen},
                         {QStringLiteral("payer_total"), payment.amountFen},
                         {QStringLiteral("currency"), payment.currency},
                         {QStringLiteral("payer_currency"), payment.currency}}}};
        const QByteArray associatedData = "transaction";
        const QByteArray nonce = randomAlphanumeric(12);
        const QByteArray ciphertext =
            aes256GcmSeal(m_keys.wechatApiV3Key, nonce, associatedData,
                          QJsonDocument(transaction).toJson(QJsonDocument::Compact));
        const QJsonObject notification{
            {QStringLiteral("id"), QString::fromLatin1(payment.eventId)},
            // The event's, the same in every delivery of it, like its id.
            {QStringLiteral("create_time"), paidAt},
            {QStringLiteral("resource_type"), QStringLiteral("encrypt-resource")},
            {QStringLiteral("event_type"), QStringLiteral("TRANSACTION.SUCCESS")},
            {QStringLiteral("summary"), QStringLiteral("支付成功")},
            {QStringLiteral("resource"),
             QJsonObject{{QStringLiteral("original_type"), QStringLiteral("transaction")},
                         {QStringLiteral("algorithm"), QStringLiteral("AEAD_AES_256_GCM")},
                         {QStringLiteral("ciphertext"), QString::fromLatin1(ciphertext.toBase64())},
                         {QStringLiteral("associated_data"), QString::fromLatin1(associatedData)},
                         {QStringLiteral("nonce"), QString::fromLatin1(nonce)}}}};

        PlatformRequest request;
        request.path = wireFormatPath(WireFormat::WechatPay);
        request.contentType = "application/json";
        request.body = QJsonDocument(notification).toJson(QJsonDocument::Compact);
        const QByteArray timestamp = QByteArray::number(QDateTime::currentSecsSinceEpoch());
        const QByteArray headerNonce = randomAlphanumeric(32);
        const QByteArray signature =
            sign(timestamp + '\n' + headerNonce + '\n' + request.body + '\n', forged);
        request.headers = {{"Wechatpay-Timestamp", timestamp},
                           {"Wechatpay-Nonce", headerNonce},
                           {"Wechatpay-Serial", m_keys.wechatSerial},
                           {"Wechatpay-Signature", signature.toBase64()},
                           {"Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048"}};
        return request;
    }
};

// Alipay's asynchronous notification: a form, signed (RSA2) with Alipay's private key over
// alipaySigningString; notify_time is the delivery's, notify_id the payment's.
class AlipayNotifier final : public RsaSigningNotifier
{
public:
    explicit AlipayNotifier(const PlatformKeys &keys)
        : RsaSigningNotifier(keys, keys.alipayPrivateKeyPem)
    {
    }

    PlatformRequest render(const PlatformPayment &payment, bool forged) const override
    {
        const QByteArray yuan = fenToYuan(payment.amountFen).toLatin1();
        QList<std::pair<QByteArray, QByteArray>> parameters{
            {"notify_time", beijingPlain(QDateTime::currentDateTimeUtc())},
            {"notify_type", "trade_status_sync"},
            {"notify_id", payment.eventId},
            {"app_id", m_keys.alipayAppId},
            {"charset", "utf-8"},
            {"version", "1.0"},
            {"sign_type", "RSA2"},
            {"trade_no", payment.payNo},
            {"out_trade_no", QByteArray::number(payment.order)},
            {"total_amount", yuan},
            {"receipt_amount", yuan},
            {"buyer_pay_amount", yuan},
            {"trade_status", "TRADE_SUCCESS"},
            {"gmt_create", beijingPlain(payment.paidAt.addSecs(-5))},
            {"gmt_payment", beijingPlain(payment.paidAt)},
            {"subject", QStringLiteral("沙箱订单 %1").arg(payment.order).toUtf8()}};
        parameters.append({"sign", sign(alipaySigningString(parameters), forged).toBase64()});

        PlatformRequest request;
        request.path = wireFormatPath(WireFormat::Alipay);
        request.contentType = "application/x-www-form-urlencoded; charset=utf-8";
        for (const auto &[name, value] : std::as_const(parameters)) {
            if (!request.body.isEmpty())
                request.body += '&';
            request.body += QUrl::toPercentEncoding(QString::fromUtf8(name)) + '=' +
                            QUrl::toPercentEncoding(QString::fromUtf8(value));
        }
        return request;
    }
};

} // namespace

std::unique_ptr<PlatformNotifier> PlatformNotifier::payops(const QByteArray &secret)
{
    return std::make_unique<PayopsNotifier>(secret);
}

std::unique_ptr<PlatformNotifier> PlatformNotifier::wechatPay(const PlatformKeys &keys)
{
    return std::make_unique<WechatPayNotifier>(keys);
}

std::unique_ptr<PlatformNotifier> PlatformNotifier::alipay(const PlatformKeys &keys)
{
    return std::make_unique<AlipayNotifier>(keys);
}

QString missingPlatformKeys(WireFormat format, const PlatformKeys &keys)
{
    QStringList missing;
    const auto need = [&missing](bool present, const char *what) {
        if (!present)
            missing << QLatin1String(what);
    };
    switch (format) {
    case WireFormat::Payops:
        break;
    case WireFormat::WechatPay:
        need(!keys.wechatPrivateKeyPem.isEmpty(), "wechatpay-platform-private.pem");
        need(!keys.wechatSerial.isEmpty(), "wechatpay-platform-serial");
        need(keys.wechatApiV3Key.size() == 32, "wechatpay-apiv3-key (32 bytes)");
        need(!keys.wechatMchId.isEmpty() && !keys.wechatAppId.isEmpty(),
             "ids (wechatpay_mchid, wechatpay_appid)");
        break;
    case WireFormat::Alipay:
        need(!keys.alipayPrivateKeyPem.isEmpty(), "alipay-private.pem");
        need(!keys.alipayAppId.isEmpty(), "ids (alipay_app_id)");
        break;
    }
    if (missing.isEmpty())
        return {};
    return PlatformNotifierText::tr("the keys for %1 lack %2 (payops sandbox start makes them)")
        .arg(QLatin1String(wireFormatName(format)), missing.join(QStringLiteral(", ")));
}

QByteArray alipaySigningString(const QList<std::pair<QByteArray, QByteArray>> &parameters)
{
    std::map<QByteArray, QByteArray> sorted;
    for (const auto &[name, value] : parameters)
        if (name != "sign" && name != "sign_type" && !value.isEmpty())
            sorted[name] = value;
    QByteArray text;
    for (const auto &[name, value] : sorted) {
        if (!text.isEmpty())
            text += '&';
        text += name + '=' + value;
    }
    return text;
}

} // namespace payops
