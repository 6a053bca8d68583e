#include "mappedwatch.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/duplicates/watchgaps.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>

namespace payops::mapping {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct MappedWatch
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::MappedWatch)
};

// As the watch on payops's own tables (duplicatewatch.cpp): ids below the highest at the first
// refresh read again, and the first pass's statements kept between these durations.
constexpr qint64 kTrailingIds = 1000;
constexpr qint64 kChunkFastMs = 25;
constexpr qint64 kChunkSlowMs = 100;
// Ids per IN list, below MariaDB's in_predicate_conversion_threshold (1,000).
constexpr int kIdsPerStatement = 500;
constexpr int kRowsPerInsert = 1000;

QString column(const QString &name)
{
    return QStringLiteral("s.") + db::quoteIdentifier(name);
}

// One side effect's statements, written once: every name quoted, conditions as the file has them.
struct Watched
{
    const SideEffectMapping *sideEffect = nullptr;
    QString table;        // `db`.`table`
    QString businessName; // database.table, as mapped_compensation names it
    QString id;           // s.`id`
    QString order;        // s.`order`
    QString keys;         // s.`k1`, s.`k2`
    QString groupKey;     // the key columns joined by CHAR(31)
    QString value;        // one copy's value: fen, or points
    QString nameLiteral;  // the side effect's name as an SQL literal
    // Whether compensation has recorded any row of this table yet. Until it has, a row's
    // `live` alone decides, and a recount reads no mapped_compensation at all: on a table
    // payops never compensated, the watch reads what payops's own watch reads. A compensation
    // committed after this was read asks for its orders' recount through its own rows.
    bool compensated = false;
};

bool compensatedYet(const QSqlDatabase &db, const Watched &w)
{
    return db::exec(db,
                    QStringLiteral("SELECT 1 FROM mapped_compensation "
                                   "WHERE business_table = ? LIMIT 1"),
                    {w.businessName})
        .next();
}

Watched watched(const QSqlDatabase &db, const Mapping &mapping, const SideEffectMapping &effect)
{
    Watched w;
    w.sideEffect = &effect;
    w.table = mapping.table(effect.table);
    w.businessName = businessTable(db, mapping, effect);
    w.id = column(effect.id);
    w.order = column(effect.order);
    QStringList keys;
    for (const QString &key : effect.key)
        keys << column(key);
    w.keys = keys.join(QStringLiteral(", "));
    w.groupKey = QStringLiteral("CONCAT_WS(CHAR(31 USING utf8mb4), %1)").arg(w.keys);
    // Yuan become fen in DECIMAL arithmetic, exactly; never through a floating-point value.
    w.value = effect.valueUnit == Unit::Yuan
                  ? QStringLiteral("CAST(CAST(%1 AS DECIMAL(20,2)) * 100 AS SIGNED)")
                        .arg(column(effect.value))
                  : QStringLiteral("CAST(%1 AS SIGNED)").arg(column(effect.value));
    w.nameLiteral = db::valueRows(db, {{effect.name}}).mid(1).chopped(1);
    w.compensated = compensatedYet(db, w);
    return w;
}

// A row counts while its `live` holds and compensation has not recorded it: a reversed points
// row keeps `delta > 0`, so mapped_compensation decides.
QString liveRows(const QSqlDatabase &db, const Watched &w)
{
    if (!w.compensated)
        return QStringLiteral("(%1)").arg(w.sideEffect->live);
    return QStringLiteral("(%1) AND NOT EXISTS (SELECT 1 FROM mapped_compensation c WHERE "
                          "c.business_table = %2 AND c.target_id = %3)")
        .arg(w.sideEffect->live, db::valueRows(db, {{w.businessName}}).mid(1).chopped(1), w.id);
}

struct Group
{
    qint64 orderId = 0;
    QString key;
    qint64 live = 0;
    qint64 unit = 0;
};

template <typename Each> void forEachSlice(const QList<qint64> &ids, Each each)
{
    for (qsizetype from = 0; from < ids.size(); from += kIdsPerStatement)
        each(db::idList(ids.mid(from, kIdsPerStatement)));
}

