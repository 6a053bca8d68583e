#pragma once

#include <QSqlDatabase>

namespace payops::bench {

// Fills a database at level legacy, quickly and in SQL alone, with what the scan and overview
// benchmarks (and the duplicate watch's cost test) measure against: `orders` paid orders, ids
// 1 .. orders, one created every second back from now (order 1 the newest), each with two
// coupons (templates 1 and 2, 1000 and 500 fen) and 100 PAY_REWARD points; 5 % of them (id
// mod 20 = 7) have all three issued twice. So 3.15 side-effect rows per order and 0.15
// duplicate groups. The database must be migrated and hold no orders yet. Throws db::Error.
void generateIncidentOrders(const QSqlDatabase &db, qint64 orders);

// Rows this session has read so far, by the server's own counters (the sum of Handler_read%):
// what a statement costs, deterministically, where a time would depend on the machine's load.
qint64 sessionRowsRead(const QSqlDatabase &db);

} // namespace payops::bench
