#pragma once

#include "domain/money/duplicates/duplicatewatch.h"
#include "mappedwatch.h"
#include "mappedwatchstate.h"

#include <QElapsedTimer>
#include <QList>
#include <QSqlDatabase>

// The mapped duplicate watch's first pass (internal to mappedwatch*.cpp).

namespace payops::mapping {

// The first passes of these side effects (at most kEffectsPerRecount) from their persisted
// cursors, walked together as the watch on payops's own tables walks its two tables: per
// range of orders, the (order, key) index alone of each table for groups of more than one row,
// one recount of just those orders, and the cursors moved in the same transaction. The
// side effects' figures are figures.sideEffects[first ...], kept up to date for
// options.progress. Returns false when cancelled.
bool scanMappedEffects(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                       const WatchRefreshOptions &options, const QElapsedTimer &clock,
                       MappedWatchFigures &figures, qsizetype first);

} // namespace payops::mapping
