#include "mappedduplicates.h"

namespace payops::console {

Job<MappedDuplicates> mappedDuplicatesJob(mapping::Mapping mapping,
                                          std::function<void(int percent)> progress, int orderLimit)
{
    return [mapping = std::move(mapping), progress = std::move(progress),
            orderLimit](const QSqlDatabase &db) {
        MappedDuplicates result;
        WatchRefreshOptions options;
        if (progress)
            options.progress = [&progress](const DuplicateWatchFigures &figures) {
                progress(figures.percentScanned());
            };
        result.watch = mapping::refreshMappedWatch(db, mapping, options);
        // One more than shown tells whether the list is cut.
        QList<qint64> orders = mapping::openMappedOrders(db, mapping, orderLimit + 1);
        result.more = orders.size() > orderLimit;
        if (result.more)
            orders.removeLast();
        for (const qint64 order : std::as_const(orders))
            result.orders << mapping::loadMappedOrderEvidence(db, mapping, order);
        return result;
    };
}

} // namespace payops::console
