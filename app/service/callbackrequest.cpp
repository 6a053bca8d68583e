#include "callbackrequest.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>

namespace payops {
namespace {

// Largest integer a JSON number holds exactly once parsed as a double.
constexpr double kMaxExactInteger = 9007199254740991.0;

std::optional<qint64> integerField(const QJsonObject &object, const char *name, qint64 minimum, QString *error)
{
    const QJsonValue value = object.value(QLatin1String(name));
    if (value.isUndefined()) {
        *error = QStringLiteral("%1 is missing").arg(QLatin1String(name));
        return std::nullopt;
    }
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || std::isnan(number) || std::trunc(number) != number || number < double(minimum)
        || number > kMaxExactInteger) {
        *error = QStringLiteral("%1 must be an integer of at least %2").arg(QLatin1String(name)).arg(minimum);
        return std::nullopt;
    }
    return static_cast<qint64>(number);
}

std::optional<QString> stringField(const QJsonObject &object, const char *name, bool required, int maxLength,
                                   QString *error)
{
    const QJsonValue value = object.value(QLatin1String(name));
    if (value.isUndefined()) {
        if (!required)
            return QString();
        *error = QStringLiteral("%1 is missing").arg(QLatin1String(name));
        return std::nullopt;
    }
    if (!value.isString()) {
        *error = QStringLiteral("%1 must be a string").arg(QLatin1String(name));
        return std::nullopt;
    }
    const QString text = value.toString();
    const qsizetype characters = text.toUcs4().size();
    if ((required && characters == 0) || characters > maxLength) {
        *error = QStringLiteral("%1 must be %2 to %3 characters").arg(QLatin1String(name)).arg(required ? 1 : 0).arg(maxLength);
        return std::nullopt;
    }
    return text;
}

} // namespace

bool CallbackRequest::sameContentAs(const CallbackRequest &other) const
{
    return payNo == other.payNo && orderId == other.orderId && amountFen == other.amountFen
           && currency == other.currency && tradeStatus == other.tradeStatus && channel == other.channel;
}

std::optional<CallbackRequest> CallbackRequest::parse(const QByteArray &body, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("body is not JSON: %1 at offset %2").arg(parseError.errorString()).arg(parseError.offset);
        return std::nullopt;
    }
    if (!document.isObject()) {
        *error = QStringLiteral("body must be a JSON object");
        return std::nullopt;
    }
    const QJsonObject object = document.object();
    CallbackRequest request;
    request.rawBody = body;

    const auto payNo = stringField(object, "pay_no", true, 64, error);
    if (!payNo)
        return std::nullopt;
    request.payNo = payNo->toUtf8();
    const auto orderId = integerField(object, "order_id", 1, error);
    if (!orderId)
        return std::nullopt;
    request.orderId = *orderId;
    const auto amount = integerField(object, "amount_fen", 0, error);
    if (!amount)
        return std::nullopt;
    request.amountFen = *amount;

    const auto currency = stringField(object, "currency", true, 3, error);
    if (!currency)
        return std::nullopt;
    static const QRegularExpression threeLetters(QStringLiteral("^[A-Za-z]{3}$"));
    if (!threeLetters.match(*currency).hasMatch()) {
        *error = QStringLiteral("currency must be three letters");
        return std::nullopt;
    }
    request.currency = currency->toUpper();

    const auto tradeStatus = stringField(object, "trade_status", true, 32, error);
    if (!tradeStatus)
        return std::nullopt;
    request.tradeStatus = *tradeStatus;
    const auto channel = stringField(object, "channel", false, 32, error);
    if (!channel)
        return std::nullopt;
    request.channel = *channel;
    const auto paidAt = stringField(object, "paid_at", false, 40, error);
    if (!paidAt)
        return std::nullopt;
    request.paidAt = *paidAt;
    return request;
}

} // namespace payops
