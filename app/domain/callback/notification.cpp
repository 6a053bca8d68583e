#include "notification.h"

#include "strictjson.h"

#include <QCryptographicHash>

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
