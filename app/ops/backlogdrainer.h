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
    bool stoppedBySwitch = false; // the switch was (or turned) RECORD_ONLY
    bool cancelled = false;

    int handled() const { return processed + rejected + ignored; }
};

struct DrainOptions
{
    int limit = 0;       // 0: until the backlog is empty
    bool force = false;  // drain even while the switch is RECORD_ONLY
    QString worker;      // written as the instance of what it processes
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(const DrainResult &)> progress;
};

// Processes RECORDED callbacks oldest first through the same payment logic as the live
// endpoint, one transaction each: the row is claimed with FOR UPDATE SKIP LOCKED, so any
// number of drainers run at once and each callback is processed exactly once. Each
// transaction reads the switch under its shared lock and stops when it reads RECORD_ONLY,
// unless forced. A drain that processed anything leaves one audit entry, backlog.drain, with
// its counts. Throws db::Error; what finished before stays finished.
DrainResult drainBacklog(const QSqlDatabase &db, const DrainOptions &options);

} // namespace payops
