#include "callbacklog.h"

#include "db/connection.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QRegularExpression>

namespace payops {
namespace {

QString sha256Hex(const QByteArray &bytes)
{
    return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

const QString kFinishCallback =
    QStringLiteral("UPDATE pay_callback_log SET status = ?, reason = ?, response_code = ?, "
                   "response_body = ?, instance = ?, "
                   "processed_at = NOW(3) WHERE id = ?");

} // namespace

QString finishCallbackStatement()
{
    return kFinishCallback;
}

// Statements list payments by the platform's time, so reconciliation finds our payments of a
// period by this column, not by when we received them. Milliseconds are kept, finer digits
// dropped; a leap second (:60) or a year outside DATETIME's has none, so CallbackRequest::parse
// refuses them, and only rows stored before it did (migration 0011 leaves them NULL) lack it.
QVariant platformPaidAt(const QString &paidAt)
{
    static const QRegularExpression pattern(QRegularExpression::anchoredPattern(QStringLiteral(
        "([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]{1,9}))?"
        "(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))")));
    const QRegularExpressionMatch match = pattern.match(paidAt);
    if (!match.hasMatch())
        return {};
    const auto number = [&match](int group) { return match.capturedView(group).toInt(); };
    const QString fraction = match.captured(7) + QStringLiteral("000");
    const QDate date(number(1), number(2), number(3));
    const QTime time(number(4), number(5), number(6), fraction.left(3).toInt());
    if (!date.isValid() || !time.isValid())
        return {};
    int offsetMinutes = number(9) * 60 + number(10);
    if (match.capturedView(8) == QLatin1String("-"))
        offsetMinutes = -offsetMinutes;
    const QDateTime utc = QDateTime(date, time, Qt::UTC).addSecs(-qint64(offsetMinutes) * 60);
    if (utc.date().year() < 1000 || utc.date().year() > 9999)
        return {}; // beyond DATETIME
    return utc.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

std::optional<StoredCallback> findCallback(const QSqlDatabase &db, const QByteArray &payNo)
{
    QSqlQuery query = db::exec(db,
                               QStringLiteral("SELECT id, status, order_id, amount_fen, currency, "
                                              "channel, trade_status, response_body, response_code "
                                              "FROM pay_callback_log WHERE pay_no = ?"),
                               {payNo});
    if (!query.next())
        return std::nullopt;
    StoredCallback stored;
    stored.id = query.value(0).toLongLong();
    stored.status = query.value(1).toString();
    stored.content.payNo = payNo;
    stored.content.orderId = query.value(2).toLongLong();
    stored.content.amountFen = query.value(3).toLongLong();
    stored.content.currency = query.value(4).toString();
    stored.content.channel = query.value(5).toString();
    stored.content.tradeStatus = query.value(6).toString();
    stored.responseBody = query.value(7).toByteArray();
    stored.responseCode = query.value(8).toInt();
    return stored;
}

std::optional<CallbackAnswer> answerForResend(const StoredCallback &stored,
                                              const CallbackRequest &request)
{
    if (stored.content.sameContentAs(request)) {
        CallbackAnswer answer = CallbackAnswer::success(Outcome::Replayed, {}, Defence::Replay);
        if (!stored.responseBody.isEmpty())
            answer.body = stored.responseBody;
        return answer;
    }
    CallbackRequest successor = stored.content;
    successor.tradeStatus = request.tradeStatus;
    successor.channel = request.channel;
    if (!stored.content.isSuccess() && request.isSuccess() && successor.sameContentAs(request))
        return std::nullopt;
    return CallbackAnswer::failure(
        409, Outcome::Conflict, QStringLiteral("pay_no already received with different content"));
}

qint64 insertCallback(const QSqlDatabase &db, const CallbackRequest &request, const QString &status,
                      const QString &instance, const CallbackAnswer &answer)
{
    QSqlQuery query = db::exec(
        db,
        QStringLiteral(
            "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, raw_headers, wire_format, "
            "body_sha256, amount_fen, currency, channel, "
            "trade_status, status, response_code, response_body, instance, platform_paid_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        {request.payNo, request.orderId, request.rawBody, QString::fromUtf8(request.rawHeaders),
         QLatin1String(wireFormatName(request.wire)), sha256Hex(request.rawBody),
         request.amountFen, request.currency, request.channel, request.tradeStatus, status,
         answer.httpStatus, QString::fromUtf8(answer.body), instance,
         platformPaidAt(request.paidAt)});
    return query.lastInsertId().toLongLong();
}

qint64 upgradeCallback(const QSqlDatabase &db, const CallbackRequest &request,
                       const QString &instance)
{
    // As bytes, as CallbackRequest::isSuccess() compares: under any collation that ignores
    // case or trailing spaces a stored "success" or "SUCCESS " would never be upgraded.
    QSqlQuery update =
        db::exec(db,
                 QStringLiteral("UPDATE pay_callback_log SET raw_body = ?, raw_headers = ?, "
                                "wire_format = ?, body_sha256 = ?, channel = ?, trade_status = ?, "
                                "status = 'PROCESSING', instance = ?, platform_paid_at = ? "
                                "WHERE pay_no = ? AND CAST(trade_status AS BINARY) <> 'SUCCESS'"),
                 {request.rawBody, QString::fromUtf8(request.rawHeaders),
                  QLatin1String(wireFormatName(request.wire)), sha256Hex(request.rawBody),
                  request.channel, request.tradeStatus,
                  instance, platformPaidAt(request.paidAt), request.payNo});
    if (update.numRowsAffected() != 1)
        return 0;
    return db::scalar(db, QStringLiteral("SELECT id FROM pay_callback_log WHERE pay_no = ?"),
                      {request.payNo})
        .toLongLong();
}

void finishCallback(const QSqlDatabase &db, qint64 id, const QString &status, const QString &reason,
                    const QString &instance, const CallbackAnswer &answer)
{
    db::exec(
        db, kFinishCallback,
        {status, reason.left(64), answer.httpStatus, QString::fromUtf8(answer.body), instance, id});
}

} // namespace payops
