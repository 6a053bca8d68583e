#pragma once

#include "domain/money/duplicates/watchgaps.h"
#include "mappedwatchstate.h"

#include <QList>
#include <QSqlDatabase>
#include <QStringList>

// The mapped duplicate watch's recount (internal to mappedwatch*.cpp).

namespace payops::mapping {

// Side effects one recount takes at most: an order's kinds in WatchOrders are a bit each.
constexpr int kEffectsPerRecount = 30;

// Counts the groups of these orders again, each in the side effects its bits name (bit i:
// effects[i]), and folds the difference into mapped_watch_group, _total, the states' and the
// summary's open orders, with `updates` in the same transaction: a recount, so counting an
// order twice changes nothing. One statement per step whatever the number of side effects.
void recountMappedOrders(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                         const WatchOrders &orders, const QStringList &updates);

} // namespace payops::mapping
