#pragma once

#include "domain/callback/channel.h"
#include "sandboxkeys.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <memory>
#include <utility>

namespace payops {

class RsaPrivateKey;

// One payment as a platform notifies it: the same in every delivery of it (its duplicates,
// replays and retries), which differ only in what the platform makes fresh for each.
struct PlatformPayment
{
    QByteArray payNo;
    qint64 order = 0;
    qint64 amountFen = 0;
    QString currency = QStringLiteral("CNY");
    QDateTime paidAt;   // UTC
    QByteArray eventId; // the notification's id (WeChat Pay's id, Alipay's notify_id)
};

// One HTTP request as the platform sends it.
struct PlatformRequest
{
    QByteArray path;
    QList<std::pair<QByteArray, QByteArray>> headers; // Content-Type is contentType
    QByteArray contentType;
    QByteArray body;
};

// Renders the deliveries of one wire format, signed (and for WeChat Pay encrypted) as the
// platform does: each call makes a fresh timestamp and nonces, as a platform does for each
// retry. A forged delivery is the same request with a signature that does not verify.
// render() is safe to call from several threads at a time.
class PlatformNotifier
{
public:
    virtual ~PlatformNotifier() = default;
    virtual PlatformRequest render(const PlatformPayment &payment, bool forged) const = 0;

    // payops's own JSON, HMAC-signed with `secret`.
    static std::unique_ptr<PlatformNotifier> payops(const QByteArray &secret);
    // Throw std::runtime_error when a key does not read.
    static std::unique_ptr<PlatformNotifier> wechatPay(const PlatformKeys &keys);
    static std::unique_ptr<PlatformNotifier> alipay(const PlatformKeys &keys);
};

// What is missing from `keys` for the format, as one sentence; empty when nothing is.
QString missingPlatformKeys(WireFormat format, const PlatformKeys &keys);

// Alipay's string to sign: every parameter but sign and sign_type, empty ones dropped, sorted
// by name, name=value joined by '&', values as they are (not URL-encoded).
QByteArray alipaySigningString(const QList<std::pair<QByteArray, QByteArray>> &parameters);

} // namespace payops
