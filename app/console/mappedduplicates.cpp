#include "mappedduplicates.h"

#include "db/connection.h"

#include <QSet>
#include <QSqlQuery>

#include <algorithm>
#include <limits>

namespace payops::console {

namespace {

QString column(const QString &name)
{
    return QStringLiteral("s.") + db::quoteIdentifier(name);
}

struct EffectPage
{
    QList<MappedGroup> groups;
    bool cut = false; // a full page came back: its last order may go on past it
};

// One side effect's open groups above `fromOrderId`, at most `limit`. The rows are read
// through a derived table of the side-effect table alone, so that the mapping's `live` names
// its columns without meeting payops's; the server merges it, and each open group's rows come
// by the (order, key...) index. The open groups come by idx_mapped_watch_open, whose order
// (with the primary key InnoDB appends: order, then group key) is the GROUP BY's: the groups
// stream in order and the LIMIT stops the read, and closed groups are never read. A small
// table would otherwise be read by its primary key, closed groups and all.
EffectPage effectPage(const QSqlDatabase &db, const mapping::Mapping &mapping, int effectIndex,
                      const MappedDuplicateFilter &filter, qint64 fromOrderId, int limit)
{
    const mapping::SideEffectMapping &effect = mapping.sideEffects.at(effectIndex);
    QStringList keys;
    for (const QString &key : effect.key)
        keys << column(key);
    const QString groupKey = keys.isEmpty()
                                 ? QStringLiteral("''")
                                 : QStringLiteral("CONCAT_WS(CHAR(31 USING utf8mb4), %1)")
                                       .arg(keys.join(QStringLiteral(", ")));
    QVariantList values{QString::fromLatin1(mapping::watchFingerprint(mapping, effect)),
                        mapping::businessTable(db, mapping, effect), effect.name, fromOrderId};
    // On the group, never on its rows: a filter must not split a group into fewer copies.
    QString having;
    if (filter.userId > 0) {
        having += QStringLiteral(" AND MAX(r.row_user = ?) = 1");
        values << filter.userId;
    }
    if (!filter.window.isAll()) {
        having += QStringLiteral(" AND MAX(r.row_created) >= ?");
        values << filter.window.fromText();
    }
    const QString sql =
        QStringLiteral(
            "SELECT g.order_id, g.group_key, g.unit, COUNT(*), MIN(r.row_user), "
            "CAST(MIN(r.row_created) AS CHAR), CAST(MAX(r.row_created) AS CHAR) "
            "FROM mapped_watch_group g FORCE INDEX (idx_mapped_watch_open) "
            "JOIN mapped_watch_state st ON st.side_effect = g.side_effect AND st.fingerprint = ? "
            "JOIN (SELECT %1 AS row_order, CONVERT(%2 USING utf8mb4) AS row_key, %3 AS row_user, "
            "             %4 AS row_created "
            "      FROM %5 s WHERE (%6) AND NOT EXISTS (SELECT 1 FROM mapped_compensation c "
            "      WHERE c.business_table = ? AND c.target_id = %7)) r "
            "  ON r.row_order = g.order_id AND r.row_key = g.group_key "
            "WHERE g.side_effect = ? AND g.is_open = 1 AND g.order_id > ? "
            "GROUP BY g.order_id, g.group_key HAVING COUNT(*) > 1%8 "
            "ORDER BY g.order_id, g.group_key LIMIT %9")
            .arg(column(effect.order), groupKey, column(effect.user), column(effect.createdAt),
                 mapping.table(effect.table), effect.live, column(effect.id), having,
                 QString::number(limit));
    QSqlQuery query = db::exec(db, sql, values);
    EffectPage page;
    while (query.next()) {
        MappedGroup group;
        group.sideEffect = effect.name;
        group.orderId = query.value(0).toLongLong();
        group.key = effect.key.isEmpty()
                        ? QStringList()
                        : query.value(1).toString().split(QChar(31), Qt::KeepEmptyParts);
        group.unit = query.value(2).toLongLong();
        group.live = query.value(3).toInt();
        group.userId = query.value(4).toLongLong();
        group.firstMicros = microsFromSql(query.value(5));
        group.lastMicros = microsFromSql(query.value(6));
        group.points = effect.valueUnit == mapping::Unit::Points;
        page.groups << group;
    }
    page.cut = page.groups.size() >= limit;
    return page;
}

} // namespace

MappedGroupPage loadMappedGroupPage(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                    const MappedDuplicateFilter &filter, qint64 fromOrderId,
                                    int orderLimit)
{
    // Each side effect reads up to orderLimit groups: at least as many orders as a page holds,
    // unless it has fewer. An order one of them was cut in is left to the next page.
    QList<MappedGroup> all;
    qint64 cut = std::numeric_limits<qint64>::max();
    for (int i = 0; i < mapping.sideEffects.size(); ++i) {
        if (!filter.sideEffect.isEmpty() && mapping.sideEffects.at(i).name != filter.sideEffect)
            continue;
        const EffectPage page = effectPage(db, mapping, i, filter, fromOrderId, orderLimit);
        all << page.groups;
        if (page.cut)
            cut = std::min(cut, page.groups.last().orderId);
    }
    std::stable_sort(all.begin(), all.end(), [](const MappedGroup &a, const MappedGroup &b) {
        return a.orderId < b.orderId;
    });
    MappedGroupPage page;
    page.atEnd = cut == std::numeric_limits<qint64>::max();
    QList<MappedGroup> kept;
    for (const MappedGroup &group : std::as_const(all))
        if (group.orderId < cut)
            kept << group;
    // One order with more open groups of a side effect than a page holds (never seen) is
    // shown with those read rather than never.
    if (kept.isEmpty())
        for (const MappedGroup &group : std::as_const(all))
            if (group.orderId == cut)
                kept << group;
    QSet<qint64> orders;
    for (const MappedGroup &group : std::as_const(kept)) {
        if (!orders.contains(group.orderId)) {
            if (orders.size() == orderLimit) {
                page.atEnd = false;
                break;
            }
            orders.insert(group.orderId);
        }
        page.groups << group;
    }
    page.nextOrderId = page.groups.isEmpty() ? fromOrderId : page.groups.last().orderId;
    return page;
}

Job<MappedDuplicates> mappedDuplicatesJob(mapping::Mapping mapping, MappedDuplicateFilter filter,
                                          std::function<void(int percent)> progress, int orderLimit)
{
    return [mapping = std::move(mapping), filter = std::move(filter),
            progress = std::move(progress), orderLimit](const QSqlDatabase &db) {
        MappedDuplicates result;
        WatchRefreshOptions options;
        if (progress)
            options.progress = [&progress](const DuplicateWatchFigures &figures) {
                progress(figures.percentScanned());
            };
        result.watch = mapping::refreshMappedWatch(db, mapping, options);
        const MappedGroupPage page = loadMappedGroupPage(db, mapping, filter, 0, orderLimit);
        result.groups = page.groups;
        result.more = !page.atEnd;
        QList<qint64> orders;
        for (const MappedGroup &group : page.groups)
            if (orders.isEmpty() || orders.last() != group.orderId)
                orders << group.orderId;
        for (const qint64 order : std::as_const(orders))
            result.orders << mapping::loadMappedOrderEvidence(db, mapping, order);
        return result;
    };
}

} // namespace payops::console
