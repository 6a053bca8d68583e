#pragma once

#include "domain/money/duplicates/duplicatewatch.h"
#include "mappedwatchstate.h"

#include <QList>
#include <QSqlDatabase>
#include <QVariant>

// The mapped duplicate watch's incremental step (internal to mappedwatch*.cpp).

namespace payops::mapping {

// Late rows, then rows past the watermarks, batch by batch, of every side effect (at most
// kEffectsPerRecount) and of mapped_compensation, each batch recounted in one step across the
// side effects. A source whose highest id is its watermark is not read. Adds the business
// and mapped_compensation rows read to `rowsRead`. Returns false when cancelled.
bool feedMappedWatch(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                     const QVariant &settled, const WatchRefreshOptions &options, qint64 &rowsRead);

} // namespace payops::mapping
