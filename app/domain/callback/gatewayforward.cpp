#include "gatewayforward.h"

#include "callbackhandler.h"
#include "callbackswitch.h"
#include "db/connection.h"
#include "db/dberror.h"

#include "platformreply.h"

#include <QSqlRecord>

#include <optional>

namespace payops {
namespace {

// response_body is a TEXT column: an upstream that answers more is cut short in the row (the
// platform gets the whole answer of the forward itself).
constexpr qsizetype kStoredBodyBytes = 60000;

// How much longer than its upstream timeout a claim of a forward holds on a cluster: the time
// to store the answer after it.
constexpr int kClaimMarginSeconds = 5;

// The upstream's Content-Type is not stored; a replay says what the platform's success
// answers say.
QByteArray replayContentType(WireFormat wire, const QByteArray &body)
{
    if (wire == WireFormat::Alipay)
        return "text/plain; charset=utf-8";
    return body.isEmpty() ? QByteArray() : QByteArray("application/json");
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

std::optional<RowToForward> readRowToForward(const QSqlDatabase &db, const QByteArray &payNo)
{
    QSqlQuery result =
        db::exec(db,
                 QStringLiteral("SELECT %1, raw_body, raw_headers, forwards, "
                                "forward_claimed_until > NOW(3) FROM pay_callback_log "
                                "WHERE pay_no = ?")
                     .arg(storedCallbackColumns()),
                 {payNo});
    if (!result.next())
        return std::nullopt;
    RowToForward row;
    row.stored = storedCallback(result);
    const int extra = result.record().count() - 4;
    row.body = result.value(extra).toByteArray();
    row.headers = result.value(extra + 1).toByteArray();
    row.forwards = result.value(extra + 2).toLongLong();
    row.claimedElsewhere = result.value(extra + 3).toBool();
    return row;
}

} // namespace

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

Forward forwardRow(const QSqlDatabase &db, UpstreamClient &client, const QByteArray &payNo,
                   const QString &instance, SwitchObserver &switchObserver, CallbackTrace &trace,
                   const CallbackRequest *delivery)
{
    Forward forward;
    SwitchReading reading(switchObserver, db);
    std::optional<db::Transaction> transaction(std::in_place, db);
    trace.txBegin = nowMicros();
    const SwitchState state = reading.read();
    const std::optional<RowToForward> row = readRowToForward(db, payNo);
    if (!row)
        return forward;
    const StoredCallback &stored = row->stored;
    forward.row = stored;
    if (holdsFinalAnswer(stored)) {
        forward.step = ForwardStep::Settled;
        return forward;
    }
    forward.wire = stored.content.wire;
    if (state.mode == CallbackMode::RecordOnly) {
        transaction->commitWith(QStringLiteral("UPDATE pay_callback_log SET status = "
                                               "'RECORDED', instance = ? WHERE id = ?"),
                                {instance, stored.id});
        trace.committed = nowMicros();
        forward.step = ForwardStep::Recorded;
        return forward;
    }
    // On a Galera node the pay_no lock is the node's own, and a delivery at another node's
    // gateway finds the row not yet forwarded too. The forward is claimed first, in a write of
    // its own that certification lets only one node commit; while the claim holds (the
    // claimer's upstream timeout and a margin) no other instance forwards the row.
    if (db::isClusterNode(db)) {
        forward.step = ForwardStep::Busy;
        if (row->claimedElsewhere)
            return forward;
        QSqlQuery claim = db::exec(
            db,
            QStringLiteral("UPDATE pay_callback_log SET forward_claimed_until = NOW(3) + "
                           "INTERVAL ? SECOND WHERE id = ? AND forwards = ? AND "
                           "(forward_claimed_until IS NULL OR forward_claimed_until <= NOW(3))"),
            {client.options().timeoutSeconds + kClaimMarginSeconds, stored.id, row->forwards});
        try {
            if (claim.numRowsAffected() != 1)
                return forward;
            transaction->commit();
        } catch (const db::Error &error) {
            if (!error.isDeadlock()) // another node's claim was certified first
                throw;
            return forward;
        }
        transaction.emplace(db);
    }

    // A delivery's bytes are written with the result, in the forward's own transaction: on a
    // cluster, a write of the row by another node's delivery while this forward is out would
    // fail its result. A drain (an operator's, who may not change them) sends the row's.
    const QByteArray body = delivery ? delivery->rawBody : row->body;
    const QByteArray rawHeaders = delivery ? delivery->rawHeaders : row->headers;
    const QString keepSent =
        delivery ? QStringLiteral("raw_body = ?, raw_headers = ?, body_sha256 = ?, ") : QString();
    const QVariantList sent =
        delivery ? QVariantList{body, QString::fromUtf8(rawHeaders), sha256Hex(body)}
                 : QVariantList{};
    auto headers = splitHeaders(rawHeaders);
    headers.append({"X-Payops-Pay-No", payNo});
    headers.append({"X-Payops-Order-Id", stored.content.orderNo});
    headers.append({"X-Payops-Delivery", QByteArray::number(row->forwards + 1)});
    headers.append({"Idempotency-Key", payNo});
    forward.upstream = client.post(body, headers);
    trace.forwarded = forward.upstream.sentMicros;
    if (forward.upstream.answered()) {
        trace.upstreamAnswered = forward.upstream.answeredMicros;
        trace.upstreamStatus = forward.upstream.status;
    }

    const UpstreamAnswer &upstream = forward.upstream;
    const QVariant upstreamStatus = upstream.answered() ? QVariant(upstream.status) : QVariant();
    if (upstream.answered() && isPlatformSuccess(forward.wire, upstream.status, upstream.body)) {
        forward.step = ForwardStep::Final;
        transaction->commitWith(
            QStringLiteral("UPDATE pay_callback_log SET %1status = 'FORWARDED', "
                           "response_code = ?, response_body = ?, upstream_status = ?, "
                           "upstream_error = '', forwards = forwards + 1, "
                           "forward_claimed_until = NULL, forwarded_at = NOW(3), "
                           "instance = ?, processed_at = NOW(3) WHERE id = ?")
                .arg(keepSent),
            sent + QVariantList{upstream.status,
                                QString::fromUtf8(upstream.body.left(kStoredBodyBytes)),
                                upstreamStatus, instance, stored.id});
    } else {
        forward.step = ForwardStep::NotFinal;
        transaction->commitWith(
            QStringLiteral("UPDATE pay_callback_log SET %1status = 'FORWARDING', "
                           "upstream_status = ?, upstream_error = ?, "
                           "forwards = forwards + 1, forward_claimed_until = NULL, "
                           "forwarded_at = NOW(3), instance = ? WHERE id = ?")
                .arg(keepSent),
            sent + QVariantList{upstreamStatus, upstreamError(upstream), instance, stored.id});
    }
    trace.committed = nowMicros();
    return forward;
}

} // namespace payops
