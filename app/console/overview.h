#pragma once

#include "activitytally.h"
#include "duplicatescan.h"
#include "domain/unmatchedcallbacks.h"

#include <QSqlDatabase>
#include <QString>

#include <atomic>

namespace payops::console {

// The figures of the overview page, read in one job.
struct OverviewFigures
{
    QString mode;             // NORMAL or RECORD_ONLY, from callback_switch
    qint64 switchVersion = 0;
    QString switchReason;
    QString switchChangedBy;
    qint64 switchChangedMicros = 0;
    qint64 callbacksLastMinute = 0;
    qint64 backlog = 0;       // callbacks recorded in RECORD_ONLY mode, not yet processed
    UnmatchedCount unmatched; // callbacks that arrived before their order
    DuplicateTotals duplicates; // from the duplicate watch (domain/duplicatewatch.h)
    bool duplicatesWatched = true;  // false: the database has no watch yet (see duplicatesNote)
    bool duplicatesComplete = true; // false while the watch's first pass is still reading history
    int duplicatesPercent = 100;    // how much of it is read
    QString duplicatesNote;         // why the watch was not advanced by this refresh, if it was not
    qint64 instancesAlive = 0;
    qint64 instancesKnown = 0;
    qint64 unsafeInstancesAlive = 0;
    // Orders created and transitions in the last kRecentActivitySeconds: filled by the caller
    // from its ActivityTally, which keeps counts between refreshes.
    RecentActivity recent;
};

constexpr qint64 kRecentActivitySeconds = 3600;

// Every statement reads what is new or a bounded range of an index, never history: the
// duplicates come from the duplicate watch, advanced by this call (and, on a database it has
// not read yet, by a slice of its first pass; the next refresh goes on from there). `cancel`
// stops that slice between statements. Throws db::Error.
OverviewFigures loadOverview(const QSqlDatabase &db, qint64 pointsPerYuan, int aliveSeconds,
                             const std::atomic<bool> *cancel = nullptr);

// Milliseconds of a refresh that may go to the watch's first pass.
constexpr int kOverviewFirstPassSliceMs = 1500;

} // namespace payops::console
