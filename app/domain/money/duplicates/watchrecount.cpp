#include "watchrecount.h"

#include "db/connection.h"
#include "sideeffecttables.h"

#include <QHash>
#include <QSet>
#include <QSqlQuery>

#include <array>

namespace payops {
namespace {

// Ids per IN list, so that every statement stays short whatever the batch. Below MariaDB's
// in_predicate_conversion_threshold (1,000), past which a list becomes a temporary table.
constexpr int kIdsPerStatement = 500;
constexpr int kRowsPerInsert = 1000;

struct WatchedGroup
{
    qint64 orderId = 0;
    int kind = 0;
    QString key;
    qint64 copies = 0;
    qint64 live = 0;
    qint64 unit = 0;
};

// What some groups add to duplicate_watch_total and to the count of orders with an open group.
struct Contribution
{
    // (kind, unit) -> open groups, extra live copies, superseded copies
    QMap<QPair<int, qint64>, std::array<qint64, 3>> units;
    qint64 openOrders = 0;
};

Contribution contributionOf(const QList<WatchedGroup> &groups)
{
    Contribution contribution;
    QSet<qint64> open;
    for (const WatchedGroup &group : groups) {
        auto &sums = contribution.units[{group.kind, group.unit}];
        if (group.live > 1) {
            sums[0] += 1;
            sums[1] += group.live - 1;
            open.insert(group.orderId);
        }
        sums[2] += group.copies - group.live;
    }
    contribution.openOrders = open.size();
    return contribution;
}

template <typename Each> void forEachSlice(const QList<qint64> &ids, Each each)
{
    for (qsizetype from = 0; from < ids.size(); from += kIdsPerStatement)
        each(db::idList(ids.mid(from, kIdsPerStatement)));
}

QList<WatchedGroup> readWatched(const QSqlDatabase &db, const QList<qint64> &orders)
{
    QList<WatchedGroup> groups;
    forEachSlice(orders, [&](const QString &ids) {
        QSqlQuery query =
            db::exec(db, QStringLiteral("SELECT order_id, kind, group_key, copies, live, unit FROM "
                                        "duplicate_watch_group WHERE order_id IN (%1)")
                             .arg(ids));
        while (query.next())
            groups << WatchedGroup{query.value(0).toLongLong(), query.value(1).toInt(),
                                   query.value(2).toString(),   query.value(3).toLongLong(),
                                   query.value(4).toLongLong(), query.value(5).toLongLong()};
    });
    return groups;
}

// Every group of these orders in one side-effect table, as the duplicates page counts it.
QList<WatchedGroup> recount(const QSqlDatabase &db, const SideEffectTable &table,
                            const QList<qint64> &orders)
{
    QList<WatchedGroup> groups;
    forEachSlice(orders, [&](const QString &ids) {
        QSqlQuery query =
            db::exec(db, QStringLiteral("SELECT s.order_id, s.%1, COUNT(*), SUM(%2), MAX(s.%3) "
                                        "FROM %4 s WHERE s.order_id IN (%5) AND %6 "
                                        "GROUP BY s.order_id, s.%1")
                             .arg(table.keyColumn, table.liveCondition, table.unitColumn,
                                  table.name, ids, table.rowCondition));
        while (query.next())
            groups << WatchedGroup{query.value(0).toLongLong(), table.kindBit,
                                   query.value(1).toString(),   query.value(2).toLongLong(),
                                   query.value(3).toLongLong(), query.value(4).toLongLong()};
    });
    return groups;
}

// Groups compare as the column's case-insensitive collation does (closely enough: the
// totals are taken from what the server stored, not from this).
QString groupId(qint64 order, int kind, const QString &key)
{
    return QStringLiteral("%1/%2/%3")
        .arg(QString::number(order), QString::number(kind), key.toCaseFolded());
}

QList<WatchedGroup> storedRows(const QList<QVariantList> &rows)
{
    QList<WatchedGroup> groups;
    groups.reserve(rows.size());
    for (const QVariantList &row : rows)
        groups << WatchedGroup{row.at(0).toLongLong(), row.at(1).toInt(),
                               row.at(2).toString(),   row.at(3).toLongLong(),
                               row.at(4).toLongLong(), row.at(5).toLongLong()};
    return groups;
}

void upsertGroups(const QSqlDatabase &db, const QList<QVariantList> &rows)
{
    for (qsizetype from = 0; from < rows.size(); from += kRowsPerInsert) {
        db::execDirect(db, QStringLiteral("INSERT INTO duplicate_watch_group (order_id, kind, "
                                          "group_key, copies, live, unit, is_open) VALUES %1 "
                                          "ON DUPLICATE KEY UPDATE copies = VALUES(copies), live = "
                                          "VALUES(live), unit = VALUES(unit), "
                                          "is_open = VALUES(is_open)")
                               .arg(db::valueRows(db, rows.mid(from, kRowsPerInsert))));
    }
}

void addToTotals(const QSqlDatabase &db, const Contribution &before, const Contribution &after)
{
    QList<QVariantList> rows;
    QSet<QPair<int, qint64>> units;
    for (auto it = before.units.cbegin(); it != before.units.cend(); ++it)
        units.insert(it.key());
    for (auto it = after.units.cbegin(); it != after.units.cend(); ++it)
        units.insert(it.key());
    for (const auto &unit : units) {
        const auto was = before.units.value(unit);
        const auto now = after.units.value(unit);
        if (was != now)
            rows << QVariantList{unit.first, unit.second, now[0] - was[0], now[1] - was[1],
                                 now[2] - was[2]};
    }
    if (!rows.isEmpty())
        db::execDirect(
            db, QStringLiteral(
                    "INSERT INTO duplicate_watch_total (kind, unit, open_groups, extra_copies, "
                    "superseded) VALUES %1 "
                    "ON DUPLICATE KEY UPDATE open_groups = open_groups + VALUES(open_groups), "
                    "extra_copies = extra_copies + VALUES(extra_copies), superseded = superseded + "
                    "VALUES(superseded)")
                    .arg(db::valueRows(db, rows)));
    if (after.openOrders != before.openOrders)
        db::execDirect(
            db, QStringLiteral(
                    "UPDATE duplicate_watch_state SET open_orders = open_orders + %1 WHERE id = 1")
                    .arg(after.openOrders - before.openOrders));
}

} // namespace

void recountWatchedOrders(const QSqlDatabase &db, const WatchOrders &orders,
                          const QStringList &stateUpdates)
{
    const QList<qint64> all = orders.keys();
    const QList<WatchedGroup> before = readWatched(db, all);
    QList<WatchedGroup> counted;
    for (const SideEffectTable &table : sideEffectTables()) {
        QList<qint64> some;
        for (auto it = orders.cbegin(); it != orders.cend(); ++it)
            if (it.value() & table.kindBit)
                some << it.key();
        counted << recount(db, table, some);
    }

    // A group is kept from its second copy on. One the watch knows that lost its rows (a
    // merchant's clean-up by DELETE) is counted as empty rather than left as it was; those
    // rows come first, so that a recount of the same group in another spelling wins.
    QSet<QString> countedIds;
    for (const WatchedGroup &group : counted)
        countedIds.insert(groupId(group.orderId, group.kind, group.key));
    QSet<QString> knownIds;
    QList<QVariantList> rows;
    for (const WatchedGroup &group : before) {
        const QString id = groupId(group.orderId, group.kind, group.key);
        knownIds.insert(id);
        if ((orders.value(group.orderId) & group.kind) && !countedIds.contains(id))
            rows << QVariantList{group.orderId, group.kind, group.key, 0, 0, group.unit, 0};
    }
    for (const WatchedGroup &group : counted) {
        if (group.copies > 1 || knownIds.contains(groupId(group.orderId, group.kind, group.key)))
            rows << QVariantList{group.orderId,         group.kind, group.key,
                                 group.copies,          group.live, group.unit,
                                 group.live > 1 ? 1 : 0};
    }

    db::Transaction transaction(db);
    if (!rows.isEmpty()) {
        upsertGroups(db, rows);
        // What the server stored decides the totals. With nothing stored before (most of the
        // first pass), that is exactly the rows just written: the recount's groups are
        // distinct under the column's collation.
        addToTotals(db, contributionOf(before),
                    before.isEmpty() ? contributionOf(storedRows(rows))
                                     : contributionOf(readWatched(db, all)));
    }
    for (const QString &statement : stateUpdates)
        db::execDirect(db, statement);
    transaction.commit();
}

} // namespace payops
