#include "duplicatewatch.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/namedlock.h"
#include "watchfeed.h"
#include "watchrecount.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QSqlQuery>

#include <algorithm>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct DuplicateWatch
{
    Q_DECLARE_TR_FUNCTIONS(payops::DuplicateWatch)
};

// Ids below the highest at the first refresh that are read again, as a refresh reads the
// rows past its watermark: transactions that took an id then and had not committed it yet.
constexpr qint64 kTrailingIds = 1000;
// A first-pass statement should take about this long: long enough to be efficient, short
// enough to hold no read view for long.
constexpr qint64 kChunkFastMs = 25;
constexpr qint64 kChunkSlowMs = 100;

qint64 scalarId(const QSqlDatabase &db, const QString &sql)
{
    const QVariant value = db::scalar(db, sql);
    return value.isNull() ? -1 : value.toLongLong();
}

// The first refresh of a database: watermarks a little below the highest ids (so that the
// rows of transactions still open are read by the feed that follows), and the range of order
// ids the first pass walks. Both are read before the pass starts: whatever is added meanwhile
// lies past the watermarks and reaches the watch through the next refreshes.
void initialise(const QSqlDatabase &db)
{
    const auto watermark = [&db](const char *table) {
        return std::max<qint64>(
            0, scalarId(db, QStringLiteral("SELECT MAX(id) FROM %1").arg(QLatin1String(table))) -
                   kTrailingIds);
    };
    qint64 start = -1;
    qint64 end = -1;
    for (const SideEffectTable &table : sideEffectTables()) {
        const qint64 low =
            scalarId(db, QStringLiteral("SELECT MIN(order_id) FROM %1").arg(table.name));
        const qint64 high =
            scalarId(db, QStringLiteral("SELECT MAX(order_id) FROM %1").arg(table.name));
        if (low >= 0)
            start = start < 0 ? low : std::min(start, low);
        end = std::max(end, high);
    }
    db::execDirect(db, QStringLiteral("UPDATE duplicate_watch_state SET coupon_seen_id = %1, "
                                      "point_seen_id = %2, compensation_seen_id = %3, "
                                      "scan_state = 'SCANNING', scan_start = %4, scan_cursor = %4, "
                                      "scan_end = %5, scan_started_at = UTC_TIMESTAMP(3) "
                                      "WHERE id = 1 AND scan_state = 'NEW'")
                           .arg(QString::number(watermark("user_coupon")),
                                QString::number(watermark("point_log")),
                                QString::number(watermark("compensation")),
                                QString::number(std::max<qint64>(start, 0)),
                                QString::number(std::max<qint64>(end, 0))));
}

// The first pass, from the persisted cursor: each step reads the (order_id, key) indexes alone
// over a range of orders for groups with more than one row, recounts just those orders, and
// moves the cursor in the same transaction, so a pass cancelled or killed resumes where it
// stopped. Returns false when it was cancelled.
bool scan(const QSqlDatabase &db, const WatchRefreshOptions &options, const QElapsedTimer &clock,
          DuplicateWatchFigures &figures)
{
    qint64 chunk = std::max<qint64>(options.firstPassChunk, 1);
    while (figures.scanCursor <= figures.scanEnd) {
        if (options.cancel && options.cancel->load())
            return false;
        if (options.firstPassBudgetMs >= 0 && clock.elapsed() >= options.firstPassBudgetMs)
            return true;
        const qint64 from = figures.scanCursor;
        const qint64 to = from + chunk; // exclusive
        QElapsedTimer statement;
        statement.start();
        WatchOrders candidates;
        qint64 next = -1;
        for (const SideEffectTable &table : sideEffectTables()) {
            QSqlQuery query =
                db::exec(db, QStringLiteral("SELECT s.order_id FROM %1 s WHERE s.order_id >= %2 "
                                            "AND s.order_id < %3 GROUP BY s.order_id, s.%4 "
                                            "HAVING COUNT(*) > 1")
                                 .arg(table.name, QString::number(from), QString::number(to),
                                      table.keyColumn));
            while (query.next())
                candidates[query.value(0).toLongLong()] |= table.kindBit;
            // Order ids need not be dense: the next step starts at the next order there is.
            const qint64 following =
                scalarId(db, QStringLiteral("SELECT MIN(order_id) FROM %1 WHERE order_id >= %2")
                                 .arg(table.name, QString::number(to)));
            if (following >= 0)
                next = next < 0 ? following : std::min(next, following);
        }
        const qint64 elapsed = statement.elapsed();
        if (next < 0 || next > figures.scanEnd)
            next = figures.scanEnd + 1;
        QString update =
            QStringLiteral("UPDATE duplicate_watch_state SET scan_cursor = %1").arg(next);
        if (next > figures.scanEnd)
            update += QStringLiteral(", scan_state = 'DONE', scan_finished_at = UTC_TIMESTAMP(3)");
        recountWatchedOrders(db, candidates, {update + QStringLiteral(" WHERE id = 1")});
        figures.scanCursor = next;
        if (next > figures.scanEnd)
            figures.scanState = QStringLiteral("DONE");
        if (elapsed < kChunkFastMs)
            chunk = std::min<qint64>(chunk * 2, qint64(1) << 24);
        else if (elapsed > kChunkSlowMs)
            chunk = std::max<qint64>(chunk / 2, 100);
        if (options.progress)
            options.progress(figures);
    }
    return true;
}

