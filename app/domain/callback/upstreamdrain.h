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

// Forwards a gateway's rows without a final answer (gateway = 1, RECORDED or FORWARDING; of one
// format with `channel`), the trades' payments oldest first and then their later events
// (callback_event), each once, to the upstream, under a claim as the gateway
// forwards live traffic (claimForward): a row whose forward is out right now is skipped, so a
// drain and live traffic never both forward it; a failure stays for the next drain. Each
// forward runs in a transaction that reads the switch under its shared lock, and the drain
// stops when it reads RECORD_ONLY.
//
// A drain that forwarded anything leaves one audit entry (backlog.drain_upstream) with its
// counts. Throws db::Error when the database cannot be used; what finished stays finished.
UpstreamDrainResult drainToUpstream(const Dsn &dsn, const UpstreamDrainOptions &options);

} // namespace payops