QList<Group> storedGroups(const QSqlDatabase &db, const Watched &w, const QList<qint64> &orders)
{
    QList<Group> groups;
    forEachSlice(orders, [&](const QString &ids) {
        QSqlQuery query = db::exec(
            db,
            QStringLiteral("SELECT order_id, group_key, live, unit FROM mapped_watch_group "
                           "WHERE side_effect = ? AND order_id IN (%1)")
                .arg(ids),
            {w.sideEffect->name});
        while (query.next())
            groups << Group{query.value(0).toLongLong(), query.value(1).toString(),
                            query.value(2).toLongLong(), query.value(3).toLongLong()};
    });
    return groups;
}

// The live groups of these orders in the business table, through its (order, key) index.
QList<Group> countedGroups(const QSqlDatabase &db, const Watched &w, const QList<qint64> &orders)
{
    QList<Group> groups;
    forEachSlice(orders, [&](const QString &ids) {
        QSqlQuery query = db::exec(
            db, QStringLiteral("SELECT %1, %2, COUNT(*), MAX(%3) FROM %4 s WHERE %1 IN (%5) "
                               "AND %6 GROUP BY %1, %7")
                    .arg(w.order, w.groupKey, w.value, w.table, ids, liveRows(db, w), w.keys));
        while (query.next())
            groups << Group{query.value(0).toLongLong(), query.value(1).toString(),
                            query.value(2).toLongLong(), query.value(3).toLongLong()};
    });
    return groups;
}

// Open groups and extra copies by unit, and the orders with an open group.
struct Sums
{
    QMap<qint64, QPair<qint64, qint64>> units;
    QSet<qint64> openOrders;
};

Sums sumsOf(const QList<Group> &groups)
{
    Sums sums;
    for (const Group &group : groups) {
        if (group.live <= 1)
            continue;
        auto &unit = sums.units[group.unit];
        unit.first += 1;
        unit.second += group.live - 1;
        sums.openOrders.insert(group.orderId);
    }
    return sums;
}

// Orders that gained (+1) or lost (-1) an open group of one side effect, folded into
// mapped_watch_order (side effects open per order) and the count of orders with any, so that
// the count across side effects costs the orders that changed, not every open group.
void countOpenOrders(const QSqlDatabase &db, const QHash<qint64, int> &changes)
{
    QList<qint64> orders;
    QList<QVariantList> rows;
    for (auto it = changes.cbegin(); it != changes.cend(); ++it)
        if (it.value() != 0) {
            orders << it.key();
            rows << QVariantList{it.key(), it.value()};
        }
    if (rows.isEmpty())
        return;
    QHash<qint64, qint64> before;
    forEachSlice(orders, [&](const QString &ids) {
        QSqlQuery query = db::exec(db, QStringLiteral("SELECT order_id, open_effects FROM "
                                                      "mapped_watch_order WHERE order_id IN (%1)")
                                           .arg(ids));
        while (query.next())
            before.insert(query.value(0).toLongLong(), query.value(1).toLongLong());
    });
    qint64 delta = 0;
    for (const QVariantList &row : std::as_const(rows)) {
        const qint64 was = before.value(row.at(0).toLongLong());
        const qint64 now = was + row.at(1).toLongLong();
        delta += (now > 0 ? 1 : 0) - (was > 0 ? 1 : 0);
    }
    for (qsizetype from = 0; from < rows.size(); from += kRowsPerInsert)
        db::execDirect(db, QStringLiteral("INSERT INTO mapped_watch_order (order_id, open_effects) "
                                          "VALUES %1 ON DUPLICATE KEY UPDATE open_effects = "
                                          "open_effects + VALUES(open_effects)")
                               .arg(db::valueRows(db, rows.mid(from, kRowsPerInsert))));
    if (delta != 0)
        db::execDirect(db, QStringLiteral("UPDATE mapped_watch_summary SET open_orders = "
                                          "open_orders + %1 WHERE id = 1")
                               .arg(delta));
}

