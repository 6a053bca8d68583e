#pragma once

#include "job.h"

#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <map>
#include <memory>

namespace payops::console {

// The overview's live chart: the last minutes of callbacks, new duplicate side effects and
// switch flips, as plain values. Times are milliseconds since the epoch, UTC, by the server's
// clock (the chart's right edge is the server's now, not the console's).
struct LiveTraffic
{
    struct Bucket
    {
        qint64 startMs = 0;
        qint64 count = 0;
    };
    struct Flip
    {
        qint64 atMs = 0;
        QString mode; // the mode after the flip: NORMAL or RECORD_ONLY
        QString actor;
        QString reason;
    };

    static constexpr qint64 kDuplicateBucketMs = 10'000;

    qint64 nowMs = 0;
    qint64 windowStartMs = 0;
    QList<Bucket> callbacksPerSecond; // callback_trace rows by received_at; only seconds with any
    // New extra coupon and points copies by created_at, in buckets of kDuplicateBucketMs (only
    // those with any): a minute would smear the moment the bleeding stops over a minute.
    QList<Bucket> duplicates;
    QList<Flip> flips; // oldest first
};

// Keeps the window in memory and reads only what is new. The first read takes the window
// once through the time indexes (idx_trace_received, idx_coupon_created, idx_point_created);
// every later one reads the rows above the last id it saw (primary-key ranges), plus the ids
// it skipped because their transaction had not committed yet (see
// docs/decisions/0017-live-chart-id-watermarks.md). A new coupon or points row is an extra copy
// when its (order, key) group, read through the (order_id, key) index, holds another row read
// before it. Flips come from the audit log through idx_audit_action: a handful per window.
//
// Not thread-safe: one object per worker, one read at a time (a DbWorker runs its jobs in
// order). A read that throws leaves the state as it was.
class LiveTrafficReader final
{
public:
    explicit LiveTrafficReader(int windowSeconds = 15 * 60);

    LiveTraffic read(const QSqlDatabase &db);
    bool hasLoaded() const { return m_loaded; }

    // Rows of one table read so far, for tests and the benchmark's accounting.
    struct Source
    {
        qint64 watermark = 0;       // highest id read
        QHash<qint64, qint64> gaps; // ids below it not seen yet -> when to give up (ms, monotonic)
    };

private:
    int m_windowSeconds;
    bool m_loaded = false;
    Source m_trace, m_coupons, m_points;
    std::map<qint64, qint64> m_perSecond; // bucket start (ms) -> count
    std::map<qint64, qint64> m_duplicates;
};

// The reader's next read as a worker's job; the reader lives on between reads.
Job<LiveTraffic> liveTrafficJob(std::shared_ptr<LiveTrafficReader> reader);

} // namespace payops::console
