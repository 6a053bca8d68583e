#pragma once

#include "domain/mapping/mappedorders.h"
#include "domain/mapping/mappedwatch.h"
#include "job.h"

#include <QList>

#include <functional>

namespace payops::console {

// The duplicates page on a team's own tables (docs/mapping.md): the mapped watch's figures per
// side effect and the orders with an open group, each with its rows of every side effect.
struct MappedDuplicates
{
    mapping::MappedWatchRefresh watch;
    QList<mapping::MappedOrderEvidence> orders; // lowest id first, at most the job's limit
    bool more = false;                          // more orders have an open group than listed
};

// Orders the page lists: each costs a few reads by the order's indexes.
constexpr int kMappedDuplicateOrders = 500;

// Advances the mapped watch (its first pass to the end, `progress` getting the percent read;
// the page's cancel interrupts it), then reads the open orders' rows. Throws db::Error.
Job<MappedDuplicates> mappedDuplicatesJob(mapping::Mapping mapping,
                                          std::function<void(int percent)> progress = {},
                                          int orderLimit = kMappedDuplicateOrders);

} // namespace payops::console