// Counts the groups of these orders again and folds the difference into mapped_watch_group,
// _total and the state's open_orders, with `updates` in the same transaction: a recount, so
// counting an order twice changes nothing.
void recount(const QSqlDatabase &db, const Watched &w, const QList<qint64> &orders,
             const QStringList &updates)
{
    const QList<Group> before = storedGroups(db, w, orders);
    const QList<Group> counted = countedGroups(db, w, orders);
    QSet<QPair<qint64, QString>> countedIds;
    for (const Group &group : counted)
        countedIds.insert({group.orderId, group.key});
    QSet<QPair<qint64, QString>> known;
    QList<QVariantList> rows;
    for (const Group &group : before) {
        known.insert({group.orderId, group.key});
        if (!countedIds.contains({group.orderId, group.key}))
            rows << QVariantList{w.sideEffect->name, group.orderId, group.key, 0, group.unit, 0};
    }
    for (const Group &group : counted)
        if (group.live > 1 || known.contains({group.orderId, group.key}))
            rows << QVariantList{w.sideEffect->name, group.orderId, group.key,
                                 group.live,         group.unit,    group.live > 1 ? 1 : 0};

    db::Transaction transaction(db);
    if (!rows.isEmpty()) {
        for (qsizetype from = 0; from < rows.size(); from += kRowsPerInsert)
            db::execDirect(
                db, QStringLiteral("INSERT INTO mapped_watch_group (side_effect, order_id, "
                                   "group_key, live, unit, is_open) VALUES %1 ON DUPLICATE KEY "
                                   "UPDATE live = VALUES(live), unit = VALUES(unit), is_open = "
                                   "VALUES(is_open)")
                        .arg(db::valueRows(db, rows.mid(from, kRowsPerInsert))));
        // What the server stored decides the totals.
        const Sums was = sumsOf(before);
        const Sums now = sumsOf(storedGroups(db, w, orders));
        QSet<qint64> units;
        for (auto it = was.units.cbegin(); it != was.units.cend(); ++it)
            units.insert(it.key());
        for (auto it = now.units.cbegin(); it != now.units.cend(); ++it)
            units.insert(it.key());
        QList<QVariantList> totals;
        for (qint64 unit : std::as_const(units)) {
            const auto a = was.units.value(unit);
            const auto b = now.units.value(unit);
            if (a != b)
                totals << QVariantList{w.sideEffect->name, unit, b.first - a.first,
                                       b.second - a.second};
        }
        if (!totals.isEmpty())
            db::execDirect(db, QStringLiteral("INSERT INTO mapped_watch_total (side_effect, unit, "
                                              "open_groups, extra_copies) VALUES %1 ON DUPLICATE "
                                              "KEY UPDATE open_groups = open_groups + "
                                              "VALUES(open_groups), extra_copies = extra_copies + "
                                              "VALUES(extra_copies)")
                                   .arg(db::valueRows(db, totals)));
        if (now.openOrders.size() != was.openOrders.size())
            db::execDirect(db, QStringLiteral("UPDATE mapped_watch_state SET open_orders = "
                                              "open_orders + %1 WHERE side_effect = %2")
                                   .arg(now.openOrders.size() - was.openOrders.size())
                                   .arg(w.nameLiteral));
        QHash<qint64, int> changes;
        for (qint64 order : now.openOrders)
            if (!was.openOrders.contains(order))
                changes[order] += 1;
        for (qint64 order : was.openOrders)
            if (!now.openOrders.contains(order))
                changes[order] -= 1;
        countOpenOrders(db, changes);
    }
    for (const QString &statement : updates)
        db::execDirect(db, statement);
    transaction.commit();
}

qint64 scalarId(const QSqlDatabase &db, const QString &sql)
{
    const QVariant value = db::scalar(db, sql);
    return value.isNull() ? -1 : value.toLongLong();
}

QString stateUpdate(const Watched &w, const QString &set)
{
    return QStringLiteral("UPDATE mapped_watch_state SET %1 WHERE side_effect = %2")
        .arg(set, w.nameLiteral);
}

