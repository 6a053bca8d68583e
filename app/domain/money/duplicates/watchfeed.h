#pragma once

#include <QSqlDatabase>

#include <atomic>

namespace payops {

struct WatchFeedResult
{
    qint64 rowsRead = 0;
    bool cancelled = false;
};

// The duplicate watch's incremental step, for each of user_coupon, point_log and compensation:
// reads again the ids that were missing below its watermark (a transaction may commit an id
// lower than one already seen) until no transaction open when they were seen is still open
// (with the PROCESS privilege) or they are kWatchLateSeconds old, then the rows past the
// watermark, batchRows at a time, and recounts the orders they name. Every read is a primary-
// key range. The caller holds the watch's named lock. Throws db::Error.
WatchFeedResult feedDuplicateWatch(const QSqlDatabase &db, int batchRows,
                                   const std::atomic<bool> *cancel);

} // namespace payops
