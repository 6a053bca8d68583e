#pragma once

#include "channel.h"
#include "db/dsn.h"
#include "upstreamclient.h"

#include <QString>

#include <atomic>
#include <functional>
#include <optional>

namespace payops {

struct UpstreamDrainResult
{
    int forwarded = 0;    // the upstream's answer was final: now FORWARDED
    int failed = 0;       // no final answer: the row stays for the next drain
    int skipped = 0;      // its pay_no was being forwarded by live traffic, or settled meanwhile
    int candidates = 0;   // rows found to forward when the drain began
    double perSecond = 0; // forwards a second so far
    bool stoppedBySwitch = false; // the switch was (or turned) RECORD_ONLY
    bool cancelled = false;

    int done() const { return forwarded + failed + skipped; }
};

struct UpstreamDrainOptions
{
    UpstreamOptions upstream;
    int rate = 0;        // forwards a second at most; 0: as fast as the connections go
    int concurrency = 1; // connections to the upstream (and to the database), each a thread
    // Only the rows that came in this format (a gateway with a handler per channel).
    std::optional<WireFormat> channel;
    QString worker; // written as the instance of what it forwards
    const std::atomic<bool> *cancel = nullptr;
    // Called after each row, from the thread that forwarded it, one call at a time.
    std::function<void(const UpstreamDrainResult &)> progress;
};

// Forwards a gateway's rows without a final answer (gateway = 1, RECORDED or FORWARDING),
// oldest first, each once, to the upstream, exactly as the gateway forwards live traffic
// (forwardRow). Each row is forwarded under its pay_no's named lock, taken without waiting:
// a lock held means live traffic is forwarding that pay_no right now, and the row is skipped.
// A drain and live traffic on one pay_no therefore never both forward it; a failure stays
// for the next drain. Each forward reads the switch under its shared lock and the drain stops
// when it reads RECORD_ONLY.
//
// A drain that forwarded anything leaves one audit entry (backlog.drain_upstream) with its
// counts. Throws db::Error when the database cannot be used; what finished stays finished.
UpstreamDrainResult drainToUpstream(const Dsn &dsn, const UpstreamDrainOptions &options);

} // namespace payops
