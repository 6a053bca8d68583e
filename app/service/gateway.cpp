#include "gateway.h"

#include "db/dberror.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/gatewayforward.h"
#include "domain/callback/platformreply.h"
#include "domain/callback/upstreamclient.h"
#include "gatewayrecorder.h"
#include "jobqueue.h"
#include "servicemetrics.h"
#include "threadconnection.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <optional>

namespace payops {
namespace {

CallbackAnswer recordedAnswer(WireFormat wire)
{
    const PlatformReply reply = platformReply(wire, CallbackAnswer::success(Outcome::Recorded));
    return platformAnswer(reply.status, reply.body, reply.contentType, Outcome::Recorded);
}

CallbackAnswer busyAnswer(WireFormat wire)
{
    return platformFailureAnswer(wire, 503, Outcome::Unavailable,
                                 QStringLiteral("this payment is being forwarded; retry later"));
}

CallbackAnswer unavailableAnswer(WireFormat wire)
{
    return platformFailureAnswer(wire, 503, Outcome::Unavailable,
                                 QStringLiteral("database unavailable; retry later"));
}

// What the platform is told of a forward that ended: the handler's answer as it gave it, or
// 502/504 in the platform's format when there was none.
CallbackAnswer forwardAnswer(WireFormat wire, const UpstreamAnswer &upstream, ForwardStep step)
{
    if (upstream.answered())
        return platformAnswer(upstream.status, upstream.body, upstream.contentType,
                              step == ForwardStep::Final ? Outcome::Processed
                                                         : Outcome::Unavailable);
    return platformFailureAnswer(wire, upstream.timedOut ? 504 : 502, Outcome::Unavailable,
                                 QStringLiteral("the upstream did not answer; retry later"));
}

void writeTraceIfConnected(const CallbackTrace &trace)
{
    db::Connection *connection = openThreadConnection();
    if (!connection)
        return;
    try {
        writeTrace(connection->database(), trace);
    } catch (const db::Error &error) {
        spdlog::warn("trace of {} not written: {}", trace.payNo.toStdString(), error.what());
    }
}

} // namespace

// One delivery on its way: shared by the three threads it passes.
struct Gateway::Delivery
{
    CallbackRequest request;
    std::shared_ptr<CallbackTrace> trace;
    Answer answer;
    std::atomic<bool> answered{false};
    // Held from before the claim read the switch until the forward's outcome is stored: the
    // instance acknowledges no flip to RECORD_ONLY meanwhile.
    std::unique_ptr<SwitchReading> reading;
    ForwardClaim claim;

