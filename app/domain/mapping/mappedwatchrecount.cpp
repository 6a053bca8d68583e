#include "mappedwatchrecount.h"

#include "db/connection.h"

#include <QHash>
#include <QMap>
#include <QSet>
#include <QSqlQuery>

namespace payops::mapping {
namespace {

// Ids per IN list, below MariaDB's in_predicate_conversion_threshold (1,000).
constexpr int kIdsPerStatement = 500;
constexpr int kRowsPerInsert = 1000;

struct Group
{
    QString sideEffect; // the mapping's spelling for its own side effects
    qint64 orderId = 0;
    QString key;
    qint64 live = 0;
    qint64 unit = 0;
};

using GroupId = QString;

GroupId idOf(const Group &group)
{
    return group.sideEffect + QChar(0x1e) + QString::number(group.orderId) + QChar(0x1e) +
           group.key;
}

template <typename Each> void forEachSlice(const QList<qint64> &ids, Each each)
{
    for (qsizetype from = 0; from < ids.size(); from += kIdsPerStatement)
        each(ids.mid(from, kIdsPerStatement));
}

// Every stored group of these orders, of any side effect: the primary key starts with the
// order, so each order is one index range.
QList<Group> storedGroups(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                          const QList<qint64> &orders)
{
    QList<Group> groups;
    forEachSlice(orders, [&](const QList<qint64> &ids) {
        QSqlQuery query = db::exec(db, QStringLiteral("SELECT side_effect, order_id, group_key, "
                                                      "live, unit FROM mapped_watch_group "
                                                      "WHERE order_id IN (%1)")
                                           .arg(db::idList(ids)));
        while (query.next()) {
            QString name = query.value(0).toString();
            const qsizetype at = indexOfEffect(effects, name);
            groups << Group{at < 0 ? name : effects.at(at).sideEffect->name,
                            query.value(1).toLongLong(), query.value(2).toString(),
                            query.value(3).toLongLong(), query.value(4).toLongLong()};
        }
    });
    return groups;
}

// The live groups of these orders in the business tables, through each table's (order, key)
// index, the side effects' statements joined by UNION ALL. The keys come back in one
// collation, whatever each table's columns use; each table groups in its own.
QList<Group> countedGroups(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                           const WatchOrders &orders)
{
    QList<Group> groups;
    forEachSlice(orders.keys(), [&](const QList<qint64> &ids) {
        QStringList selects;
        for (int i = 0; i < effects.size(); ++i) {
            QList<qint64> some;
            for (qint64 id : ids)
                if (orders.value(id) & (1 << i))
                    some << id;
            if (some.isEmpty())
                continue;
            const WatchedEffect &w = effects.at(i);
            selects << QStringLiteral("SELECT %1, %2, CONVERT(%3 USING utf8mb4) COLLATE "
                                      "utf8mb4_bin, COUNT(*), MAX(%4) FROM %5 s WHERE %2 IN (%6) "
                                      "AND %7 GROUP BY %2, %8")
                           .arg(QString::number(i), w.order, w.groupKey, w.value, w.table,
                                db::idList(some), liveRows(db, w), w.keys);
        }
        if (selects.isEmpty())
            return;
        QSqlQuery query = db::exec(db, selects.join(QStringLiteral(" UNION ALL ")));
        while (query.next())
            groups << Group{effects.at(query.value(0).toInt()).sideEffect->name,
                            query.value(1).toLongLong(), query.value(2).toString(),
                            query.value(3).toLongLong(), query.value(4).toLongLong()};
    });
    return groups;
}

// Whether these groups' ids compare in mapped_watch_group's collation as they do here: keys
// of printable ASCII (and the key columns' separator) without trailing spaces, no two of them
// the same when case is ignored.
bool plainlyDistinct(const QList<Group> &groups)
{
    QSet<GroupId> exact;
    QSet<GroupId> folded;
    for (const Group &group : groups) {
        for (QChar c : group.key)
            if ((c.unicode() < 0x21 || c.unicode() > 0x7e) && c.unicode() != 0x1f)
                return false;
        exact.insert(idOf(group));
        folded.insert(idOf(group).toCaseFolded());
    }
    return exact.size() == folded.size();
}

// The stored groups once `rows` are written, without reading them back: each row replaces the
// group of its id or adds one. Only where plainlyDistinct() says the server matches ids so.
QList<Group> afterWriting(const QList<Group> &before, const QList<Group> &rows)
{
    QHash<GroupId, qsizetype> at;
    QList<Group> after = before;
    for (qsizetype i = 0; i < after.size(); ++i)
        at.insert(idOf(after.at(i)), i);
    for (const Group &row : rows) {
        const auto found = at.constFind(idOf(row));
        if (found == at.cend())
            after << row;
        else
            after[*found] = row;
    }
    return after;
}

// Open groups and extra copies by side effect and unit, and the orders with an open group.
struct Sums
{
    QMap<QPair<QString, qint64>, QPair<qint64, qint64>> units;
    QHash<QString, QSet<qint64>> openOrders; // by side effect
    QSet<qint64> openAnywhere;
};

Sums sumsOf(const QList<Group> &groups)
{
    Sums sums;
    for (const Group &group : groups) {
        if (group.live <= 1)
            continue;
        auto &unit = sums.units[{group.sideEffect, group.unit}];
        unit.first += 1;
        unit.second += group.live - 1;
        sums.openOrders[group.sideEffect].insert(group.orderId);
        sums.openAnywhere.insert(group.orderId);
    }
    return sums;
}

// What the groups' change adds to mapped_watch_total, the states' and the summary's counts.
void addToTotals(const QSqlDatabase &db, const QList<WatchedEffect> &effects, const Sums &was,
                 const Sums &now)
{
    QSet<QPair<QString, qint64>> units;
    for (auto it = was.units.cbegin(); it != was.units.cend(); ++it)
        units.insert(it.key());
    for (auto it = now.units.cbegin(); it != now.units.cend(); ++it)
        units.insert(it.key());
    QList<QVariantList> totals;
    for (const auto &unit : std::as_const(units)) {
        const auto a = was.units.value(unit);
        const auto b = now.units.value(unit);
        if (a != b)
            totals << QVariantList{unit.first, unit.second, b.first - a.first, b.second - a.second};
    }
    if (!totals.isEmpty())
        db::execDirect(db, QStringLiteral("INSERT INTO mapped_watch_total (side_effect, unit, "
                                          "open_groups, extra_copies) VALUES %1 ON DUPLICATE "
                                          "KEY UPDATE open_groups = open_groups + "
                                          "VALUES(open_groups), extra_copies = extra_copies + "
                                          "VALUES(extra_copies)")
                               .arg(db::valueRows(db, totals)));
    QStringList cases;
    QStringList names;
    for (const WatchedEffect &w : effects) {
        const QString &name = w.sideEffect->name;
        const qsizetype delta =
            now.openOrders.value(name).size() - was.openOrders.value(name).size();
        if (delta == 0)
            continue;
        cases << QStringLiteral("WHEN %1 THEN %2").arg(w.nameLiteral, QString::number(delta));
        names << w.nameLiteral;
    }
    if (!cases.isEmpty())
        db::execDirect(db, QStringLiteral("UPDATE mapped_watch_state SET open_orders = "
                                          "open_orders + CASE side_effect %1 END WHERE "
                                          "side_effect IN (%2)")
                               .arg(cases.join(QLatin1Char(' ')), names.join(QLatin1Char(','))));
    if (now.openAnywhere.size() != was.openAnywhere.size())
        db::execDirect(db, QStringLiteral("UPDATE mapped_watch_summary SET open_orders = "
                                          "open_orders + %1 WHERE id = 1")
                               .arg(now.openAnywhere.size() - was.openAnywhere.size()));
}

} // namespace

void recountMappedOrders(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                         const WatchOrders &orders, const QStringList &updates)
{
    Q_ASSERT(effects.size() <= kEffectsPerRecount);
    const QList<qint64> ids = orders.keys();
    const QList<Group> before = storedGroups(db, effects, ids);
    const QList<Group> counted = countedGroups(db, effects, orders);
    const auto inScope = [&](const Group &group) {
        const qsizetype at = indexOfEffect(effects, group.sideEffect);
        return at >= 0 && (orders.value(group.orderId) & (1 << at));
    };
    QSet<GroupId> countedIds;
    for (const Group &group : counted)
        countedIds.insert(idOf(group));
    // A group the watch knows that lost its live rows is stored as empty, not left as it was.
    QSet<GroupId> known;
    QList<Group> rows;
    for (const Group &group : before) {
        if (!inScope(group))
            continue;
        known.insert(idOf(group));
        if (!countedIds.contains(idOf(group)))
            rows << Group{group.sideEffect, group.orderId, group.key, 0, group.unit};
    }
    for (const Group &group : counted)
        if (group.live > 1 || known.contains(idOf(group)))
            rows << group;

    db::Transaction transaction(db);
    if (!rows.isEmpty()) {
        QList<QVariantList> values;
        for (const Group &group : std::as_const(rows))
            values << QVariantList{group.sideEffect, group.orderId, group.key,
                                   group.live,       group.unit,    group.live > 1 ? 1 : 0};
        for (qsizetype from = 0; from < values.size(); from += kRowsPerInsert)
            db::execDirect(
                db, QStringLiteral("INSERT INTO mapped_watch_group (side_effect, order_id, "
                                   "group_key, live, unit, is_open) VALUES %1 ON DUPLICATE KEY "
                                   "UPDATE live = VALUES(live), unit = VALUES(unit), is_open = "
                                   "VALUES(is_open)")
                        .arg(db::valueRows(db, values.mid(from, kRowsPerInsert))));
        // What the server stored decides the totals: read back, unless the ids compare
        // there as here, which they do for the usual keys (codes, types, numbers).
        const QList<Group> after = plainlyDistinct(before + rows) ? afterWriting(before, rows)
                                                                  : storedGroups(db, effects, ids);
        addToTotals(db, effects, sumsOf(before), sumsOf(after));
    }
    for (const QString &statement : updates)
        db::execDirect(db, statement);
    transaction.commit();
}

} // namespace payops::mapping
