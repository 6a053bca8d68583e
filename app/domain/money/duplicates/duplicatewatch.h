#pragma once

#include "duplicatecount.h"
#include "sideeffecttables.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>

namespace payops {

// Live duplicate side effects as the duplicate watch holds them (sql/migrations/0010): the same
// groups, copies and money as a GROUP BY ... HAVING over user_coupon and point_log finds, kept
// up to date by reading only the rows added since the last refresh. See
// docs/decisions/0015-duplicate-watch.md.
struct DuplicateWatchFigures
{
    // Open groups, extra live copies and superseded copies per kind and value of one copy.
    struct Unit
    {
        SideEffectKindBit kind = CouponBit;
        qint64 unit = 0; // face_value_fen of a coupon, or points of a points row
        qint64 openGroups = 0;
        qint64 extraCopies = 0;
        qint64 superseded = 0;
    };

    QList<Unit> units;
    qint64 openOrders = 0; // orders with at least one open group
    QString scanState;     // NEW, SCANNING or DONE: the first pass
    qint64 scanStart = 0;  // the first pass's range of order ids, and how far it came
    qint64 scanCursor = 0;
    qint64 scanEnd = 0;
    QString refreshedAt; // UTC, as the server wrote it; empty before the first refresh

    bool complete() const { return scanState == QLatin1String("DONE"); }
    // How much of the first pass is done, 0-100 (100 once complete).
    int percentScanned() const;
    qint64 groups(SideEffectKindBit kind) const;
    qint64 extraCopies(SideEffectKindBit kind) const;
    qint64 superseded() const; // copies compensation has dealt with, both kinds
    qint64 couponFen() const;
    // Each group's copy valued as the duplicates page does: points * 100 DIV pointsPerYuan.
    qint64 pointFen(qint64 pointsPerYuan) const;
    bool isEmpty() const { return groups(CouponBit) == 0 && groups(PointsBit) == 0; }
    // The same figures in the form `payops inspect` and the migrations describe.
    LiveDuplicateCount liveCount(const QList<qint64> &sampleOrderIds) const;
};

struct WatchRefreshOptions
{
    // How long to wait for another session's refresh to end before reading what it left.
    int lockWaitSeconds = 5;
    // Milliseconds this call may spend on the first pass; -1 until it is done, 0 not at all.
    // The console gives each refresh a slice, so that its figures keep coming meanwhile.
    int firstPassBudgetMs = -1;
    // Orders per statement of the first pass to start with; it adapts to ~50 ms a statement.
    qint64 firstPassChunk = 20000;
    // A refresh's batches of new rows per table and statement.
    int batchRows = 2000;
    const std::atomic<bool> *cancel = nullptr; // checked between statements
    // Reports the first pass: the order id reached, of the range [start, end].
    std::function<void(const DuplicateWatchFigures &)> progress;
};

struct WatchRefresh
{
    DuplicateWatchFigures figures;
    bool refreshed = false; // false: see `why`; figures are as the last refresh left them
    bool missing = false;   // the database has no watch (migration 0010 not applied); see `why`
    QString why;
    bool cancelled = false;
    qint64 rowsRead = 0; // side-effect and compensation rows this refresh read (new and late)
};

// Advances the watch: serialised per database by a named lock, so that two consoles and a cron
// job never count one row twice; then late rows (ids that were missing below a watermark),
// new rows past the watermarks, and as much of the first pass as the options allow. Reads the
// business tables without locks and in short statements. An account that may not write the
// watch gets the figures as they are, with `why`; a database without the watch gets `missing`
// and a `why` that says to migrate. Throws db::Error.
WatchRefresh refreshDuplicateWatch(const QSqlDatabase &db, const WatchRefreshOptions &options = {});

// The figures as stored, without refreshing. Throws db::Error.
DuplicateWatchFigures readDuplicateWatch(const QSqlDatabase &db);
// Up to `limit` orders with an open group, lowest first (an index range). Throws db::Error.
QList<qint64> openDuplicateOrders(const QSqlDatabase &db, int limit = 10);

// GET_LOCK name of the refresher of one database: at most 64 characters on every server.
QString duplicateWatchLockName(const QString &database);

// Runs `advance` holding the database's watch lock, so that two consoles and a cron job never
// count one row twice; the watch on a team's mapped tables takes the same lock. Returns an
// empty string when it ran, or why it did not: another session kept the lock past
// `lockWaitSeconds`, or this account may not write the watch (or the server is read-only).
// Other errors, a missing table among them, are thrown (db::Error).
QString underWatchLock(const QSqlDatabase &db, int lockWaitSeconds,
                       const std::function<void()> &advance);

// Seconds a missing id below a watermark is read again for, waiting for its transaction.
constexpr int kWatchLateSeconds = 300;

} // namespace payops