    // The platform is answered once: by the handler's answer, or 504 when it is late.
    void answerOnce(const CallbackAnswer &callbackAnswer)
    {
        if (answered.exchange(true))
            return;
        trace->responded = nowMicros();
        trace->outcome = QString::fromLatin1(outcomeLabel(callbackAnswer.outcome));
        trace->httpStatus = callbackAnswer.httpStatus;
        answer(callbackAnswer);
    }
};

Gateway::Gateway(const ServiceOptions &options, SwitchObserver &switchObserver,
                 ServiceMetrics &metrics)
    : m_options(options)
    , m_switch(switchObserver)
    , m_metrics(metrics)
    , m_recorder(std::make_unique<GatewayRecorder>(
          options.dsn, options.instance, options.threads, options.recordBatchRows,
          std::chrono::milliseconds(options.recordBatchMs), metrics))
    // Never full: no more outcomes than forwards can be in flight. Never late: each is a
    // forward that happened and must be stored.
    , m_outcomes(
          std::make_unique<JobQueue>(2, options.upstream.connections + 1, std::chrono::hours(24)))
{
    for (const WireFormat format :
         {WireFormat::Payops, WireFormat::WechatPay, WireFormat::Alipay}) {
        const QString url = options.upstreamUrlFor(format);
        if (url.isEmpty())
            continue; // not served: its path answers 404
        for (const auto &client : m_upstreams) {
            if (client && client->options().url == url)
                m_upstreams[size_t(format)] = client;
        }
        if (!m_upstreams[size_t(format)]) {
            UpstreamOptions upstream = options.upstream;
            upstream.url = url;
            m_upstreams[size_t(format)] = std::make_shared<UpstreamClient>(upstream);
        }
    }
}

Gateway::~Gateway() = default;

UpstreamClient &Gateway::upstreamFor(WireFormat format) const
{
    return *m_upstreams[size_t(format)]; // a format without one is not served (isServed)
}

void Gateway::stop()
{
    // Each forward in flight ends by its bound; its outcome is queued.
    for (auto &client : m_upstreams)
        client.reset();
    m_outcomes->stop();
    m_recorder->stop();
}

void Gateway::accept(const CallbackRequest &request, std::shared_ptr<CallbackTrace> trace,
                     Answer answer)
{
    auto delivery = std::make_shared<Delivery>();
    delivery->request = request;
    delivery->trace = std::move(trace);
    delivery->answer = std::move(answer);
    std::optional<CallbackAnswer> early;
    try {
        early = claimOrAnswer(threadConnection(m_options.dsn).database(), *delivery);
    } catch (const db::Error &error) {
        if (error.isConnectionFailure())
            dropThreadConnection();
        spdlog::warn("callback {} not forwarded: {}", request.payNo.toStdString(), error.what());
        early = unavailableAnswer(request.wire);
    }
    if (!early)
        return forward(delivery);
    delivery->answerOnce(*early);
    writeTraceIfConnected(*delivery->trace);
}

std::optional<CallbackAnswer> Gateway::claimOrAnswer(const QSqlDatabase &db, Delivery &delivery)
{
    // The trade's row, and the event's when the delivery is a later event of the trade.
    std::optional<StoredCallback> stored = findCallback(db, delivery.request.payNo);
    const GatewayKey key = gatewayKeyOf(delivery.request, stored);
    delivery.request.event = key.event;
    delivery.trace->event = key.event;
    const CallbackRequest &request = delivery.request;
    if (!key.event.isEmpty())
        stored = findGatewayRow(db, key);
    // A delivery answered before gets its first answer again, with no transaction.
    if (stored) {
        if (auto answer = answerFromRow(*stored, request))
            return answer;
    }
    // Durable before the forward: a gateway that dies during it leaves the row for the
    // platform's retry or the drain.
    if (!stored) {
        try {
            if (key.event.isEmpty())
                m_recorder->record(db, request); // committed before it returns
            else
                recordEvent(db, request, QStringLiteral("FORWARDING"), m_options.instance);
        } catch (const db::Error &error) {
            if (!error.isDuplicateKey())
                throw;
            // Another copy recorded it a moment ago: that row decides, as for a later copy.
            stored = findGatewayRow(db, key);
            if (stored) {
                if (auto answer = answerFromRow(*stored, request))
                    return answer;
            }
        }
    } else if (key.event.isEmpty() && !stored->content.sameContentAs(request)) {
        // A SUCCESS after a non-SUCCESS notice. While the notice's forward is out, its outcome
        // would be stored over the SUCCESS and settle it unforwarded: the platform sends the
        // SUCCESS again once that forward has ended.
        db::Transaction record(db);
        if (db::scalar(db,
                       QStringLiteral("SELECT forward_claimed_until > NOW(3) FROM "
                                      "pay_callback_log WHERE id = ? FOR UPDATE"),
                       {stored->id})
                .toBool())
            return busyAnswer(request.wire);
        if (upgradeCallback(db, request, m_options.instance))
            db::exec(
                db, // a SUCCESS after a non-SUCCESS notice, forwarded as a new one
                QStringLiteral("UPDATE pay_callback_log SET status = 'FORWARDING' WHERE id = ?"),
                {stored->id});
        record.commit();
    }

    UpstreamClient &upstream = upstreamFor(request.wire);
    if (!upstream.reserve())
        return platformFailureAnswer(
            request.wire, 503, Outcome::Unavailable,
            QStringLiteral("every connection to the handler is busy; retry later"));
    delivery.reading =
        std::make_unique<SwitchReading>(m_switch, db, SwitchReading::Hold::Everywhere);
    delivery.trace->txBegin = nowMicros();
    Claim claim;
    try {
        claim = claimForward(db, key, m_options.instance, *delivery.reading,
                             m_options.upstream.boundSeconds, &request);
    } catch (...) {
        upstream.unreserve();
        delivery.reading.reset();
        throw;
    }
    if (claim.step == ClaimStep::Claimed) {
        delivery.claim = claim.forward;
        return std::nullopt;
    }
    upstream.unreserve();
    delivery.reading.reset();
    delivery.trace->committed = nowMicros();
    switch (claim.step) {
    case ClaimStep::Recorded:
        // Held by the platform's retries: the row shows what is owed, and the retry that comes
        // after the hold is forwarded with its own fresh signature.
        if (m_options.holdByRetries.contains(request.wire))
            return platformFailureAnswer(request.wire, 503, Outcome::Recorded,
                                         QStringLiteral("recorded and held; send it again later"));
        return recordedAnswer(request.wire);
    case ClaimStep::Settled:
        if (auto answer = answerFromRow(claim.row, request))
            return answer;
        break;
    case ClaimStep::Busy:
        return busyAnswer(request.wire);
    case ClaimStep::Claimed:
    case ClaimStep::Missing:
        break;
    }
    return platformFailureAnswer(request.wire, 503, Outcome::Unavailable,
                                 QStringLiteral("concurrent delivery; retry later"));
}

void Gateway::forward(std::shared_ptr<Delivery> delivery)
{
    const WireFormat wire = delivery->request.wire;
    UpstreamRequest request = forwardRequest(delivery->claim);
    upstreamFor(wire).post(
        std::move(request),
        [delivery, wire] {
            delivery->answerOnce(platformFailureAnswer(
                wire, 504, Outcome::Unavailable,
                QStringLiteral("the handler has not answered yet; retry later")));
        },
        [this, delivery](const UpstreamAnswer &answer) {
            if (!m_outcomes->submit([this, delivery, answer](bool) { settle(delivery, answer); }))
                settle(delivery, answer); // the queue is never full; this is its last resort
        });
}

void Gateway::settle(const std::shared_ptr<Delivery> &delivery, const UpstreamAnswer &answer)
{
    CallbackTrace &trace = *delivery->trace;
    trace.forwarded = answer.sentMicros;
    if (answer.answered()) {
        trace.upstreamAnswered = answer.answeredMicros;
        trace.upstreamStatus = answer.status;
    }
    m_metrics.recordUpstream(answer);
    // A connection lost during the forward (killed, timed out by the server) is replaced: the
    // claim is a committed row, not the connection's, so the outcome is stored all the same.
    std::optional<ForwardStep> step;
    for (int attempt = 0; attempt < 2 && !step; ++attempt) {
        try {
            step = storeForward(threadConnection(m_options.dsn).database(), delivery->claim, answer,
                                m_options.instance);
        } catch (const db::Error &error) {
            spdlog::warn("outcome of forward {} of {} not stored: {}", delivery->claim.number,
                         delivery->claim.payNo.toStdString(), error.what());
            if (!error.isConnectionFailure())
                break;
            dropThreadConnection();
        }
    }
    trace.committed = nowMicros();
    delivery->reading.reset();
    // An outcome not stored is not passed on as final: the platform retries, and the retry is
    // forwarded once the claim has run out (the handler sees Idempotency-Key again).
    delivery->answerOnce(step ? forwardAnswer(delivery->request.wire, answer, *step)
                              : unavailableAnswer(delivery->request.wire));
    writeTraceIfConnected(trace);
}

} // namespace payops
