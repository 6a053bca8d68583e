#include "overview.h"

#include "db/connection.h"
#include "domain/callback/instanceliveness.h"
#include "domain/mapping/mappedwatch.h"
#include "domain/money/duplicates/duplicatewatch.h"

#include <QSqlQuery>

#include <algorithm>

namespace payops::console {

namespace {

DuplicateTotals totalsOf(const DuplicateWatchFigures &watch, qint64 pointsPerYuan)
{
    DuplicateTotals totals;
    totals.couponGroups = watch.groups(CouponBit);
    totals.couponExtra = watch.extraCopies(CouponBit);
    totals.couponFen = watch.couponFen();
    totals.pointGroups = watch.groups(PointsBit);
    totals.pointExtra = watch.extraCopies(PointsBit);
    totals.pointFen = watch.pointFen(pointsPerYuan);
    totals.orders = watch.openOrders;
    // Each compensation supersedes one copy: counted by the watch, not over the whole table.
    totals.compensations = watch.superseded();
    return totals;
}

} // namespace

RecentCallbackCount::Count RecentCallbackCount::advance(const QSqlDatabase &db)
{
    const qint64 now = db::scalar(db, QStringLiteral("SELECT UNIX_TIMESTAMP()")).toLongLong();
    const qint64 windowStart = now - kWindowSeconds + 1;
    const qint64 from =
        m_countedTo == 0 ? windowStart : std::max(windowStart, m_countedTo - kSettleSeconds);
    // created_at holds UTC (every session runs at +00:00), and so does the bound.
    QSqlQuery query =
        db::exec(db,
                 QStringLiteral("SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', created_at) AS s, "
                                "COUNT(*) FROM pay_callback_log "
                                "WHERE created_at >= '1970-01-01' + INTERVAL ? SECOND GROUP BY s"),
                 {from});
    std::map<qint64, qint64> fresh;
    while (query.next())
        fresh[query.value(0).toLongLong()] = query.value(1).toLongLong();
    m_perSecond.erase(m_perSecond.begin(), m_perSecond.lower_bound(windowStart));
    m_perSecond.erase(m_perSecond.lower_bound(from), m_perSecond.end());
    m_perSecond.insert(fresh.begin(), fresh.end());
    m_countedTo = now;
    Count count;
    count.lastSecond = now;
    for (auto it = m_perSecond.lower_bound(windowStart); it != m_perSecond.upper_bound(now); ++it)
        count.callbacks += it->second;
    return count;
}

OverviewFigures loadOverview(const QSqlDatabase &db, OverviewTallies &tallies, qint64 pointsPerYuan,
                             const std::atomic<bool> *cancel, const mapping::Mapping *mapping)
{
    OverviewFigures figures;
    QSqlQuery sw =
        db::exec(db, QStringLiteral("SELECT mode, version, reason, changed_by, CAST(changed_at AS "
                                    "CHAR) FROM callback_switch WHERE id = 1"));
    if (sw.next()) {
        figures.mode = sw.value(0).toString();
        figures.switchVersion = sw.value(1).toLongLong();
        figures.switchReason = sw.value(2).toString();
        figures.switchChangedBy = sw.value(3).toString();
        figures.switchChangedMicros = microsFromSql(sw.value(4));
    }
    figures.callbacksLastMinute = tallies.lastMinute.advance(db).callbacks;
    figures.backlog = tallies.backlog.advance(db).recorded;
    figures.unmatched = countUnmatched(db);

    // Alive: live as the switch counts it (instanceLiveSql).
    QSqlQuery instances =
        db::exec(db, QStringLiteral("SELECT COUNT(*), COALESCE(SUM(%1), 0), COALESCE(SUM(%1 AND "
                                    "handler = 'unsafe-demo'), 0), %2 "
                                    "FROM callback_instance")
                         .arg(instanceLiveSql(), instanceAliveSecondsSql()));
    instances.next();
    figures.instancesKnown = instances.value(0).toLongLong();
    figures.instancesAlive = instances.value(1).toLongLong();
    figures.unsafeInstancesAlive = instances.value(2).toLongLong();
    figures.instanceAliveSeconds = instances.value(3).toInt();

    // A second console refreshing at the same moment is waited for briefly, then its figures
    // are shown: they are at most a refresh old.
    WatchRefreshOptions options;
    options.lockWaitSeconds = 1;
    options.firstPassBudgetMs = kOverviewFirstPassSliceMs;
    options.cancel = cancel;
    if (mapping) {
        const mapping::MappedWatchRefresh watch =
            mapping::refreshMappedWatch(db, *mapping, options);
        figures.duplicatesWatched = !watch.missing;
        figures.mapped = watch.figures;
        figures.duplicatesComplete = watch.figures.complete();
        figures.duplicatesPercent = watch.figures.percentScanned();
        figures.duplicatesNote = watch.why;
        return figures;
    }
    const WatchRefresh watch = refreshDuplicateWatch(db, options);
    figures.duplicatesWatched = !watch.missing;
    figures.duplicates = totalsOf(watch.figures, pointsPerYuan);
    figures.duplicatesComplete = watch.figures.complete();
    figures.duplicatesPercent = watch.figures.percentScanned();
    figures.duplicatesNote = watch.why;
    return figures;
}

Job<OverviewRefresh> overviewJob(std::shared_ptr<OverviewTallies> tallies,
                                 std::shared_ptr<ActivityTally> activity, qint64 pointsPerYuan,
                                 std::optional<mapping::Mapping> mapping)
{
    return [tallies = std::move(tallies), activity = std::move(activity), pointsPerYuan,
            mapping = std::move(mapping)](const QSqlDatabase &db) {
        OverviewRefresh result;
        result.summary = loadDatabaseSummary(db);
        if (!result.summary.schemaLevel.isEmpty()) {
            const mapping::Mapping *tables = mapping ? &*mapping : nullptr;
            result.figures = loadOverview(db, *tallies, pointsPerYuan, nullptr, tables);
            if (!tables)
                result.figures.recent = activity->advance(db);
        }
        return result;
    };
}

} // namespace payops::console