// Makes the side effect's state row match its definition: a new side effect gets one, a changed
// definition loses what was counted under the old one and starts again.
void adopt(const QSqlDatabase &db, const Mapping &mapping, const Watched &w)
{
    const QString fingerprint = QString::fromLatin1(watchFingerprint(mapping, *w.sideEffect));
    const QVariant stored = db::scalar(
        db, QStringLiteral("SELECT fingerprint FROM mapped_watch_state WHERE side_effect = ?"),
        {w.sideEffect->name});
    if (stored.toString() == fingerprint)
        return;
    db::Transaction transaction(db);
    // What the old definition counted open leaves the count across side effects.
    QHash<qint64, int> closing;
    QSqlQuery open = db::exec(db,
                              QStringLiteral("SELECT DISTINCT order_id FROM mapped_watch_group "
                                             "WHERE side_effect = ? AND is_open = 1"),
                              {w.sideEffect->name});
    while (open.next())
        closing.insert(open.value(0).toLongLong(), -1);
    countOpenOrders(db, closing);
    for (const char *table : {"mapped_watch_group", "mapped_watch_total", "mapped_watch_gap"})
        db::exec(db,
                 QStringLiteral("DELETE FROM %1 WHERE side_effect = ?").arg(QLatin1String(table)),
                 {w.sideEffect->name});
    db::exec(db, QStringLiteral("DELETE FROM mapped_watch_state WHERE side_effect = ?"),
             {w.sideEffect->name});
    db::exec(
        db,
        QStringLiteral("INSERT INTO mapped_watch_state (side_effect, fingerprint) VALUES (?, ?)"),
        {w.sideEffect->name, fingerprint});
    transaction.commit();
}

// The first refresh of a side effect: watermarks a little below the highest ids, and the range
// of orders its first pass walks.
void initialise(const QSqlDatabase &db, const Watched &w)
{
    const qint64 seen = std::max<qint64>(
        0,
        scalarId(db, QStringLiteral("SELECT MAX(%1) FROM %2 s").arg(w.id, w.table)) - kTrailingIds);
    const qint64 compensationSeen = std::max<qint64>(
        0, scalarId(db, QStringLiteral("SELECT MAX(id) FROM mapped_compensation")) - kTrailingIds);
    const qint64 start =
        scalarId(db, QStringLiteral("SELECT MIN(%1) FROM %2 s").arg(w.order, w.table));
    const qint64 end =
        scalarId(db, QStringLiteral("SELECT MAX(%1) FROM %2 s").arg(w.order, w.table));
    db::execDirect(db, stateUpdate(w, QStringLiteral("seen_id = %1, compensation_seen_id = %2, "
                                                     "scan_state = 'SCANNING', scan_start = %3, "
                                                     "scan_cursor = %3, scan_end = %4, "
                                                     "scan_started_at = UTC_TIMESTAMP(3)")
                                          .arg(seen)
                                          .arg(compensationSeen)
                                          .arg(std::max<qint64>(start, 0))
                                          .arg(std::max<qint64>(end, 0))));
}

// The side effect's table (source 1) and mapped_compensation (source 2), as the shared
// read-past-a-watermark code reads them.
QList<WatchSource> sourcesOf(const QSqlDatabase &db, const Watched &w)
{
    const auto gapKey = [&w](int source) {
        return QStringLiteral("side_effect = %1 AND source = %2").arg(w.nameLiteral).arg(source);
    };
    WatchSource table{
        w.businessName,
        w.id,
        QStringLiteral("mapped_watch_gap"),
        gapKey(1),
        QStringLiteral("side_effect, source"),
        w.nameLiteral + QStringLiteral(", 1"),
        stateUpdate(w, QStringLiteral("seen_id = %1")),
        [&db, w](const QString &where) {
            QList<WatchSourceRow> rows;
            QSqlQuery query = db::exec(db, QStringLiteral("SELECT %1, %2 FROM %3 s WHERE %4")
                                               .arg(w.id, w.order, w.table, where));
            while (query.next())
                rows << WatchSourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(), 1};
            return rows;
        }};
    // Every compensation row is read (its ids are one sequence, so gaps are real ones); only
    // those on this side effect's table ask for a recount.
    WatchSource compensation{
        QStringLiteral("mapped_compensation"),
        QStringLiteral("id"),
        QStringLiteral("mapped_watch_gap"),
        gapKey(2),
        QStringLiteral("side_effect, source"),
        w.nameLiteral + QStringLiteral(", 2"),
        stateUpdate(w, QStringLiteral("compensation_seen_id = %1")),
        [&db, w](const QString &where) {
            QList<WatchSourceRow> rows;
            QSqlQuery query = db::exec(
                db,
                QStringLiteral("SELECT id, order_id, business_table = ? FROM mapped_compensation "
                               "WHERE %1")
                    .arg(where),
                {w.businessName});
            while (query.next())
                rows << WatchSourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(),
                                       query.value(2).toBool() ? 1 : 0};
            return rows;
        }};
    return {table, compensation};
}

