#include "gatewayforward.h"

#include "callbackhandler.h"
#include "callbackswitch.h"
#include "db/connection.h"
#include "db/dberror.h"

#include "platformreply.h"

#include <QSqlRecord>

#include <spdlog/spdlog.h>

#include <optional>

namespace payops {
namespace {

// response_body is a TEXT column: an upstream that answers more is cut short in the row (the
// platform gets the whole answer of the forward itself).
constexpr qsizetype kStoredBodyBytes = 60000;

// The upstream's Content-Type is not stored; a replay says what the platform's success
// answers say.
QByteArray replayContentType(WireFormat wire, const QByteArray &body)
{
    if (wire == WireFormat::Alipay)
        return "text/plain; charset=utf-8";
    return body.isEmpty() ? QByteArray() : QByteArray("application/json");
}

// An answer's bytes for response_bytes: NULL when response_body, which is text, keeps them
// (UTF-8, nearly every answer); the bytes themselves otherwise (an Alipay handler's GBK), which
// a replay then sends instead of the text's U+FFFD.
QVariant exactBytes(const QByteArray &body)
{
    return QUtf8StringView(body).isValidUtf8() ? QVariant(QMetaType(QMetaType::QByteArray))
                                               : QVariant(body);
}

QString upstreamError(const UpstreamAnswer &answer)
{
    if (!answer.answered())
        return answer.error.left(255);
    return QStringLiteral("answered %1, not the platform's success").arg(answer.status);
}

// What a forward reads of its row: the row as storedCallback reads it, what the forward sends,
// and whether another instance's claim of its forward still holds.
struct RowToForward
{
    StoredCallback stored;
    QByteArray body;
    QByteArray headers;
    qint64 forwards = 0;
    bool claimedElsewhere = false;
};

// "WHERE ..." of `key`'s row, and its binds.
QString whereKey(const GatewayKey &key)
{
    return key.event.isEmpty() ? QStringLiteral(" WHERE pay_no = ?")
                               : QStringLiteral(" WHERE pay_no = ? AND event = ?");
}

QVariantList keyBinds(const GatewayKey &key)
{
    return key.event.isEmpty() ? QVariantList{key.payNo} : QVariantList{key.payNo, key.event};
}

std::optional<RowToForward> readRowToForward(const QSqlDatabase &db, const GatewayKey &key)
{
    QSqlQuery result = db::exec(db,
                                QStringLiteral("SELECT ") + storedCallbackColumns() +
                                    QStringLiteral(", raw_body, raw_headers, forwards, "
                                                   "forward_claimed_until > NOW(3) FROM ") +
                                    key.table() + whereKey(key) + QStringLiteral(" FOR UPDATE"),
                                keyBinds(key));
    if (!result.next())
        return std::nullopt;
    RowToForward row;
    row.stored = storedCallback(result);
    row.stored.content.event = key.event;
    const int extra = result.record().count() - 4;
    row.body = result.value(extra).toByteArray();
    row.headers = result.value(extra + 1).toByteArray();
    row.forwards = result.value(extra + 2).toLongLong();
    row.claimedElsewhere = result.value(extra + 3).toBool();
    return row;
}

} // namespace

QString GatewayKey::table() const
{
    return event.isEmpty() ? QStringLiteral("pay_callback_log") : QStringLiteral("callback_event");
}

GatewayKey gatewayKeyOf(const CallbackRequest &request, const std::optional<StoredCallback> &trade)
{
    if (!request.event.isEmpty())
        return {request.payNo, request.event};
    const bool afterPayment = request.wire == WireFormat::Alipay && trade &&
                              trade->content.isSuccess() &&
                              trade->content.tradeStatus != request.tradeStatus;
    return {request.payNo, afterPayment ? request.tradeStatus.toUtf8() : QByteArray()};
}

std::optional<StoredCallback> findGatewayRow(const QSqlDatabase &db, const GatewayKey &key)
{
    if (key.event.isEmpty())
        return findCallback(db, key.payNo);
    QSqlQuery result = db::exec(db,
                                QStringLiteral("SELECT ") + storedCallbackColumns() +
                                    QStringLiteral(" FROM callback_event") + whereKey(key),
                                keyBinds(key));
    if (!result.next())
        return std::nullopt;
    StoredCallback stored = storedCallback(result);
    stored.content.event = key.event;
    return stored;
}

qint64 recordEvent(const QSqlDatabase &db, const CallbackRequest &request, const QString &status,
                   const QString &instance)
{
    return db::exec(db,
                    QStringLiteral("INSERT INTO callback_event (pay_no, event, order_id, "
                                   "out_trade_no, raw_body, raw_headers, wire_format, "
                                   "body_sha256, amount_fen, currency, channel, trade_status, "
                                   "status, instance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                   "?, ?)"),
                    {request.payNo, request.event, request.orderId,
                     request.orderNo.isEmpty() ? QVariant() : QVariant(request.orderNo),
                     request.rawBody, QString::fromUtf8(request.rawHeaders),
                     QLatin1String(wireFormatName(request.wire)), sha256Hex(request.rawBody),
                     request.amountFen, request.currency, request.channel, request.tradeStatus,
                     status, instance})
        .lastInsertId()
        .toLongLong();
}

bool holdsFinalAnswer(const StoredCallback &stored)
{
    return stored.status != QLatin1String("RECORDED") &&
           stored.status != QLatin1String("FORWARDING") &&
           stored.status != QLatin1String("PROCESSING");
}

std::optional<CallbackAnswer> answerFromRow(const StoredCallback &stored,
                                            const CallbackRequest &request)
{
    const std::optional<CallbackAnswer> resend = answerForResend(stored, request);
    if (!resend) // a SUCCESS after a recorded non-SUCCESS notice: forwarded as a new one
        return std::nullopt;
    if (resend->outcome == Outcome::Conflict)
        return platformFailureAnswer(request.wire, 409, Outcome::Conflict,
                                     QStringLiteral("pay_no already received with different "
                                                    "content"));
    if (!holdsFinalAnswer(stored))
        return std::nullopt;
    CallbackAnswer answer =
        platformAnswer(stored.responseCode, stored.responseBody,
                       replayContentType(request.wire, stored.responseBody), Outcome::Replayed);
    answer.suppressedBy = Defence::Replay;
    return answer;
}

CallbackAnswer platformAnswer(int status, const QByteArray &body, const QByteArray &contentType,
                              Outcome outcome)
{
    CallbackAnswer answer;
    answer.httpStatus = status;
    answer.body = body;
    answer.contentType = contentType;
    answer.outcome = outcome;
    answer.verbatim = true;
    return answer;
}

CallbackAnswer platformFailureAnswer(WireFormat wire, int status, Outcome outcome,
                                     const QString &message)
{
    const PlatformReply reply = platformFailure(wire, status, message);
    return platformAnswer(reply.status, reply.body, reply.contentType, outcome);
}

qint64 recordForGateway(const QSqlDatabase &db, const CallbackRequest &request,
                        const QString &instance)
{
    return insertCallback(db, request, QStringLiteral("FORWARDING"), instance, CallbackAnswer(),
                          true);
}

QList<std::exception_ptr> recordForGatewayBatch(const QSqlDatabase &db,
                                                const QList<CallbackRequest> &requests,
                                                const QString &instance)
{
    QList<std::exception_ptr> errors(requests.size());
    {
        db::Transaction transaction(db);
        try {
            transaction.commitWith({insertCallbacksStatement(
                db, requests, QStringLiteral("FORWARDING"), instance, CallbackAnswer(), true)});
            return errors;
        } catch (const db::Error &error) {
            if (!error.isDuplicateKey())
                throw;
        }
    }
    for (qsizetype i = 0; i < requests.size(); ++i) {
        try {
            recordForGateway(db, requests.at(i), instance);
        } catch (const db::Error &) {
            errors[i] = std::current_exception();
        }
    }
    return errors;
}

Claim claimForward(const QSqlDatabase &db, const GatewayKey &key, const QString &instance,
                   SwitchReading &reading, int boundSeconds, const CallbackRequest *delivery)
{
    Claim claim;
    db::Transaction transaction(db);
    const SwitchState state = reading.read();
    const std::optional<RowToForward> row = readRowToForward(db, key);
    if (!row)
        return claim;
    claim.row = row->stored;
    if (holdsFinalAnswer(row->stored)) {
        claim.step = ClaimStep::Settled;
        return claim;
    }
    // The delivery in hand replaces the row's bytes: what a drain later sends is the freshest.
    // Not when the row holds other content: a SUCCESS superseded the notice this delivery
    // carries, and the notice's bytes must never go out as the row's.
    const bool sameContent = !delivery || row->stored.content.sameContentAs(*delivery);
    const bool freshBytes = delivery && sameContent;
    const QString fresh =
        freshBytes ? QStringLiteral("raw_body = ?, raw_headers = ?, body_sha256 = ?, ") : QString();
    const QVariantList freshValues =
        freshBytes ? QVariantList{delivery->rawBody, QString::fromUtf8(delivery->rawHeaders),
                                  sha256Hex(delivery->rawBody)}
                   : QVariantList{};
    if (state.mode == CallbackMode::RecordOnly) {
        transaction.commitWith(QStringLiteral("UPDATE ") + key.table() +
                                   QStringLiteral(" SET %1status = 'RECORDED', instance = ? WHERE "
                                                  "id = ? AND status <> 'FORWARDED'")
                                       .arg(fresh),
                               freshValues + QVariantList{instance, row->stored.id});
        claim.step = ClaimStep::Recorded;
        return claim;
    }
    claim.step = ClaimStep::Busy;
    // Another forward is out, or the row's content superseded this delivery's (the platform
    // sends it again, and the row then answers it).
    if (row->claimedElsewhere || !sameContent)
        return claim;
    // Guarded by the forwards read: of two claims racing on one server the second waits for the
    // first's row lock and then matches nothing; on a Galera cluster certification refuses it.
    QSqlQuery update = db::exec(
        db,
        QStringLiteral("UPDATE ") + key.table() +
            QStringLiteral(" SET %1status = 'FORWARDING', forwards = forwards + 1, "
                           "forward_claimed_until = NOW(3) + INTERVAL ? SECOND, instance = ? "
                           "WHERE id = ? AND forwards = ? AND (forward_claimed_until IS NULL OR "
                           "forward_claimed_until <= NOW(3))")
                .arg(fresh),
        freshValues + QVariantList{boundSeconds + kClaimMarginSeconds, instance, row->stored.id,
                                   row->forwards});
    if (update.numRowsAffected() != 1)
        return claim;
    try {
        transaction.commit();
    } catch (const db::Error &error) {
        if (!error.isDeadlock()) // another node's claim was certified first
            throw;
        return claim;
    }
    claim.step = ClaimStep::Claimed;
    ForwardClaim &forward = claim.forward;
    forward.rowId = row->stored.id;
    forward.number = row->forwards + 1;
    forward.payNo = key.payNo;
    forward.event = key.event;
    forward.orderId = row->stored.content.orderId;
    forward.orderNo = row->stored.content.orderNo;
    forward.wire = row->stored.content.wire;
    forward.body = delivery ? delivery->rawBody : row->body;
    forward.headers = delivery ? delivery->rawHeaders : row->headers;
    return claim;
}

UpstreamRequest forwardRequest(const ForwardClaim &claim)
{
    UpstreamRequest request{claim.body, splitHeaders(claim.headers)};
    request.headers.append({"X-Payops-Pay-No", claim.payNo});
    request.headers.append({"X-Payops-Order-Id", claim.orderNo});
    request.headers.append({"X-Payops-Delivery", QByteArray::number(claim.number)});
    if (claim.event.isEmpty()) {
        request.headers.append({"Idempotency-Key", claim.payNo});
    } else {
        request.headers.append({"X-Payops-Event", claim.event});
        request.headers.append({"Idempotency-Key", claim.payNo + '/' + claim.event});
    }
    return request;
}

ForwardStep storeForward(const QSqlDatabase &db, const ForwardClaim &claim,
                         const UpstreamAnswer &upstream, const QString &instance)
{
    const QVariant upstreamStatus = upstream.answered() ? QVariant(upstream.status) : QVariant();
    const bool final =
        upstream.answered() && isPlatformSuccess(claim.wire, upstream.status, upstream.body);
    // A row a record-only delivery marked RECORDED while this forward was out stays RECORDED
    // unless the handler's answer settled it.
    const QString table = GatewayKey{claim.payNo, claim.event}.table();
    const QByteArray kept = upstream.body.left(kStoredBodyBytes);
    QSqlQuery stored =
        final ? db::exec(db,
                         QStringLiteral("UPDATE ") + table +
                             QStringLiteral(" SET status = 'FORWARDED', response_code = ?, "
                                            "response_body = ?, response_bytes = ?, "
                                            "upstream_status = ?, upstream_error = '', "
                                            "forward_claimed_until = NULL, forwarded_at = NOW(3), "
                                            "instance = ?, processed_at = NOW(3) WHERE id = ? AND "
                                            "forwards = ?"),
                         {upstream.status, QString::fromUtf8(kept), exactBytes(kept),
                          upstreamStatus, instance, claim.rowId, claim.number})
              : db::exec(
                    db,
                    QStringLiteral("UPDATE ") + table +
                        QStringLiteral(" SET upstream_status = ?, upstream_error = ?, "
                                       "forward_claimed_until = NULL, forwarded_at = NOW(3), "
                                       "instance = ? WHERE id = ? AND forwards = ?"),
                    {upstreamStatus, upstreamError(upstream), instance, claim.rowId, claim.number});
    if (stored.numRowsAffected() != 1)
        spdlog::warn("forward {} of {} outlived its claim; its outcome ({}) is not stored",
                     claim.number, claim.payNo.toStdString(),
                     upstream.answered() ? std::to_string(upstream.status) : "no answer");
    return final ? ForwardStep::Final : ForwardStep::NotFinal;
}

void releaseClaim(const QSqlDatabase &db, const ForwardClaim &claim)
{
    db::exec(db,
             QStringLiteral("UPDATE ") + GatewayKey{claim.payNo, claim.event}.table() +
                 QStringLiteral(" SET forwards = forwards - 1, forward_claimed_until = NULL "
                                "WHERE id = ? AND forwards = ?"),
             {claim.rowId, claim.number});
}

} // namespace payops
