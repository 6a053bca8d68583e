#include "platformkit.h"

#include <QFile>
#include <QJsonDocument>
#include <QProcess>

#include <stdexcept>

namespace payops::test {
namespace {

void makePrivate(const QString &path)
{
    if (!QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner))
        throw std::runtime_error("cannot make a test key file private");
}

void openssl(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral("openssl"), arguments);
    if (!process.waitForFinished(60000) || process.exitCode() != 0)
        throw std::runtime_error("openssl " + arguments.join(QLatin1Char(' ')).toStdString() +
                                 " failed: " + process.readAllStandardError().toStdString());
}

} // namespace

PlatformKit::PlatformKit()
{
    for (const char *name : {"wechat", "wechat-next", "alipay", "stranger"}) {
        const QString key = privateKey(QLatin1String(name));
        openssl({QStringLiteral("genpkey"), QStringLiteral("-algorithm"), QStringLiteral("RSA"),
                 QStringLiteral("-pkeyopt"), QStringLiteral("rsa_keygen_bits:2048"),
                 QStringLiteral("-out"), key});
        openssl({QStringLiteral("pkey"), QStringLiteral("-in"), key, QStringLiteral("-pubout"),
                 QStringLiteral("-out"), publicKey(QLatin1String(name))});
        makePrivate(key);
        makePrivate(publicKey(QLatin1String(name)));
    }
    QFile apiV3(apiV3KeyFile());
    if (!apiV3.open(QIODevice::WriteOnly) || apiV3.write("k7Q2pX9mW4rT8vB1nC6yH3jL5sD0fG2a\n") < 0)
        throw std::runtime_error("cannot write the APIv3 key file");
    apiV3.close();
    makePrivate(apiV3KeyFile());
}

QString PlatformKit::privateKey(const QString &name) const
{
    return m_dir.filePath(name + QStringLiteral(".key.pem"));
}

QString PlatformKit::publicKey(const QString &name) const
{
    return m_dir.filePath(name + QStringLiteral(".pub.pem"));
}

QString PlatformKit::apiV3KeyFile() const
{
    return m_dir.filePath(QStringLiteral("apiv3.key"));
}

QStringList PlatformKit::callbackdArguments() const
{
    return {QStringLiteral("--wechatpay-mchid"),
            QLatin1String(kMchid),
            QStringLiteral("--wechatpay-appid"),
            QLatin1String(kAppid),
            QStringLiteral("--wechatpay-apiv3-key-file"),
            apiV3KeyFile(),
            QStringLiteral("--wechatpay-platform-key"),
            QLatin1String(kSerial) + QLatin1Char('=') + publicKey(QStringLiteral("wechat")),
            QStringLiteral("--wechatpay-platform-key"),
            QLatin1String(kNextSerial) + QLatin1Char('=') +
                publicKey(QStringLiteral("wechat-next")),
            QStringLiteral("--alipay-app-id"),
            QLatin1String(kAlipayAppId),
            QStringLiteral("--alipay-public-key"),
            publicKey(QStringLiteral("alipay"))};
}

QByteArray PlatformKit::run(const QStringList &arguments) const
{
    QProcess process;
    process.start(QStringLiteral("python3"),
                  QStringList{QStringLiteral(PAYOPS_PLATFORMNOTIFY_PY)} + arguments);
    if (!process.waitForFinished(60000) || process.exitCode() != 0)
        throw std::runtime_error("platformnotify.py failed: " +
                                 process.readAllStandardError().toStdString());
    return process.readAllStandardOutput();
}

PlatformKit::Notification PlatformKit::wechat(const QJsonObject &transaction,
                                              const WechatOptions &options) const
{
    QStringList arguments{QStringLiteral("wechat"),
                          QStringLiteral("--key"),
                          privateKey(options.key),
                          QStringLiteral("--apiv3-key-file"),
                          apiV3KeyFile(),
                          QStringLiteral("--serial"),
                          options.serial};
    if (options.timestamp != 0)
        arguments << QStringLiteral("--timestamp") << QString::number(options.timestamp);
    if (!options.flip.isEmpty())
        arguments << QStringLiteral("--flip") << options.flip;
    arguments << QStringLiteral("--event-type") << options.eventType;
    arguments << QString::fromUtf8(QJsonDocument(transaction).toJson(QJsonDocument::Compact));
    const QJsonObject made = QJsonDocument::fromJson(run(arguments)).object();
    Notification notification;
    notification.body = made.value(QStringLiteral("body")).toString().toUtf8();
    const QJsonObject headers = made.value(QStringLiteral("headers")).toObject();
    for (auto it = headers.begin(); it != headers.end(); ++it)
        notification.headers.append({it.key().toUtf8(), it.value().toString().toUtf8()});
    return notification;
}

