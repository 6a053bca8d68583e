#include "mappedwatchscan.h"

#include "db/connection.h"
#include "mappedwatchrecount.h"

#include <QSqlQuery>

#include <algorithm>

namespace payops::mapping {
namespace {

// As the watch on payops's own tables (duplicatewatch.cpp): the first pass's statements kept
// between these durations.
constexpr qint64 kChunkFastMs = 25;
constexpr qint64 kChunkSlowMs = 100;

bool scanning(const MappedSideEffectFigures &f)
{
    return f.scanState == QLatin1String("SCANNING") && f.scanCursor <= f.scanEnd;
}

} // namespace

bool scanMappedEffects(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                       const WatchRefreshOptions &options, const QElapsedTimer &clock,
                       MappedWatchFigures &figures, qsizetype first)
{
    Q_ASSERT(effects.size() <= kEffectsPerRecount);
    const auto mine = [&](int i) -> MappedSideEffectFigures & {
        return figures.sideEffects[first + i];
    };
    qint64 chunk = std::max<qint64>(options.firstPassChunk, 1);
    for (;;) {
        // The range starts at the lowest cursor; a side effect whose cursor is past it waits.
        QList<int> some;
        qint64 from = 0;
        for (int i = 0; i < effects.size(); ++i)
            if (scanning(mine(i))) {
                from = some.isEmpty() ? mine(i).scanCursor : std::min(from, mine(i).scanCursor);
                some << i;
            }
        if (some.isEmpty())
            return true;
        if (options.cancel && options.cancel->load())
            return false;
        if (options.firstPassBudgetMs >= 0 && clock.elapsed() >= options.firstPassBudgetMs)
            return true;
        const qint64 to = from + chunk; // exclusive
        QStringList candidates;
        QStringList following;
        QList<int> stepping;
        for (int i : std::as_const(some)) {
            if (mine(i).scanCursor >= to)
                continue;
            const WatchedEffect &w = effects.at(i);
            // An order comes back once per group; no DISTINCT over a derived table, whose
            // temporary table the server would read again.
            candidates << QStringLiteral("SELECT %1, %2 FROM %3 s WHERE %2 >= %4 AND %2 < %5 "
                                         "GROUP BY %2, %6 HAVING COUNT(*) > 1")
                              .arg(QString::number(i), w.order, w.table,
                                   QString::number(mine(i).scanCursor), QString::number(to),
                                   w.keys);
            // Order ids need not be dense: the next step starts at the next order there is.
            following << QStringLiteral("(SELECT MIN(%1) FROM %2 s WHERE %1 >= %3)")
                             .arg(w.order, w.table, QString::number(to));
            stepping << i;
        }
        QElapsedTimer statement;
        statement.start();
        WatchOrders orders;
        QSqlQuery query = db::exec(db, candidates.join(QStringLiteral(" UNION ALL ")));
        while (query.next())
            orders[query.value(1).toLongLong()] |= 1 << query.value(0).toInt();
        QSqlQuery next =
            db::exec(db, QStringLiteral("SELECT ") + following.join(QStringLiteral(", ")));
        next.next();
        const qint64 elapsed = statement.elapsed();
        QStringList updates;
        for (int at = 0; at < stepping.size(); ++at) {
            MappedSideEffectFigures &f = mine(stepping.at(at));
            const qint64 cursor = next.value(at).isNull()
                                      ? f.scanEnd + 1
                                      : std::min(next.value(at).toLongLong(), f.scanEnd + 1);
            QString set = QStringLiteral("scan_cursor = %1").arg(cursor);
            if (cursor > f.scanEnd)
                set += QStringLiteral(", scan_state = 'DONE', scan_finished_at = "
                                      "UTC_TIMESTAMP(3)");
            updates << stateUpdate(effects.at(stepping.at(at)), set);
            f.scanCursor = cursor;
            if (cursor > f.scanEnd)
                f.scanState = QStringLiteral("DONE");
        }
        recountMappedOrders(db, effects, orders, updates);
        if (elapsed < kChunkFastMs)
            chunk = std::min<qint64>(chunk * 2, qint64(1) << 24);
        else if (elapsed > kChunkSlowMs)
            chunk = std::max<qint64>(chunk / 2, 100);
        if (options.progress)
            options.progress(figures.progress());
    }
}

} // namespace payops::mapping