bool mayNotWrite(const db::Error &error)
{
    return error.isAccessDenied() || error.isReadOnlyRefusal();
}

} // namespace

int DuplicateWatchFigures::percentScanned() const
{
    if (complete())
        return 100;
    if (scanState != QLatin1String("SCANNING") || scanEnd < scanStart)
        return 0;
    const double share = double(scanCursor - scanStart) / double(scanEnd - scanStart + 1);
    return std::clamp(int(share * 100), 0, 99);
}

qint64 DuplicateWatchFigures::groups(SideEffectKindBit kind) const
{
    qint64 sum = 0;
    for (const Unit &u : units)
        sum += u.kind == kind ? u.openGroups : 0;
    return sum;
}

qint64 DuplicateWatchFigures::extraCopies(SideEffectKindBit kind) const
{
    qint64 sum = 0;
    for (const Unit &u : units)
        sum += u.kind == kind ? u.extraCopies : 0;
    return sum;
}

qint64 DuplicateWatchFigures::superseded() const
{
    qint64 sum = 0;
    for (const Unit &u : units)
        sum += u.superseded;
    return sum;
}

qint64 DuplicateWatchFigures::couponFen() const
{
    qint64 sum = 0;
    for (const Unit &u : units)
        sum += u.kind == CouponBit ? u.extraCopies * u.unit : 0;
    return sum;
}

qint64 DuplicateWatchFigures::pointFen(qint64 pointsPerYuan) const
{
    if (pointsPerYuan <= 0)
        return 0;
    qint64 sum = 0;
    for (const Unit &u : units)
        sum += u.kind == PointsBit ? u.extraCopies * (u.unit * 100 / pointsPerYuan) : 0;
    return sum;
}

LiveDuplicateCount DuplicateWatchFigures::liveCount(const QList<qint64> &sampleOrderIds) const
{
    LiveDuplicateCount count;
    count.couponGroups = groups(CouponBit);
    count.couponExtraRows = extraCopies(CouponBit);
    count.pointGroups = groups(PointsBit);
    count.pointExtraRows = extraCopies(PointsBit);
    count.sampleOrderIds = sampleOrderIds;
    return count;
}

QString duplicateWatchLockName(const QString &database)
{
    const QString prefix = QStringLiteral("payops:watch:");
    if (prefix.size() + database.size() <= 64)
        return prefix + database;
    // Two long names that share a beginning must not share a lock.
    const QString hash = QString::fromLatin1(
        QCryptographicHash::hash(database.toUtf8(), QCryptographicHash::Sha256).toHex());
    return prefix + database.left(24) + QLatin1Char(':') + hash.left(64 - prefix.size() - 25);
}