QByteArray PlatformKit::alipay(const QStringList &parameters, const QString &charset,
                               const QString &signCharset, const QString &key) const
{
    QStringList arguments{QStringLiteral("alipay"), QStringLiteral("--key"), privateKey(key),
                          QStringLiteral("--charset"), charset};
    if (!signCharset.isEmpty())
        arguments << QStringLiteral("--sign-charset") << signCharset;
    return run(arguments + parameters);
}

QJsonObject wechatTransaction(const QString &transactionId, const QString &outTradeNo,
                              qint64 totalFen, const QString &tradeState)
{
    return {
        {QStringLiteral("mchid"), QLatin1String(PlatformKit::kMchid)},
        {QStringLiteral("appid"), QLatin1String(PlatformKit::kAppid)},
        {QStringLiteral("out_trade_no"), outTradeNo},
        {QStringLiteral("transaction_id"), transactionId},
        {QStringLiteral("trade_type"), QStringLiteral("JSAPI")},
        {QStringLiteral("trade_state"), tradeState},
        {QStringLiteral("trade_state_desc"), QStringLiteral("支付成功")},
        {QStringLiteral("bank_type"), QStringLiteral("CMC")},
        {QStringLiteral("success_time"), QStringLiteral("2026-12-02T17:00:00+08:00")},
        {QStringLiteral("payer"),
         QJsonObject{{QStringLiteral("openid"), QStringLiteral("oUpF8uMuAJO_M2pxb1Q9zNjWeS6o")}}},
        {QStringLiteral("amount"),
         QJsonObject{{QStringLiteral("total"), totalFen},
                     {QStringLiteral("payer_total"), totalFen},
                     {QStringLiteral("currency"), QStringLiteral("CNY")},
                     {QStringLiteral("payer_currency"), QStringLiteral("CNY")}}}};
}

QJsonObject wechatRefund(const QString &transactionId, const QString &outTradeNo,
                         const QString &refundId, qint64 refundFen, qint64 totalFen,
                         const QString &refundStatus)
{
    // The fields of WeChat Pay's API v3 refund notification (退款结果通知); no appid.
    return {{QStringLiteral("mchid"), QLatin1String(PlatformKit::kMchid)},
            {QStringLiteral("transaction_id"), transactionId},
            {QStringLiteral("out_trade_no"), outTradeNo},
            {QStringLiteral("refund_id"), refundId},
            {QStringLiteral("out_refund_no"), QStringLiteral("R-") + refundId},
            {QStringLiteral("refund_status"), refundStatus},
            {QStringLiteral("success_time"), QStringLiteral("2026-12-03T10:00:00+08:00")},
            {QStringLiteral("user_received_account"), QStringLiteral("支付用户零钱")},
            {QStringLiteral("amount"), QJsonObject{{QStringLiteral("total"), totalFen},
                                                   {QStringLiteral("refund"), refundFen},
                                                   {QStringLiteral("payer_total"), totalFen},
                                                   {QStringLiteral("payer_refund"), refundFen}}}};
}

QStringList alipayTrade(const QString &tradeNo, const QString &outTradeNo,
                        const QString &totalAmount, const QString &tradeStatus)
{
    return {QStringLiteral("notify_type=trade_status_sync"),
            QStringLiteral("notify_time=2026-12-02 17:00:05"),
            QStringLiteral("notify_id=ac05099524730693a8b330c5ecf72da9786"),
            QStringLiteral("app_id=") + QLatin1String(PlatformKit::kAlipayAppId),
            QStringLiteral("version=1.0"),
            QStringLiteral("trade_no=") + tradeNo,
            QStringLiteral("out_trade_no=") + outTradeNo,
            QStringLiteral("total_amount=") + totalAmount,
            QStringLiteral("receipt_amount=") + totalAmount,
            QStringLiteral("trade_status=") + tradeStatus,
            QStringLiteral("gmt_create=2026-12-02 16:59:58"),
            QStringLiteral("gmt_payment=2026-12-02 17:00:00"),
            QStringLiteral("subject=payops order ") + outTradeNo,
            QStringLiteral("buyer_id=2088102122524333"),
            QStringLiteral("seller_id=2088101106499364")};
}

QStringList alipayRefund(const QString &tradeNo, const QString &outTradeNo,
                         const QString &tradeStatus, const QString &outBizNo,
                         const QString &refundFee)
{
    QStringList form = alipayTrade(tradeNo, outTradeNo, QStringLiteral("99.00"), tradeStatus);
    form << QStringLiteral("out_biz_no=") + outBizNo << QStringLiteral("refund_fee=") + refundFee
         << QStringLiteral("gmt_refund=2026-12-03 10:00:00.123");
    return form;
}

} // namespace payops::test
