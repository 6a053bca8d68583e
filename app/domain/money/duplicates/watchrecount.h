#pragma once

#include "sideeffecttables.h"
#include "watchgaps.h"

#include <QMap>
#include <QSqlDatabase>
#include <QStringList>

namespace payops {

// Counts the groups of these orders again from user_coupon and point_log, through their
// (order_id, key) indexes, and folds the difference into duplicate_watch_group and its totals:
// a recount, not an increment, so counting an order twice changes nothing. The side-effect
// tables are read by plain autocommit SELECTs (each its own short read view, no row locks);
// the watch's own rows and `stateUpdates` (statements on duplicate_watch_state or _gap that
// must land with the counts, such as a watermark or the first pass's cursor) are written in
// one transaction. The caller holds the watch's named lock. Throws db::Error.
void recountWatchedOrders(const QSqlDatabase &db, const WatchOrders &orders,
                          const QStringList &stateUpdates);

} // namespace payops