// Late rows, then rows past the watermarks, batch by batch. Returns false when cancelled.
bool feed(const QSqlDatabase &db, const Watched &w, const QVariant &settled,
          const WatchRefreshOptions &options, qint64 &rowsRead)
{
    QList<WatchSource> sources = sourcesOf(db, w);
    QList<WatchSourceState> states;
    QSqlQuery seen = db::exec(db,
                              QStringLiteral("SELECT seen_id, compensation_seen_id FROM "
                                             "mapped_watch_state WHERE side_effect = ?"),
                              {w.sideEffect->name});
    seen.next();
    for (int i = 0; i < sources.size(); ++i)
        states << WatchSourceState{seen.value(i).toLongLong(),
                                   readWatchGaps(db, sources[i], settled)};
    // A table's first compensation may commit after the refresh began: its rows, read below,
    // ask for a recount that must then read mapped_compensation, or the reversed copies would
    // count as live and the watermark pass them for good. Asked again before each recount until
    // the table has one.
    Watched mine = w;
    for (bool first = true;; first = false) {
        if (options.cancel && options.cancel->load())
            return false;
        WatchOrders orders;
        QStringList updates;
        bool more = false;
        for (int i = 0; i < sources.size(); ++i) {
            if (first)
                readLateWatchRows(sources[i], states[i], orders, updates, rowsRead);
            more |= readNewWatchRows(sources[i], states[i], options.batchRows, orders, updates,
                                     rowsRead);
        }
        if (!mine.compensated && !orders.isEmpty())
            mine.compensated = compensatedYet(db, mine);
        if (!orders.isEmpty() || !updates.isEmpty())
            recount(db, mine, orders.keys(), updates);
        if (!more)
            return true;
    }
}

// The first pass of one side effect from its persisted cursor, as the watch on payops's own
// tables walks its orders: the (order, key) index alone over a range of orders for groups of
// more than one row, a recount of just those, and the cursor moved in the same transaction.
// Returns false when cancelled.
bool scan(const QSqlDatabase &db, const Watched &w, const WatchRefreshOptions &options,
          const QElapsedTimer &clock, MappedWatchFigures &figures, MappedSideEffectFigures &mine)
{
    qint64 chunk = std::max<qint64>(options.firstPassChunk, 1);
    while (mine.scanCursor <= mine.scanEnd) {
        if (options.cancel && options.cancel->load())
            return false;
        if (options.firstPassBudgetMs >= 0 && clock.elapsed() >= options.firstPassBudgetMs)
            return true;
        const qint64 from = mine.scanCursor;
        const qint64 to = from + chunk; // exclusive
        QElapsedTimer statement;
        statement.start();
        QList<qint64> candidates;
        QSqlQuery query = db::exec(
            db, QStringLiteral("SELECT DISTINCT %1 FROM (SELECT %1 FROM %2 s WHERE %1 >= %3 AND "
                               "%1 < %4 GROUP BY %1, %5 HAVING COUNT(*) > 1) s")
                    .arg(w.order, w.table)
                    .arg(from)
                    .arg(to)
                    .arg(w.keys));
        while (query.next())
            candidates << query.value(0).toLongLong();
        qint64 next = scalarId(db, QStringLiteral("SELECT MIN(%1) FROM %2 s WHERE %1 >= %3")
                                       .arg(w.order, w.table)
                                       .arg(to));
        const qint64 elapsed = statement.elapsed();
        if (next < 0 || next > mine.scanEnd)
            next = mine.scanEnd + 1;
        QString set = QStringLiteral("scan_cursor = %1").arg(next);
        if (next > mine.scanEnd)
            set += QStringLiteral(", scan_state = 'DONE', scan_finished_at = UTC_TIMESTAMP(3)");
        recount(db, w, candidates, {stateUpdate(w, set)});
        mine.scanCursor = next;
        if (next > mine.scanEnd)
            mine.scanState = QStringLiteral("DONE");
        if (elapsed < kChunkFastMs)
            chunk = std::min<qint64>(chunk * 2, qint64(1) << 24);
        else if (elapsed > kChunkSlowMs)
            chunk = std::max<qint64>(chunk / 2, 100);
        if (options.progress)
            options.progress(figures.progress());
    }
    return true;
}

} // namespace

qint64 MappedSideEffectFigures::valueFen(qint64 pointsPerYuan) const
{
    if (unit == Unit::Points && pointsPerYuan <= 0)
        return 0;
    qint64 sum = 0;
    for (const auto &[value, copies] : extraByValue)
        sum += copies * (unit == Unit::Points ? value * 100 / pointsPerYuan : value);
    return sum;
}

