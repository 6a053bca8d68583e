#include "notification.h"

#include "strictjson.h"

namespace payops {

CallbackAnswer unauthorized(const QString &reason)
{
    return CallbackAnswer::failure(401, Outcome::Unauthorized, reason);
}

CallbackAnswer invalid(const QString &reason)
{
    return CallbackAnswer::failure(400, Outcome::Invalid, reason);
}

QByteArray capturedHeaders(WireFormat format, const HeaderLookup &header)
{
    QList<std::pair<QByteArray, QByteArray>> present;
    for (const QByteArray &name : platformHeaders(format)) {
        const QByteArray value = header(name.constData());
        if (!value.isEmpty())
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
    *error =
        QStringLiteral("%1 must be 1 to %2 characters").arg(QLatin1String(field)).arg(maxLength);
    return false;
}

} // namespace payops
