#include "notification.h"

#include "strictjson.h"

#include <QCryptographicHash>

#include <algorithm>

namespace payops {

CallbackAnswer unauthorized(const QString &reason)
{
    return CallbackAnswer::failure(401, Outcome::Unauthorized, reason);
}

CallbackAnswer invalid(const QString &reason)
{
    return CallbackAnswer::failure(400, Outcome::Invalid, reason);
}

Admission signedOver(Admission admission, const QByteArray &signedBytes)
{
    const QByteArray digest = QCryptographicHash::hash(signedBytes, QCryptographicHash::Sha256);
    std::visit([&digest](auto &admitted) { admitted.signedDigest = digest; }, admission);
    return admission;
}

QByteArray capturedHeaders(WireFormat format, const HeaderLookup &header)
{
    QList<std::pair<QByteArray, QByteArray>> present;
    // Trimmed, as the signature checks read them; a value holding a control character is
    // left out: no platform sends one, and passed on it could forge a header (channel.h).
    for (const QByteArray &name : platformHeaders(format)) {
        const QByteArray value = header(name.constData()).trimmed();
        if (!value.isEmpty() && isPassableHeaderValue(value))
            present.append({name, value});
    }
    return joinHeaders(present);
}

std::optional<qint64> orderIdFrom(const QByteArray &outTradeNo)
{
    // As JSON writes an integer: no sign, no leading zero, no space; one BIGINT holds it.
    const auto id = strictjson::integerValue(outTradeNo);
    return id && *id >= 1 ? id : std::nullopt;
}

namespace {

bool checkNumber(const QByteArray &value, const char *field, int minLength, int maxLength,
                 bool (*allowed)(char), const QString &rule, QString *error)
{
    const bool fits = value.size() >= minLength && value.size() <= maxLength &&
                      std::all_of(value.cbegin(), value.cend(), allowed);
    if (!fits)
        *error = QLatin1String(field) + QStringLiteral(" must be ") + rule;
    return fits;
}

bool visibleAscii(char c)
{
    return c > ' ' && c <= '~';
}

} // namespace

bool checkWechatPayOrderNo(const QByteArray &outTradeNo, QString *error)
{
    // WeChat Pay's charset and maximum for a merchant's order number. Its API v3 asks for 6
    // characters at least when the order is placed, its API v2 for none: an order placed with
    // a shorter number still notifies, and payops's own orders (1001) are shorter.
    return checkNumber(
        outTradeNo, "out_trade_no", 1, 32,
        [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   c == '_' || c == '-' || c == '|' || c == '*';
        },
        QStringLiteral("1 to 32 characters of A-Z, a-z, 0-9, _, -, | and *"), error);
}

bool checkAlipayOrderNo(const QByteArray &outTradeNo, QString *error)
{
    // Alipay states only the length; a space or control character is in no order number its
    // APIs take, and one at either end would not reach the handler as sent: headers are trimmed.
    return checkNumber(outTradeNo, "out_trade_no", 1, 64, visibleAscii,
                       QStringLiteral("1 to 64 visible ASCII characters"), error);
}

bool checkVisibleAscii(const QByteArray &value, const char *field, QString *error)
{
    return checkNumber(value, field, 1, 64, visibleAscii,
                       QStringLiteral("1 to 64 visible ASCII characters"), error);
}

Admission forMode(Admission admission, bool handler)
{
    const auto *request = std::get_if<CallbackRequest>(&admission);
    if (!handler || !request || request->orderId > 0)
        return admission;
    CallbackAnswer refusal =
        invalid(QStringLiteral("out_trade_no must be a payops order id (a positive integer "
                               "without sign or leading zero); a gateway (--upstream) takes "
                               "other order numbers"));
    refusal.signedDigest = request->signedDigest;
    return refusal;
}

bool checkLength(const QByteArray &value, const char *field, int maxLength, QString *error)
{
    const qsizetype characters = strictjson::codePointCount(value);
    if (characters >= 1 && characters <= maxLength)
        return true;
    *error = QStringLiteral("%1 must be 1 to %2 characters")
                 .arg(QLatin1String(field), QString::number(maxLength));
    return false;
}

} // namespace payops