DuplicateWatchFigures readDuplicateWatch(const QSqlDatabase &db)
{
    // One statement, so that the totals and the count of orders come from one read view.
    QSqlQuery query = db::exec(
        db, QStringLiteral("SELECT s.scan_state, s.scan_start, s.scan_cursor, s.scan_end, "
                           "s.open_orders, CAST(s.refreshed_at AS CHAR), "
                           "       t.kind, t.unit, t.open_groups, t.extra_copies, t.superseded "
                           "FROM duplicate_watch_state s LEFT JOIN duplicate_watch_total t ON 1 = "
                           "1 WHERE s.id = 1"));
    DuplicateWatchFigures figures;
    while (query.next()) {
        figures.scanState = query.value(0).toString();
        figures.scanStart = query.value(1).toLongLong();
        figures.scanCursor = query.value(2).toLongLong();
        figures.scanEnd = query.value(3).toLongLong();
        figures.openOrders = query.value(4).toLongLong();
        figures.refreshedAt = query.value(5).toString();
        if (query.value(6).isNull())
            continue;
        figures.units << DuplicateWatchFigures::Unit{
            query.value(6).toInt() == PointsBit ? PointsBit : CouponBit,
            query.value(7).toLongLong(), query.value(8).toLongLong(), query.value(9).toLongLong(),
            query.value(10).toLongLong()};
    }
    return figures;
}

QList<qint64> openDuplicateOrders(const QSqlDatabase &db, int limit)
{
    QSqlQuery query =
        db::exec(db, QStringLiteral("SELECT DISTINCT order_id FROM duplicate_watch_group WHERE "
                                    "is_open = 1 ORDER BY order_id LIMIT %1")
                         .arg(limit));
    QList<qint64> orders;
    while (query.next())
        orders << query.value(0).toLongLong();
    return orders;
}

QString underWatchLock(const QSqlDatabase &db, int lockWaitSeconds,
                       const std::function<void()> &advance)
{
    try {
        const QString name = duplicateWatchLockName(db.databaseName());
        // GET_LOCK nests within a session: a cancel (KILL QUERY) that hit a RELEASE_LOCK left
        // this connection holding it, and every other session would then wait in vain.
        while (db::scalar(db,
                          QStringLiteral(
                              "SELECT IF(IS_USED_LOCK(?) = CONNECTION_ID(), RELEASE_LOCK(?), 0)"),
                          {name, name})
                   .toInt() == 1) {
        }
        db::NamedLock lock(db, name);
        if (!lock.acquire(lockWaitSeconds))
            return DuplicateWatch::tr(
                "another session was refreshing the duplicate watch; these are its last "
                "figures");
        advance();
        return QString();
    } catch (const db::Error &error) {
        if (error.serverCode() == 1146 || !mayNotWrite(error))
            throw;
        if (!error.isAccessDenied())
            return DuplicateWatch::tr("as the primary last refreshed them (read from a replica)");
        return DuplicateWatch::tr(
            "this account may not update the duplicate watch (payops_operator and "
            "payops_finance may); these are the figures of its last refresh");
    }
}

WatchRefresh refreshDuplicateWatch(const QSqlDatabase &db, const WatchRefreshOptions &options)
{
    WatchRefresh result;
    QElapsedTimer clock;
    clock.start();
    try {
        result.why = underWatchLock(db, options.lockWaitSeconds, [&] {
            if (readDuplicateWatch(db).scanState == QLatin1String("NEW"))
                initialise(db);
            const WatchFeedResult fed = feedDuplicateWatch(db, options.batchRows, options.cancel);
            result.rowsRead = fed.rowsRead;
            result.cancelled = fed.cancelled;
            DuplicateWatchFigures figures = readDuplicateWatch(db);
            if (!result.cancelled && figures.scanState == QLatin1String("SCANNING") &&
                options.firstPassBudgetMs != 0)
                result.cancelled = !scan(db, options, clock, figures);
            db::execDirect(db, QStringLiteral("UPDATE duplicate_watch_state SET refreshed_at = "
                                              "UTC_TIMESTAMP(3) WHERE id = 1"));
        });
        result.refreshed = result.why.isEmpty();
    } catch (const db::Error &error) {
        if (error.serverCode() != 1146) // no such table
            throw;
        result.missing = true;
        result.why = DuplicateWatch::tr(
            "this database has no duplicate watch yet: run payops migrate (migration "
            "0010) with an account that may change the schema");
        return result;
    }
    result.figures = readDuplicateWatch(db);
    return result;
}

} // namespace payops
