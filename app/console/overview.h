#pragma once

#include "duplicatescan.h"
#include "domain/unmatchedcallbacks.h"

#include <QSqlDatabase>
#include <QString>

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
    DuplicateTotals duplicates;
    qint64 instancesAlive = 0;
    qint64 instancesKnown = 0;
    qint64 unsafeInstancesAlive = 0;
};

// Throws db::Error.
OverviewFigures loadOverview(const QSqlDatabase &db, qint64 pointsPerYuan, int aliveSeconds);

} // namespace payops::console
