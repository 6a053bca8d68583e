#include "callbackrequest.h"

#include "callbacklog.h"
#include "strictjson.h"

#include <QRegularExpression>

#include <limits>

namespace payops {
namespace {

using strictjson::Kind;
using strictjson::Members;

const strictjson::Value *field(const Members &members, const char *name)
{
    const auto found = members.constFind(QByteArray(name));
    return found == members.cend() ? nullptr : &*found;
}

QString missing(const char *name)
{
    return QStringLiteral("%1 is missing").arg(QLatin1String(name));
}

// Integers are read from the number as written: a double would take 100.0, 1e2 and
// 9007199254740993 for integers they are not.
std::optional<qint64> integerField(const Members &members, const char *name, qint64 minimum,
                                   QString *error)
{
    const strictjson::Value *value = field(members, name);
    if (!value) {
        *error = missing(name);
        return std::nullopt;
    }
    const auto number =
        value->kind == Kind::Number ? strictjson::integerValue(value->text) : std::nullopt;
    if (!number || *number < minimum) {
        *error =
            QStringLiteral("%1 must be a JSON integer from %2 to %3, without fraction or exponent")
                .arg(QLatin1String(name), QString::number(minimum),
                     QString::number(std::numeric_limits<qint64>::max()));
        return std::nullopt;
    }
    return number;
}

// The decoded UTF-8 of a string field; an absent optional field is empty.
std::optional<QByteArray> stringField(const Members &members, const char *name, bool required,
                                      int maxLength, QString *error)
{
    const strictjson::Value *value = field(members, name);
    if (!value) {
        if (!required)
            return QByteArray();
        *error = missing(name);
        return std::nullopt;
    }
    if (value->kind != Kind::String) {
        *error = QStringLiteral("%1 must be a string").arg(QLatin1String(name));
        return std::nullopt;
    }
    const qsizetype characters = strictjson::codePointCount(value->text);
    if ((required && characters == 0) || characters > maxLength) {
        *error = QStringLiteral("%1 must be %2 to %3 characters")
                     .arg(QLatin1String(name), QString::number(required ? 1 : 0),
                          QString::number(maxLength));
        return std::nullopt;
    }
    return value->text;
}

// RFC 3339 section 5.6 date-time, ranges included: the days of that month (leap years
// too), hours to 23, minutes to 59, seconds to 60 (a leap second), offsets to 23:59.
bool isRfc3339(const QByteArray &text)
{
    static const QRegularExpression pattern(QRegularExpression::anchoredPattern(QStringLiteral(
        "([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\\.[0-9]{1,9})?"
        "([Zz]|[+-]([0-9]{2}):([0-9]{2}))")));
    const QRegularExpressionMatch match = pattern.match(QString::fromUtf8(text));
    if (!match.hasMatch())
        return false;
    const auto number = [&match](int group) { return match.capturedView(group).toInt(); };
    const int year = number(1);
    const int month = number(2);
    if (month < 1 || month > 12)
        return false;
    static constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leapYear = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const int days = month == 2 && leapYear ? 29 : kDaysInMonth[month - 1];
    const bool offsetInRange =
        match.capturedView(9).isEmpty() || (number(9) <= 23 && number(10) <= 59);
    return number(3) >= 1 && number(3) <= days && number(4) <= 23 && number(5) <= 59 &&
           number(6) <= 60 && offsetInRange;
}

} // namespace

std::optional<QString> currencyCode(const QByteArray &text)
{
    // By characters of ASCII, not bytes: "元" is three bytes of UTF-8 and "156" is ISO 4217's
    // number for the yuan, and neither is a code a statement or a report can match.
    static const QRegularExpression threeLetters(
        QRegularExpression::anchoredPattern(QStringLiteral("[A-Za-z]{3}")));
    const QString code = QString::fromUtf8(text);
    if (!threeLetters.match(code).hasMatch())
        return std::nullopt;
    return code.toUpper();
}

QString paidAtProblem(const QByteArray &paidAt, const char *field)
{
    if (!isRfc3339(paidAt))
        return QStringLiteral("%1 must be an RFC 3339 date-time such as 2026-12-02T09:00:00.123Z")
            .arg(QLatin1String(field));
    // RFC 3339 allows times the log's DATETIME(3) cannot hold; stored as NULL they would lose
    // the platform's time, by which reconciliation finds the payment.
    if (!platformPaidAt(QString::fromUtf8(paidAt)).isValid())
        return paidAt.mid(17, 2) == "60"
                   ? QStringLiteral("%1 is a leap second (:60), which the database cannot store")
                         .arg(QLatin1String(field))
                   : QStringLiteral("%1 must be in the years 1000 to 9999 once converted to UTC, "
                                    "which the database can store")
                         .arg(QLatin1String(field));
    return {};
}

bool CallbackRequest::isSuccess() const
{
    if (!event.isEmpty())
        return false;
    if (wire == WireFormat::Alipay)
        return tradeStatus == QLatin1String("TRADE_SUCCESS") ||
               tradeStatus == QLatin1String("TRADE_FINISHED");
    return tradeStatus == QLatin1String("SUCCESS");
}

QString CallbackRequest::successSql()
{
    // As bytes, as isSuccess() compares: under a collation that ignores case or trailing
    // spaces a stored "success" or "SUCCESS " would count as a success.
    return QStringLiteral(
        "(CASE WHEN wire_format = 'alipay' THEN CAST(trade_status AS BINARY) IN "
        "('TRADE_SUCCESS', 'TRADE_FINISHED') ELSE CAST(trade_status AS BINARY) = 'SUCCESS' END)");
}

bool CallbackRequest::sameContentAs(const CallbackRequest &other) const
{
    const bool sameStatus = tradeStatus == other.tradeStatus || (isSuccess() && other.isSuccess());
    return payNo == other.payNo && orderNo == other.orderNo && amountFen == other.amountFen &&
           currency == other.currency && sameStatus && channel == other.channel;
}

std::optional<CallbackRequest> CallbackRequest::parse(const QByteArray &body, QString *error)
{
    const auto members = strictjson::parseObject(body, error);
    if (!members)
        return std::nullopt;
    CallbackRequest request;
    request.rawBody = body;

    const auto payNo = stringField(*members, "pay_no", true, 64, error);
    if (!payNo)
        return std::nullopt;
    request.payNo = *payNo;
    const auto orderId = integerField(*members, "order_id", 1, error);
    if (!orderId)
        return std::nullopt;
    request.orderId = *orderId;
    request.orderNo = QByteArray::number(*orderId);
    const auto amount = integerField(*members, "amount_fen", 0, error);
    if (!amount)
        return std::nullopt;
    request.amountFen = *amount;

    const auto currency = stringField(*members, "currency", true, 3, error);
    if (!currency)
        return std::nullopt;
    const auto code = currencyCode(*currency);
    if (!code) {
        *error = QStringLiteral("currency must be three letters");
        return std::nullopt;
    }
    request.currency = *code;

    const auto tradeStatus = stringField(*members, "trade_status", true, 32, error);
    if (!tradeStatus)
        return std::nullopt;
    request.tradeStatus = QString::fromUtf8(*tradeStatus);
    const auto channel = stringField(*members, "channel", false, 32, error);
    if (!channel)
        return std::nullopt;
    request.channel = QString::fromUtf8(*channel);
    const auto paidAt = stringField(*members, "paid_at", false, 40, error);
    if (!paidAt)
        return std::nullopt;
    if (members->contains("paid_at")) {
        *error = paidAtProblem(*paidAt, "paid_at");
        if (!error->isEmpty())
            return std::nullopt;
    }
    request.paidAt = QString::fromUtf8(*paidAt);
    return request;
}

} // namespace payops
