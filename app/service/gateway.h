#pragma once

#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbacktrace.h"
#include "serviceoptions.h"

#include <QSqlDatabase>

#include <array>
#include <functional>
#include <memory>
#include <optional>

namespace payops {

class GatewayRecorder;
class JobQueue;
class ServiceMetrics;
class UpstreamClient;
struct SwitchObserver;
struct UpstreamAnswer;

// Gateway mode (payops-callbackd --upstream): pays nothing itself. Each verified delivery is
// recorded durably as received and each of its forwards claimed in the database before it is
// sent, so that one forward of a payment is in flight at a time, across threads, instances and
// Galera nodes, whatever the handler's speed; the platform gets the handler's answer
// (docs/gateway.md).
//
// A delivery goes: a database worker (accept: answer from the row, record, claim) -> the
// upstream client's thread (the forward, holding no database connection) -> an outcome worker
// (store the answer under the claim, write the trace). The platform is answered by the
// handler's answer, or 504 at --upstream-timeout while the forward goes on to its bound.
class Gateway final
{
public:
    using Answer = std::function<void(const CallbackAnswer &)>;

    Gateway(const ServiceOptions &options, SwitchObserver &switchObserver, ServiceMetrics &metrics);
    ~Gateway();
    Gateway(const Gateway &) = delete;
    Gateway &operator=(const Gateway &) = delete;

    // On a database worker thread, with its connection: `answer` is called once, from any
    // thread, and the trace is written once the delivery is settled.
    void accept(const CallbackRequest &request, std::shared_ptr<CallbackTrace> trace,
                Answer answer);
    // After the workers stopped: waits for the forwards in flight (each ends by its bound),
    // stores their outcomes, then commits what the recorder holds.
    void stop();

private:
    struct Delivery;
    // Answers from the row, records the delivery and claims its forward; nullopt when claimed.
    std::optional<CallbackAnswer> claimOrAnswer(const QSqlDatabase &db, Delivery &delivery);
    void forward(std::shared_ptr<Delivery> delivery);
    void settle(const std::shared_ptr<Delivery> &delivery, const UpstreamAnswer &answer);

    const ServiceOptions &m_options;
    SwitchObserver &m_switch;
    ServiceMetrics &m_metrics;
    std::unique_ptr<GatewayRecorder> m_recorder;
    std::unique_ptr<JobQueue> m_outcomes; // stores forwards' outcomes on connections of their own
    // Per format, each upstream's own client (formats forwarded to one URL share it).
    std::array<std::shared_ptr<UpstreamClient>, 3> m_upstreams;
    UpstreamClient &upstreamFor(WireFormat format) const;
};

} // namespace payops
