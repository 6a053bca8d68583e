#include "callbacklog.h"

#include "db/connection.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QRegularExpression>

namespace payops {

QString sha256Hex(const QByteArray &bytes)
{
    return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

namespace {

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

QString orderNoColumn(const QString &table)
{
    // NULL before migration 0026, and where payops wrote its own order's row without one.
    const QString prefix = table.isEmpty() ? QString() : table + QLatin1Char('.');
    return QStringLiteral("COALESCE(%1out_trade_no, CAST(%1order_id AS CHAR))").arg(prefix);
}

QString storedCallbackColumns()
{
    return QStringLiteral(
               "id, status, pay_no, order_id, amount_fen, currency, channel, "
               "trade_status, COALESCE(response_bytes, response_body), wire_format, "
               "DATE_FORMAT(platform_paid_at, '%Y-%m-%dT%H:%i:%s.%fZ'), response_code, ") +
           orderNoColumn();
}

StoredCallback storedCallback(const QSqlQuery &query)
{
    StoredCallback stored;
    stored.id = query.value(0).toLongLong();
    stored.status = query.value(1).toString();
    stored.content.payNo = query.value(2).toByteArray();
    stored.content.orderId = query.value(3).toLongLong();
    stored.content.amountFen = query.value(4).toLongLong();
    stored.content.currency = query.value(5).toString();
    stored.content.channel = query.value(6).toString();
    stored.content.tradeStatus = query.value(7).toString();
    stored.responseBody = query.value(8).toByteArray();
    stored.content.wire =
        wireFormatFromName(query.value(9).toByteArray()).value_or(WireFormat::Payops);
    // Microseconds from DATE_FORMAT, milliseconds as stored: RFC 3339 either way.
    stored.content.paidAt = query.value(10).toString();
    stored.responseCode = query.value(11).toInt();
    stored.content.orderNo = query.value(12).toByteArray();
    return stored;
}

std::optional<StoredCallback> findCallback(const QSqlDatabase &db, const QByteArray &payNo)
{
    QSqlQuery query = db::exec(db,
                               QStringLiteral("SELECT %1 FROM pay_callback_log WHERE pay_no = ?")
                                   .arg(storedCallbackColumns()),
                               {payNo});
    if (!query.next())
        return std::nullopt;
    return storedCallback(query);
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
    // A notice after the payment, of the same payment (Alipay's TRADE_CLOSED once a paid trade
    // is refunded in full): nothing payops keeps changes, so it is taken and not stored. A 409
    // would have the platform resend it for a day, each time counted as a conflict.
    if (stored.content.isSuccess() && !request.isSuccess() && successor.sameContentAs(request))
        return CallbackAnswer::success(Outcome::Ignored, QStringLiteral("notice after payment: ") +
                                                             request.tradeStatus);
    return CallbackAnswer::failure(
        409, Outcome::Conflict, QStringLiteral("pay_no already received with different content"));
}

namespace {

const QString kInsertCallback = QStringLiteral(
    "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, raw_headers, wire_format, "
    "body_sha256, amount_fen, currency, channel, "
    "trade_status, status, response_code, response_body, instance, platform_paid_at, "
    "gateway, out_trade_no) VALUES ");

QVariantList callbackRow(const CallbackRequest &request, const QString &status,
                         const QString &instance, const CallbackAnswer &answer, bool gateway)
{
    return {QString::fromUtf8(request.payNo),
            request.orderId,
            request.rawBody,
            QString::fromUtf8(request.rawHeaders),
            QLatin1String(wireFormatName(request.wire)),
            sha256Hex(request.rawBody),
            request.amountFen,
            request.currency,
            request.channel,
            request.tradeStatus,
            status,
            answer.httpStatus,
            QString::fromUtf8(answer.body),
            instance,
            platformPaidAt(request.paidAt),
            int(gateway),
            request.orderNo.isEmpty() ? QVariant() : QVariant(request.orderNo)};
}

} // namespace

qint64 insertCallback(const QSqlDatabase &db, const CallbackRequest &request, const QString &status,
                      const QString &instance, const CallbackAnswer &answer, bool gateway)
{
    QSqlQuery query = db::exec(
        db, kInsertCallback + QStringLiteral("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        callbackRow(request, status, instance, answer, gateway));
    return query.lastInsertId().toLongLong();
}

QString insertCallbacksStatement(const QSqlDatabase &db, const QList<CallbackRequest> &requests,
                                 const QString &status, const QString &instance,
                                 const CallbackAnswer &answer, bool gateway)
{
    QList<QVariantList> rows;
    rows.reserve(requests.size());
    for (const CallbackRequest &request : requests)
        rows << callbackRow(request, status, instance, answer, gateway);
    return kInsertCallback + db::valueRows(db, rows);
}

QString findCallbacksStatement(const QSqlDatabase &db, const QList<QByteArray> &payNos)
{
    QVariantList list;
    list.reserve(payNos.size());
    for (const QByteArray &payNo : payNos)
        list << QString::fromUtf8(payNo);
    // valueRows of one row is "(a,b,...)": the IN list, each pay_no escaped.
    return QStringLiteral("SELECT %1 FROM pay_callback_log WHERE pay_no IN %2")
        .arg(storedCallbackColumns(), db::valueRows(db, {list}));
}

QHash<QByteArray, StoredCallback> storedCallbacks(QSqlQuery &result)
{
    QHash<QByteArray, StoredCallback> found;
    while (result.next()) {
        StoredCallback stored = storedCallback(result);
        found.insert(stored.content.payNo, stored);
    }
    return found;
}

QHash<QByteArray, StoredCallback> findCallbacks(const QSqlDatabase &db,
                                                const QList<QByteArray> &payNos)
{
    if (payNos.isEmpty())
        return {};
    QSqlQuery query = db::exec(db, findCallbacksStatement(db, payNos));
    return storedCallbacks(query);
}

qint64 upgradeCallback(const QSqlDatabase &db, const CallbackRequest &request,
                       const QString &instance)
{
    // As CallbackRequest::isSuccess() decides, in SQL: the stored row is a notice still.
    QSqlQuery update = db::exec(
        db,
        QStringLiteral("UPDATE pay_callback_log SET raw_body = ?, raw_headers = ?, "
                       "wire_format = ?, body_sha256 = ?, channel = ?, trade_status = ?, "
                       "status = 'PROCESSING', instance = ?, platform_paid_at = ? "
                       "WHERE pay_no = ? AND NOT %1")
            .arg(CallbackRequest::successSql()),
        {request.rawBody, QString::fromUtf8(request.rawHeaders),
         QLatin1String(wireFormatName(request.wire)), sha256Hex(request.rawBody), request.channel,
         request.tradeStatus, instance, platformPaidAt(request.paidAt), request.payNo});
    if (update.numRowsAffected() != 1)
        return 0;
    return db::scalar(db, QStringLiteral("SELECT id FROM pay_callback_log WHERE pay_no = ?"),
                      {request.payNo})
        .toLongLong();
}

namespace {

bool finishWith(const QSqlDatabase &db, const QString &statement, qint64 id, const QString &status,
                const QString &reason, const QString &instance, const CallbackAnswer &answer)
{
    // processed_at = NOW(3) changes a row that is there, so one row affected means found.
    return db::exec(db, statement,
                    {status, reason.left(64), answer.httpStatus, QString::fromUtf8(answer.body),
                     instance, id})
               .numRowsAffected() == 1;
}

} // namespace

bool finishCallback(const QSqlDatabase &db, qint64 id, const QString &status, const QString &reason,
                    const QString &instance, const CallbackAnswer &answer)
{
    return finishWith(db, kFinishCallback, id, status, reason, instance, answer);
}

bool markClaimed(const QSqlDatabase &db, const QList<qint64> &ids, const QString &from)
{
    if (ids.isEmpty())
        return true;
    return db::exec(db,
                    QStringLiteral("UPDATE pay_callback_log SET status = 'PROCESSING' WHERE id IN "
                                   "(%1) AND status = ?")
                        .arg(db::idList(ids)),
                    {from})
               .numRowsAffected() == ids.size();
}

bool finishClaimedCallback(const QSqlDatabase &db, qint64 id, const QString &status,
                           const QString &reason, const QString &instance,
                           const CallbackAnswer &answer)
{
    return finishWith(db, kFinishCallback + QStringLiteral(" AND status = 'PROCESSING'"), id,
                      status, reason, instance, answer);
}

} // namespace payops
