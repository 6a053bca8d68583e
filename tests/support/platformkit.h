#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace payops::test {

// The platforms' paths at payops-callbackd, and the type Alipay posts its form as.
inline constexpr const char *kWechatPath = "/callbacks/wechatpay";
inline constexpr const char *kAlipayPath = "/callbacks/alipay";
inline constexpr const char *kForm = "application/x-www-form-urlencoded";

// The payment platforms' side of a test, made without payops's code: RSA keys by the openssl
// command, notifications signed and sealed by tests/support/platformnotify.py (openssl and
// Python's cryptography). Key files are written with mode 0600.
class PlatformKit final
{
public:
    static constexpr const char *kMchid = "1900000109";
    static constexpr const char *kAppid = "wxd678efh567hg6787";
    static constexpr const char *kAlipayAppId = "2021000000000001";
    static constexpr const char *kSerial = "5157F09EFDC096DE15EBE81A47057A72"; // WeChat Pay key
    static constexpr const char *kNextSerial = "PUB_KEY_ID_0000000000000002";  // while rotating

    // Keys: "wechat" (kSerial), "wechat-next" (kNextSerial), "alipay", "stranger" (no one's).
    PlatformKit();

    // payops-callbackd's options serving both platforms with these keys.
    QStringList callbackdArguments() const;
    QString privateKey(const QString &name) const;
    QString publicKey(const QString &name) const;
    QString apiV3KeyFile() const;
    QString directory() const { return m_dir.path(); }

    struct Notification
    {
        QByteArray body;
        QList<QPair<QByteArray, QByteArray>> headers;
    };
    struct WechatOptions
    {
        QString key = QStringLiteral("wechat");
        QString serial = QString::fromLatin1(kSerial);
        qint64 timestamp = 0; // 0: now
        QString flip;         // "ciphertext" or "tag": one bit of the sealed resource
        QString eventType = QStringLiteral("TRANSACTION.SUCCESS"); // REFUND.*: a refund's
    };
    // A WeChat Pay notification of `transaction` (the decrypted resource), sealed afresh.
    Notification wechat(const QJsonObject &transaction, const WechatOptions &options) const;
    Notification wechat(const QJsonObject &transaction) const { return wechat(transaction, {}); }
    // An Alipay form of `parameters` (name=value, UTF-8 here) in `charset`, signed over the
    // bytes of `signCharset` (empty: the same) by `key`.
    QByteArray alipay(const QStringList &parameters,
                      const QString &charset = QStringLiteral("utf-8"),
                      const QString &signCharset = QString(),
                      const QString &key = QStringLiteral("alipay")) const;

private:
    QByteArray run(const QStringList &arguments) const;

    QTemporaryDir m_dir;
};

// A decrypted WeChat Pay transaction for this merchant.
QJsonObject wechatTransaction(const QString &transactionId, const QString &outTradeNo,
                              qint64 totalFen,
                              const QString &tradeState = QStringLiteral("SUCCESS"));

// A decrypted WeChat Pay refund (the resource of a REFUND.* notification) for this merchant.
QJsonObject wechatRefund(const QString &transactionId, const QString &outTradeNo,
                         const QString &refundId, qint64 refundFen, qint64 totalFen,
                         const QString &refundStatus = QStringLiteral("SUCCESS"));

// Alipay's parameters of a trade for this app, before charset, sign_type and sign.
QStringList alipayTrade(const QString &tradeNo, const QString &outTradeNo,
                        const QString &totalAmount,
                        const QString &tradeStatus = QStringLiteral("TRADE_SUCCESS"));

// Alipay's notice of a refund of `tradeNo` (a trade of 99.00): a partial refund's says
// TRADE_SUCCESS, a whole one's TRADE_CLOSED; out_biz_no names the refund, refund_fee is the
// total refunded so far.
QStringList alipayRefund(const QString &tradeNo, const QString &outTradeNo,
                         const QString &tradeStatus, const QString &outBizNo,
                         const QString &refundFee);

} // namespace payops::test
