#pragma once

#include "db/dsn.h"

#include <QString>

#include <atomic>
#include <functional>

namespace payops {

struct DrainResult
{
    int processed = 0;
    int rejected = 0;
    int ignored = 0;
    int unmatched = 0; // recorded callbacks whose order does not exist: now UNMATCHED
    int waiting = 0;   // unmatched callbacks passed over because their order still does not exist
    bool stoppedBySwitch = false; // the switch was (or turned) RECORD_ONLY
    bool cancelled = false;
    int backlog = 0;      // Recorded: callbacks RECORDED when the drain began
    double perSecond = 0; // callbacks moved on a second so far

    // The callbacks this drain moved on; `waiting` ones stay as they were.
    int handled() const { return processed + rejected + ignored + unmatched; }
    // Recorded: what is left of the backlog the drain began with, as far as this drain knows
    // (another drain's work shows in the next count, not here).
    int left() const { return backlog > handled() ? backlog - handled() : 0; }
};

enum class DrainSource {
    Recorded,  // the backlog of RECORD_ONLY mode
    Unmatched, // SUCCESS callbacks that arrived before their order
};

struct DrainOptions
{
    // The defaults of payops drain and the console, and the bounds payops drain accepts.
    static constexpr int kDefaultConnections = 4;
    static constexpr int kMaxConnections = 64;
    static constexpr int kDefaultBatch = 100;
    static constexpr int kMaxBatch = 1000;

    DrainSource source = DrainSource::Recorded;
    int limit = 0;                         // 0: until the backlog is empty
    bool force = false;                    // drain even while the switch is RECORD_ONLY
    QString worker;                        // written as the instance of what it processes
    int connections = kDefaultConnections; // Recorded: connections at once, each a thread
    int batch = kDefaultBatch;             // Recorded: callbacks claimed per transaction
    const std::atomic<bool> *cancel = nullptr;
    // Called as the drain goes (after each batch, or each unmatched callback), from the thread
    // that did it, one call at a time.
    std::function<void(const DrainResult &)> progress;
};

// Processes callbacks oldest first through the same payment logic as the live endpoint
// (applyPayment, verdictFor, finishCallback). Rows are claimed with FOR UPDATE SKIP LOCKED,
// so any number of drainers run at once and each callback is processed exactly once. Each
// transaction reads the switch under its shared lock and the drain stops when one reads
// RECORD_ONLY, unless forced.
//
// Recorded: every RECORDED callback, over `connections` connections at once, each claiming
// `batch` rows at a time (by primary key, among the oldest RECORDED ids read without a lock,
// FOR UPDATE SKIP LOCKED) and applying them one after the other in that one transaction:
// one commit per batch instead of one per callback. Two payments of one order in a batch
// therefore come out as one at a time would: the first applied, the second rejected as
// order_already_paid. In different batches (or drains) the one whose transaction reaches the
// order first is applied and the other rejected; either way exactly one is. A batch locks its
// orders, then their users, in id order before its first payment, so batches wait for each
// other rather than deadlock; a deadlock all the same (with other traffic) rolls back that
// batch only, which is claimed again at half its size. A callback whose order does not exist
// becomes UNMATCHED.
//
// Unmatched: each UNMATCHED callback whose order exists now, as the endpoint would have, one
// transaction each on one connection: the lock on pay_no taken before BEGIN (one another
// drainer holds is skipped, as SKIP LOCKED skips its row) and released after COMMIT. That
// backlog is what arrived ahead of its orders, small, and each needs its own named lock, so
// batching it is not worth it. An order no longer payable rejects it (e.g.
// order_already_paid: a second payment finance must see); one still missing leaves it
// UNMATCHED, counted in `waiting`.
//
// A drain that moved anything leaves one audit entry (backlog.drain, backlog.drain_unmatched)
// with its counts. Throws db::Error (the first one, once every connection stopped); what was
// committed before stays committed.
DrainResult drainBacklog(const Dsn &dsn, const DrainOptions &options);

} // namespace payops
