#pragma once

#include "callbackhandler.h"
#include "upstreamclient.h"

#include <QString>

#include <functional>

namespace payops {

// Gateway mode (payops-callbackd --upstream): pays nothing itself. Each verified callback is
// recorded durably as received and forwarded exactly once to the team's own handler, the
// upstream; the platform gets the upstream's answer (docs/gateway.md).
//
// A pay_no whose row holds the upstream's final answer gets it again without a forward.
// Otherwise, under the pay_no's named lock (so a second delivery at another instance waits for
// the first's outcome): the row is recorded if absent, then forwarded in a transaction that
// holds the switch's shared lock (forwardRow). In RECORD_ONLY mode that transaction reads the
// switch and forwards nothing: the row is left RECORDED and the platform answered success at
// once, for the drain to forward later.
class GatewayHandler final : public CallbackHandler
{
public:
    // Makes a delivery durable (gateway = 1, FORWARDING) before its forward; throws db::Error as
    // recordForGateway does.
    using Record = std::function<void(const QSqlDatabase &db, const CallbackRequest &request)>;

    // onForward is called after every forward, on the thread that made it. record defaults to
    // recordForGateway on the worker's own connection; the endpoint passes its group commit.
    GatewayHandler(QString instance, UpstreamOptions upstream, SwitchObserver &switchObserver,
                   int lockTimeoutSeconds, std::function<void(const UpstreamAnswer &)> onForward,
                   Record record = {});

    const char *name() const override { return "gateway"; }
    // A lost connection may have come after the upstream's answer: running again would forward
    // again at once. The platform's own retry comes later and finds the row.
    bool repeatable() const override { return false; }
    CallbackAnswer handle(const QSqlDatabase &db, const CallbackRequest &request,
                          CallbackTrace &trace) override;

private:
    CallbackAnswer forwardLocked(const QSqlDatabase &db, const CallbackRequest &request,
                                 CallbackTrace &trace);
    UpstreamClient &threadClient();

    QString m_instance;
    UpstreamOptions m_upstream;
    SwitchObserver &m_switch;
    int m_lockTimeoutSeconds;
    std::function<void(const UpstreamAnswer &)> m_onForward;
    Record m_record;
};

} // namespace payops
