#pragma once

#include <QSqlDatabase>
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

    // The callbacks this drain moved on; `waiting` ones stay as they were.
    int handled() const { return processed + rejected + ignored + unmatched; }
};

enum class DrainSource {
    Recorded,  // the backlog of RECORD_ONLY mode
    Unmatched, // SUCCESS callbacks that arrived before their order
};

struct DrainOptions
{
    DrainSource source = DrainSource::Recorded;
    int limit = 0;      // 0: until the backlog is empty
    bool force = false; // drain even while the switch is RECORD_ONLY
    QString worker;     // written as the instance of what it processes
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(const DrainResult &)> progress;
};

// Processes callbacks oldest first through the same payment logic as the live endpoint,
// one transaction each: the row is claimed with FOR UPDATE SKIP LOCKED, so any number of
// drainers run at once and each callback is processed exactly once. Each transaction reads
// the switch under its shared lock and stops when it reads RECORD_ONLY, unless forced.
//
// Recorded: every RECORDED callback; one whose order does not exist becomes UNMATCHED.
// Unmatched: each UNMATCHED callback whose order exists now, as the endpoint would have: the
// lock on pay_no taken before BEGIN (one another drainer holds is skipped, as SKIP LOCKED
// skips its row) and released after COMMIT. An order no longer payable rejects it (e.g.
// order_already_paid: a second payment finance must see); one still missing leaves it
// UNMATCHED, counted in `waiting`.
//
// A drain that moved anything leaves one audit entry (backlog.drain, backlog.drain_unmatched)
// with its counts. Throws db::Error; what finished before stays finished.
DrainResult drainBacklog(const QSqlDatabase &db, const DrainOptions &options);

} // namespace payops
