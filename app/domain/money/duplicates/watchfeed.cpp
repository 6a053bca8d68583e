#include "watchfeed.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "duplicatewatch.h"
#include "watchgaps.h"
#include "watchrecount.h"

#include <QCoreApplication>
#include <QHash>
#include <QSqlQuery>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct WatchFeed
{
    Q_DECLARE_TR_FUNCTIONS(payops::WatchFeed)
};

struct FeedSource
{
    int id; // duplicate_watch_gap.source
    QString table;
    QString seenColumn; // its watermark in duplicate_watch_state
};

const QList<FeedSource> &feedSources()
{
    static const QList<FeedSource> sources{
        {1, QStringLiteral("user_coupon"), QStringLiteral("coupon_seen_id")},
        {2, QStringLiteral("point_log"), QStringLiteral("point_seen_id")},
        {3, QStringLiteral("compensation"), QStringLiteral("compensation_seen_id")},
    };
    return sources;
}

// The rows of a source matching `where`, each with the order and kinds it asks to recount.
QList<WatchSourceRow> readRows(const QSqlDatabase &db, const FeedSource &source,
                               const QString &where)
{
    QList<WatchSourceRow> rows;
    if (source.table != QLatin1String("compensation")) {
        const int kinds = source.table == QLatin1String("user_coupon") ? CouponBit : PointsBit;
        QSqlQuery query = db::exec(
            db, QStringLiteral("SELECT id, order_id FROM %1 WHERE %2").arg(source.table, where));
        while (query.next())
            rows << WatchSourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(), kinds};
        return rows;
    }
    // A compensation supersedes a copy (in the same transaction as its row): the group is
    // counted again to see that copy stop being live.
    QSqlQuery query = db::exec(
        db,
        QStringLiteral("SELECT id, order_id, target_table FROM compensation WHERE %1").arg(where));
    while (query.next()) {
        const QString target = query.value(2).toString();
        const int kinds = target == QLatin1String("user_coupon") ? CouponBit
                          : target == QLatin1String("point_log") ? PointsBit
                                                                 : CouponBit | PointsBit;
        rows << WatchSourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(), kinds};
    }
    return rows;
}

WatchSource watchSource(const QSqlDatabase &db, const FeedSource &source)
{
    return WatchSource{source.table,
                       QStringLiteral("id"),
                       QStringLiteral("duplicate_watch_gap"),
                       QStringLiteral("source = %1").arg(source.id),
                       QStringLiteral("source"),
                       QString::number(source.id),
                       QStringLiteral("UPDATE duplicate_watch_state SET %1 = %2 WHERE id = 1")
                           .arg(source.seenColumn, QStringLiteral("%1")),
                       [&db, source](const QString &where) { return readRows(db, source, where); }};
}

QHash<int, WatchSourceState> readSourceStates(const QSqlDatabase &db)
{
    const QVariant settled = watchSettledBefore(db);
    QHash<int, WatchSourceState> states;
    QSqlQuery seen =
        db::exec(db, QStringLiteral("SELECT coupon_seen_id, point_seen_id, compensation_seen_id "
                                    "FROM duplicate_watch_state WHERE id = 1"));
    if (!seen.next())
        throw db::Error(
            WatchFeed::tr("the duplicate watch has no state row; run payops migrate again"));
    for (const FeedSource &source : feedSources()) {
        states[source.id].seen = seen.value(source.id - 1).toLongLong();
        states[source.id].gaps = readWatchGaps(db, watchSource(db, source), settled);
    }
    return states;
}

} // namespace

WatchFeedResult feedDuplicateWatch(const QSqlDatabase &db, int batchRows,
                                   const std::atomic<bool> *cancel)
{
    WatchFeedResult result;
    QHash<int, WatchSourceState> states = readSourceStates(db);
    for (bool first = true;; first = false) {
        if (cancel && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        WatchOrders orders;
        QStringList updates;
        bool more = false;
        for (const FeedSource &feed : feedSources()) {
            const WatchSource source = watchSource(db, feed);
            WatchSourceState &state = states[feed.id];
            if (first)
                readLateWatchRows(source, state, orders, updates, result.rowsRead);
            more |= readNewWatchRows(source, state, batchRows, orders, updates, result.rowsRead);
        }
        if (!orders.isEmpty() || !updates.isEmpty())
            recountWatchedOrders(db, orders, updates);
        if (!more)
            return result;
    }
}

} // namespace payops
