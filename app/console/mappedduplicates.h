#pragma once

#include "domain/mapping/mappedorders.h"
#include "domain/mapping/mappedwatch.h"
#include "job.h"
#include "sqltime.h"

#include <QList>
#include <QStringList>

#include <functional>

namespace payops::console {

// The duplicates page's filters on a team's tables. They go into the query over the mapped
// watch's open groups (each group's rows read again through the side-effect table's
// (order, key...) index), never over the tables' history.
struct MappedDuplicateFilter
{
    TimeWindow window;  // on the group's latest live copy, by the side effect's created_at
    QString sideEffect; // a side effect's name; empty: every one
    qint64 userId = 0;  // a group any of whose live copies is this user's; 0: every user
};

// One open group: an order's live copies of one side effect with one key, those compensation
// has not taken back. Its first copy stays; the others are extra.
struct MappedGroup
{
    QString sideEffect;
    qint64 orderId = 0;
    qint64 userId = 0;
    QStringList key;     // the key columns' values, in the mapping's order
    int live = 0;        // live copies
    qint64 unit = 0;     // one copy's value, the group's largest: fen, or points
    bool points = false; // unit is in points
    qint64 firstMicros = 0;
    qint64 lastMicros = 0;

    int extra() const { return live > 1 ? live - 1 : 0; }
};

// Keyset paging by order: a page holds whole orders, lowest first.
struct MappedGroupPage
{
    QList<MappedGroup> groups; // by order, then side effect as the mapping lists them, then key
    qint64 nextOrderId = 0;    // the next page starts after it
    bool atEnd = false;
};

// The open groups the filter shows of at most `orderLimit` orders above `fromOrderId`, as the
// mapped watch last counted them (refresh it first). Throws db::Error.
MappedGroupPage loadMappedGroupPage(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                    const MappedDuplicateFilter &filter, qint64 fromOrderId,
                                    int orderLimit);

// The duplicates page on a team's own tables (docs/mapping.md): the mapped watch's figures per
// side effect, the open groups the filter shows, and each listed order's rows of every side
// effect.
struct MappedDuplicates
{
    mapping::MappedWatchRefresh watch;
    QList<MappedGroup> groups;                  // of the listed orders
    QList<mapping::MappedOrderEvidence> orders; // lowest id first, at most the job's limit
    bool more = false;                          // more orders have an open group than listed
};

// Orders the page lists: each costs a few reads by the order's indexes.
constexpr int kMappedDuplicateOrders = 500;

// Advances the mapped watch (its first pass to the end, `progress` getting the percent read;
// the page's cancel interrupts it), then reads the filter's open groups and their orders'
// rows. Throws db::Error.
Job<MappedDuplicates> mappedDuplicatesJob(mapping::Mapping mapping, MappedDuplicateFilter filter,
                                          std::function<void(int percent)> progress = {},
                                          int orderLimit = kMappedDuplicateOrders);

} // namespace payops::console
