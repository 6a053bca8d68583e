#include "mappedwatch.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/duplicates/watchgaps.h"
#include "mappedwatchfeed.h"
#include "mappedwatchrecount.h"
#include "mappedwatchscan.h"
#include "mappedwatchstate.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QSqlQuery>

#include <algorithm>

namespace payops::mapping {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct MappedWatch
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::MappedWatch)
};

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
            QList<WatchedEffect> all = watchedEffects(db, mapping);
            prepareWatchedEffects(db, all);
            const QVariant settled = watchSettledBefore(db);
            for (qsizetype from = 0; from < all.size() && !result.cancelled;
                 from += kEffectsPerRecount)
                result.cancelled = !feedMappedWatch(db, all.mid(from, kEffectsPerRecount), settled,
                                                    options, result.rowsRead);
            const bool scanning = std::any_of(all.cbegin(), all.cend(), [](const WatchedEffect &w) {
                return w.scanState == QLatin1String("SCANNING");
            });
            if (scanning && !result.cancelled && options.firstPassBudgetMs != 0) {
                MappedWatchFigures figures = readMappedWatch(db, mapping);
                for (qsizetype from = 0; from < all.size() && !result.cancelled;
                     from += kEffectsPerRecount)
                    result.cancelled = !scanMappedEffects(db, all.mid(from, kEffectsPerRecount),
                                                          options, clock, figures, from);
            }
            QStringList names;
            for (const WatchedEffect &w : std::as_const(all))
                names << w.nameLiteral;
            if (!names.isEmpty())
                db::execDirect(db, QStringLiteral("UPDATE mapped_watch_state SET refreshed_at = "
                                                  "UTC_TIMESTAMP(3) WHERE side_effect IN (%1)")
                                       .arg(names.join(QLatin1Char(','))));
        });
        result.refreshed = result.why.isEmpty();
    } catch (const db::Error &error) {
        // A replica, where the watch is as the primary last refreshed it.
        if (error.isReadOnlyRefusal()) {
            result.why =
                MappedWatch::tr("as the primary last refreshed them (read from a replica)");
            result.figures = readMappedWatch(db, mapping);
            return result;
        }
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
