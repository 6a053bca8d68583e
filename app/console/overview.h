#pragma once

#include "activitytally.h"
#include "backlog.h"
#include "databasesummary.h"
#include "domain/callback/unmatchedcallbacks.h"
#include "domain/mapping/mappedwatch.h"
#include "duplicatescan.h"
#include "job.h"

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <map>
#include <memory>
#include <optional>

namespace payops::console {

// The figures of the overview page, read in one job.
struct OverviewFigures
{
    QString mode; // NORMAL or RECORD_ONLY, from callback_switch
    qint64 switchVersion = 0;
    QString switchReason;
    QString switchChangedBy;
    qint64 switchChangedMicros = 0;
    qint64 callbacksLastMinute =
        0;              // distinct pay_no first received in the last minute (RecentCallbackCount)
    qint64 backlog = 0; // callbacks recorded in RECORD_ONLY mode, not yet processed (BacklogTally)
    UnmatchedCount unmatched; // callbacks that arrived before their order
    DuplicateTotals
        duplicates; // from the duplicate watch (domain/money/duplicates/duplicatewatch.h)
    bool duplicatesWatched = true;  // false: the database has no watch yet (see duplicatesNote)
    bool duplicatesComplete = true; // false while the watch's first pass is still reading history
    int duplicatesPercent = 100;    // how much of it is read
    QString duplicatesNote;         // why the watch was not advanced by this refresh, if it was not
    // On a mapped database: the mapped watch's figures per side effect, in place of `duplicates`.
    std::optional<mapping::MappedWatchFigures> mapped;
    qint64 instancesAlive = 0;
    qint64 instancesKnown = 0;
    qint64 unsafeInstancesAlive = 0;
    int instanceAliveSeconds = 0; // the liveness threshold they were counted by
    // Orders created and transitions in the last kRecentActivitySeconds: filled by the caller
    // from its ActivityTally, which keeps counts between refreshes.
    RecentActivity recent;
};

constexpr qint64 kRecentActivitySeconds = 3600;

// The callbacks of the last minute (pay_callback_log rows, one per pay_no), per second of
// created_at, kept between refreshes. Each advance counts again only the seconds since the
// last one and the kSettleSeconds before it, through idx_callback_created: a callback's row
// is visible once its transaction commits, a moment after its created_at. At 500 callbacks a
// second that is a few thousand index entries a refresh instead of the minute's 30,000. A
// callback whose transaction took longer than kSettleSeconds to commit is missed (the window's
// edge moves by whole seconds). One object per worker thread. Throws db::Error.
class RecentCallbackCount final
{
public:
    static constexpr qint64 kWindowSeconds = 60;
    static constexpr qint64 kSettleSeconds = 5;

    struct Count
    {
        qint64 callbacks = 0;
        qint64 lastSecond =
            0; // the window is the kWindowSeconds up to and including this one (Unix time)
    };
    Count advance(const QSqlDatabase &db);

private:
    std::map<qint64, qint64> m_perSecond;
    qint64 m_countedTo = 0; // the server second of the last advance; 0: none yet
};

// The state an overview keeps between refreshes, on its worker thread.
struct OverviewTallies
{
    RecentCallbackCount lastMinute;
    BacklogTally backlog;
};

// Every statement reads what is new or a bounded range of an index, never history: the
// duplicates come from the duplicate watch, advanced by this call (and, on a database it has
// not read yet, by a slice of its first pass; the next refresh goes on from there). `cancel`
// stops that slice between statements. With a mapping the duplicates come from the mapped watch
// on the team's tables instead (domain/mapping/mappedwatch.h); the switch, backlog and instances
// are payops's own either way. Throws db::Error.
OverviewFigures loadOverview(const QSqlDatabase &db, OverviewTallies &tallies, qint64 pointsPerYuan,
                             const std::atomic<bool> *cancel = nullptr,
                             const mapping::Mapping *mapping = nullptr);

// One refresh of the overview page: the database's summary and, when it has a payops schema,
// its figures.
struct OverviewRefresh
{
    DatabaseSummary summary;
    OverviewFigures figures;
};

// The overview page's refresh as a worker's job. The tallies keep counts between refreshes
// and are used on the worker's thread only, one refresh at a time.
// With a mapping, the last hour's activity (payops's orders) is not read: it has no meaning there.
Job<OverviewRefresh> overviewJob(std::shared_ptr<OverviewTallies> tallies,
                                 std::shared_ptr<ActivityTally> activity, qint64 pointsPerYuan,
                                 std::optional<mapping::Mapping> mapping = std::nullopt);

// Milliseconds of a refresh that may go to the watch's first pass.
constexpr int kOverviewFirstPassSliceMs = 1500;

} // namespace payops::console