bool MappedWatchFigures::complete() const
{
    return std::all_of(sideEffects.cbegin(), sideEffects.cend(),
                       [](const MappedSideEffectFigures &f) { return f.complete(); });
}

DuplicateWatchFigures MappedWatchFigures::progress() const
{
    DuplicateWatchFigures figures;
    figures.scanState = complete() ? QStringLiteral("DONE") : QStringLiteral("SCANNING");
    for (const MappedSideEffectFigures &f : sideEffects) {
        figures.scanEnd += std::max<qint64>(f.scanEnd - f.scanStart + 1, 0);
        figures.scanCursor += f.complete() ? std::max<qint64>(f.scanEnd - f.scanStart + 1, 0)
                                           : std::max<qint64>(f.scanCursor - f.scanStart, 0);
    }
    figures.scanEnd -= 1; // scanStart 0: the range [0, total - 1]
    return figures;
}

int MappedWatchFigures::percentScanned() const
{
    return progress().percentScanned();
}

qint64 MappedWatchFigures::groups() const
{
    qint64 sum = 0;
    for (const MappedSideEffectFigures &f : sideEffects)
        sum += f.openGroups;
    return sum;
}

qint64 MappedWatchFigures::extraCopies() const
{
    qint64 sum = 0;
    for (const MappedSideEffectFigures &f : sideEffects)
        sum += f.extraCopies;
    return sum;
}

qint64 MappedWatchFigures::valueFen(qint64 pointsPerYuan) const
{
    qint64 sum = 0;
    for (const MappedSideEffectFigures &f : sideEffects)
        sum += f.valueFen(pointsPerYuan);
    return sum;
}

QByteArray watchFingerprint(const Mapping &mapping, const SideEffectMapping &sideEffect)
{
    const QStringList parts{mapping.table(sideEffect.table),
                            sideEffect.id,
                            sideEffect.order,
                            sideEffect.key.join(QLatin1Char('\x1f')),
                            sideEffect.live,
                            sideEffect.value,
                            unitName(sideEffect.valueUnit)};
    return QCryptographicHash::hash(parts.join(QLatin1Char('\x1e')).toUtf8(),
                                    QCryptographicHash::Sha256)
        .toHex();
}

namespace {

qsizetype indexOfName(const QStringList &names, const QString &name)
{
    for (qsizetype i = 0; i < names.size(); ++i)
        if (names.at(i).compare(name, Qt::CaseInsensitive) == 0)
            return i;
    return -1;
}

} // namespace

MappedWatchFigures readMappedWatch(const QSqlDatabase &db, const Mapping &mapping)
{
    MappedWatchFigures figures;
    QStringList names;
    for (const SideEffectMapping &effect : mapping.sideEffects) {
        MappedSideEffectFigures f;
        f.name = effect.name;
        f.unit = effect.valueUnit;
        f.scanState = QStringLiteral("NEW");
        figures.sideEffects << f;
        names << effect.name;
    }
    if (names.isEmpty())
        return figures;
    QVariantList nameValues;
    for (const QString &name : names)
        nameValues << name;
    // One read view for the totals and the states. A state row of another definition is a
    // side effect whose next refresh starts again: it reads as NEW.
    const QString in = db::valueRows(db, {nameValues}); // ('a', 'b')
    QSqlQuery query = db::exec(
        db, QStringLiteral("SELECT s.side_effect, s.fingerprint, s.scan_state, s.scan_start, "
                           "s.scan_cursor, s.scan_end, s.open_orders, CAST(s.refreshed_at AS "
                           "CHAR), t.unit, t.open_groups, t.extra_copies, "
                           "(SELECT open_orders FROM mapped_watch_summary WHERE id = 1) "
                           "FROM mapped_watch_state s LEFT JOIN mapped_watch_total t "
                           "ON t.side_effect = s.side_effect WHERE s.side_effect IN %1")
                .arg(in));
    QStringList refreshed;
    while (query.next()) {
        // The column compares names without case, as the server matched them.
        const qsizetype at = indexOfName(names, query.value(0).toString());
        if (at < 0)
            continue;
        const SideEffectMapping &effect = mapping.sideEffects.at(at);
        if (query.value(1).toByteArray() != watchFingerprint(mapping, effect))
            continue;
        MappedSideEffectFigures &f = figures.sideEffects[at];
        figures.openOrders = query.value(11).toLongLong();
        if (f.refreshedAt.isEmpty()) {
            f.scanState = query.value(2).toString();
            f.scanStart = query.value(3).toLongLong();
            f.scanCursor = query.value(4).toLongLong();
            f.scanEnd = query.value(5).toLongLong();
            f.openOrders = query.value(6).toLongLong();
            f.refreshedAt = query.value(7).toString();
        }
        if (query.value(8).isNull())
            continue;
        f.openGroups += query.value(9).toLongLong();
        f.extraCopies += query.value(10).toLongLong();
        if (query.value(10).toLongLong() != 0)
            f.extraByValue << qMakePair(query.value(8).toLongLong(), query.value(10).toLongLong());
    }
    for (const MappedSideEffectFigures &f : std::as_const(figures.sideEffects)) {
        if (f.refreshedAt.isEmpty())
            return figures; // refreshedAt stays empty: not every side effect was refreshed
        refreshed << f.refreshedAt;
    }
    figures.refreshedAt = *std::min_element(refreshed.cbegin(), refreshed.cend());
    return figures;
}

