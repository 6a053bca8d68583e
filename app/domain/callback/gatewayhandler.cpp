#include "gatewayhandler.h"

#include "callbacklog.h"
#include "db/connection.h"
#include "db/namedlock.h"
#include "gatewayforward.h"
#include "platformreply.h"

#include <memory>

namespace payops {
namespace {

CallbackAnswer recordedAnswer(WireFormat wire)
{
    const PlatformReply reply = platformReply(wire, CallbackAnswer::success(Outcome::Recorded));
    return platformAnswer(reply.status, reply.body, reply.contentType, Outcome::Recorded);
}

} // namespace

GatewayHandler::GatewayHandler(QString instance, UpstreamOptions upstream,
                               SwitchObserver &switchObserver, int lockTimeoutSeconds,
                               std::function<void(const UpstreamAnswer &)> onForward, Record record)
    : m_instance(std::move(instance))
    , m_upstream(std::move(upstream))
    , m_switch(switchObserver)
    , m_lockTimeoutSeconds(lockTimeoutSeconds)
    , m_onForward(std::move(onForward))
    , m_record(std::move(record))
{
    if (!m_record)
        m_record = [this](const QSqlDatabase &db, const CallbackRequest &request) {
            recordForGateway(db, request, m_instance); // committed before it returns
        };
}

UpstreamClient &GatewayHandler::threadClient()
{
    // One easy handle per worker thread, as each has its own database connection: the
    // upstream's connection stays open between the forwards of that thread.
    thread_local std::unique_ptr<UpstreamClient> client;
    if (!client)
        client = std::make_unique<UpstreamClient>(m_upstream);
    return *client;
}

CallbackAnswer GatewayHandler::handle(const QSqlDatabase &db, const CallbackRequest &request,
                                      CallbackTrace &trace)
{
    // A pay_no answered before gets its first answer again, with no lock and no transaction.
    if (const auto stored = findCallback(db, request.payNo)) {
        if (auto answer = answerFromRow(*stored, request))
            return *answer;
    }
    // The later of two deliveries waits here for the earlier's outcome, and then finds it in
    // the row: one forward per pay_no, however many instances and deliveries.
    db::NamedLock lock(db, db::payNoLockName(request.payNo));
    if (!lock.acquire(m_lockTimeoutSeconds))
        return platformFailureAnswer(request.wire, 503, Outcome::Unavailable,
                                     QStringLiteral("this payment is being forwarded; retry "
                                                    "later"));
    trace.lockAcquired = nowMicros();
    const CallbackAnswer answer = forwardLocked(db, request, trace);
    lock.release();
    trace.lockReleased = nowMicros();
    return answer;
}

CallbackAnswer GatewayHandler::forwardLocked(const QSqlDatabase &db, const CallbackRequest &request,
                                             CallbackTrace &trace)
{
    // Read again under the lock: the delivery this one waited for may have settled it.
    const std::optional<StoredCallback> stored = findCallback(db, request.payNo);
    if (stored) {
        if (auto answer = answerFromRow(*stored, request))
            return *answer;
    }
    // Durable before the forward: a gateway that dies during it leaves the row for the
    // platform's retry or the drain.
    if (!stored) {
        m_record(db, request); // committed before it returns
    } else if (!stored->content.sameContentAs(request)) {
        db::Transaction record(db);
        if (upgradeCallback(db, request, m_instance))
            db::exec(
                db, // a SUCCESS after a non-SUCCESS notice, forwarded as a new one
                QStringLiteral("UPDATE pay_callback_log SET status = 'FORWARDING' WHERE id = ?"),
                {stored->id});
        record.commit();
    }

    const Forward forward =
        forwardRow(db, threadClient(), request.payNo, m_instance, m_switch, trace, &request);
    if (forward.step == ForwardStep::Final || forward.step == ForwardStep::NotFinal)
        m_onForward(forward.upstream);
    switch (forward.step) {
    case ForwardStep::Recorded:
        m_switch.observe(true, 0);
        return recordedAnswer(request.wire);
    case ForwardStep::Settled:
        if (auto answer = answerFromRow(forward.row, request))
            return *answer;
        break;
    case ForwardStep::Final:
    case ForwardStep::NotFinal:
        if (forward.upstream.answered())
            return platformAnswer(
                forward.upstream.status, forward.upstream.body, forward.upstream.contentType,
                forward.step == ForwardStep::Final ? Outcome::Processed : Outcome::Unavailable);
        return platformFailureAnswer(request.wire, forward.upstream.timedOut ? 504 : 502,
                                     Outcome::Unavailable,
                                     QStringLiteral("the upstream did not answer; retry later"));
    case ForwardStep::Busy:
        return platformFailureAnswer(request.wire, 503, Outcome::Unavailable,
                                     QStringLiteral("this payment is being forwarded; retry "
                                                    "later"));
    case ForwardStep::Missing:
        break;
    }
    return platformFailureAnswer(request.wire, 503, Outcome::Unavailable,
                                 QStringLiteral("concurrent delivery; retry later"));
}

} // namespace payops