QList<qint64> openMappedOrders(const QSqlDatabase &db, const Mapping &mapping, int limit)
{
    QList<qint64> orders;
    // Per side effect an index range of (side_effect, is_open, order_id); merged here.
    for (const SideEffectMapping &effect : mapping.sideEffects) {
        QSqlQuery query = db::exec(
            db,
            QStringLiteral("SELECT g.order_id FROM mapped_watch_group g JOIN "
                           "mapped_watch_state s ON s.side_effect = g.side_effect "
                           "AND s.fingerprint = ? WHERE g.side_effect = ? AND g.is_open = 1 "
                           "ORDER BY g.order_id LIMIT %1")
                .arg(limit),
            {QString::fromLatin1(watchFingerprint(mapping, effect)), effect.name});
        while (query.next())
            orders << query.value(0).toLongLong();
    }
    std::sort(orders.begin(), orders.end());
    orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
    return orders.mid(0, limit);
}

MappedWatchRefresh refreshMappedWatch(const QSqlDatabase &db, const Mapping &mapping,
                                      const WatchRefreshOptions &options)
{
    MappedWatchRefresh result;
    QElapsedTimer clock;
    clock.start();
    try {
        result.why = underWatchLock(db, options.lockWaitSeconds, [&] {
            QList<Watched> all;
            for (const SideEffectMapping &effect : mapping.sideEffects) {
                all << watched(db, mapping, effect);
                adopt(db, mapping, all.last());
            }
            const QVariant settled = watchSettledBefore(db);
            for (const Watched &w : std::as_const(all)) {
                if (db::scalar(db,
                               QStringLiteral("SELECT scan_state FROM mapped_watch_state WHERE "
                                              "side_effect = ?"),
                               {w.sideEffect->name})
                        .toString() == QLatin1String("NEW"))
                    initialise(db, w);
                if (!feed(db, w, settled, options, result.rowsRead)) {
                    result.cancelled = true;
                    break;
                }
            }
            MappedWatchFigures figures = readMappedWatch(db, mapping);
            for (int i = 0; i < all.size() && !result.cancelled && options.firstPassBudgetMs != 0;
                 ++i) {
                MappedSideEffectFigures &mine = figures.sideEffects[i];
                if (mine.scanState == QLatin1String("SCANNING"))
                    result.cancelled = !scan(db, all.at(i), options, clock, figures, mine);
            }
            for (const Watched &w : std::as_const(all))
                db::execDirect(db,
                               stateUpdate(w, QStringLiteral("refreshed_at = UTC_TIMESTAMP(3)")));
        });
        result.refreshed = result.why.isEmpty();
    } catch (const db::Error &error) {
        if (error.serverCode() != 1146) // no such table
            throw;
        result.missing = true;
        result.why = MappedWatch::tr(
            "this database has no duplicate watch for mapped tables yet: run payops migrate "
            "(migration 0020) with an account that may change the schema");
        return result;
    }
    result.figures = readMappedWatch(db, mapping);
    return result;
}

} // namespace payops::mapping
