#include "livetraffic.h"

#include "db/connection.h"
#include "sqltime.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

#include <algorithm>

namespace payops::console {
namespace {

// An id skipped by a read belongs to a transaction not committed yet, or to one rolled back
// (a duplicate refused by a key burns its id). A callback's transaction lasts well under
// this; after it the id is taken for burnt and no longer asked for.
constexpr qint64 kGapGiveUpMs = 120'000;
// A jump larger than this is not transactions in flight (a server restart moves the
// auto-increment, a bulk load reserves ranges): not tracked.
constexpr qint64 kLargestGap = 2000;
constexpr qsizetype kMostGaps = 5000;
// Rows per table and refresh; a burst beyond it is read by the next refresh.
constexpr int kBatchRows = 50000;

// Each source's statement; the callers add the WHERE. Columns: id, time, reversal, and for a
// side effect the other rows of its (order, key) group, read through idx_coupon_order_tpl /
// idx_point_order_type, in id order (a GROUP_CONCAT cut at its length keeps the lowest).
// Times as text: Qt rounds a DATETIME to the millisecond, which moves a row stored in a
// second's last half millisecond into the next second's bucket.
const QString kTraceSql =
    QStringLiteral("SELECT c.id, CAST(c.received_at AS CHAR), 0, NULL FROM callback_trace c");
const QString kCouponSql = QStringLiteral(
    "SELECT c.id, CAST(c.created_at AS CHAR), 0, (SELECT GROUP_CONCAT(q.id ORDER BY q.id) FROM "
    "user_coupon q"
    " WHERE q.order_id = c.order_id AND q.coupon_template_id = c.coupon_template_id AND q.id <> "
    "c.id)"
    " FROM user_coupon c");
const QString kPointSql =
    QStringLiteral("SELECT c.id, CAST(c.created_at AS CHAR), c.reverses_id IS NOT NULL, "
                   "(SELECT GROUP_CONCAT(q.id ORDER BY q.id) FROM point_log q"
                   " WHERE q.order_id = c.order_id AND q.point_type = "
                   "c.point_type AND q.id <> c.id AND q.reverses_id IS NULL)"
                   " FROM point_log c");

struct Row
{
    qint64 id = 0;
    qint64 atMs = 0;
    bool reversal = false;
    QList<qint64> others; // the group's other rows, ascending
};

QList<Row> fetch(const QSqlDatabase &db, const QString &sql, const QVariantList &binds)
{
    QSqlQuery query = db::exec(db, sql, binds);
    QList<Row> rows;
    while (query.next()) {
        Row row{query.value(0).toLongLong(),
                microsFromSql(query.value(1)) / 1000,
                query.value(2).toInt() != 0,
                {}};
        const QString others = query.value(3).toString();
        if (!others.isEmpty()) {
            QStringList ids = others.split(QLatin1Char(','));
            if (others.size() >=
                1000) // at the server's group_concat_max_len the last one may be cut
                ids.removeLast();
            for (const QString &id : std::as_const(ids))
                row.others << id.toLongLong();
        }
        rows << row;
    }
    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.id < b.id; });
    return rows;
}

// Whether a side-effect row read now is an extra copy: its group has a row read before it.
// Rows read earlier are those at or below the previous watermark and not among its gaps;
// rows read in this same read count in id order.
bool isExtraCopy(const Row &row, qint64 previousWatermark,
                 const QHash<qint64, qint64> &previousGaps)
{
    return std::any_of(row.others.begin(), row.others.end(), [&](qint64 other) {
        return other < row.id || (other <= previousWatermark && !previousGaps.contains(other));
    });
}

QString idList(const QList<qint64> &ids)
{
    QStringList texts;
    for (qint64 id : ids)
        texts << QString::number(id);
    return texts.join(QLatin1Char(','));
}

// The rows of one source added since the last read: its skipped ids by primary key, then
// the ids above its watermark. Updates `source`; marks in `extra` the rows that are copies.
QList<Row> readNew(const QSqlDatabase &db, const QString &sql, LiveTrafficReader::Source &source,
                   qint64 steadyMs, QList<bool> *extra)
{
    for (auto it = source.gaps.begin(); it != source.gaps.end();)
        it = it.value() < steadyMs ? source.gaps.erase(it) : std::next(it);
    const qint64 previousWatermark = source.watermark;
    const QHash<qint64, qint64> previousGaps = source.gaps;

    QList<Row> rows;
    if (!source.gaps.isEmpty())
        rows = fetch(
            db, sql + QStringLiteral(" WHERE c.id IN (%1)").arg(idList(source.gaps.keys())), {});
    const QList<Row> above =
        fetch(db, sql + QStringLiteral(" WHERE c.id > ? ORDER BY c.id LIMIT %1").arg(kBatchRows),
              {source.watermark});
    for (const Row &row : rows)
        source.gaps.remove(row.id);
    qint64 expected = source.watermark + 1;
    for (const Row &row : above) {
        if (row.id - expected <= kLargestGap)
            for (qint64 id = expected; id < row.id && source.gaps.size() < kMostGaps; ++id)
                source.gaps.insert(id, steadyMs + kGapGiveUpMs);
        expected = row.id + 1;
        source.watermark = row.id;
    }
    rows += above;
    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.id < b.id; });
    if (extra)
        for (const Row &row : std::as_const(rows))
            *extra << isExtraCopy(row, previousWatermark, previousGaps);
    return rows;
}

qint64 floorTo(qint64 ms, qint64 step)
{
    return ms - ((ms % step) + step) % step;
}

void trim(std::map<qint64, qint64> &buckets, qint64 fromMs)
{
    buckets.erase(buckets.begin(), buckets.lower_bound(fromMs));
}

QList<LiveTraffic::Bucket> toList(const std::map<qint64, qint64> &buckets)
{
    QList<LiveTraffic::Bucket> list;
    for (const auto &[start, count] : buckets)
        list << LiveTraffic::Bucket{start, count};
    return list;
}

} // namespace

LiveTrafficReader::LiveTrafficReader(int windowSeconds)
    : m_windowSeconds(windowSeconds)
{
}

LiveTraffic LiveTrafficReader::read(const QSqlDatabase &db)
{
    // Work on copies: a statement that fails half-way leaves the state as it was, and the
    // next read asks again for the same rows.
    Source trace = m_trace, coupons = m_coupons, points = m_points;
    std::map<qint64, qint64> perSecond = m_perSecond, duplicates = m_duplicates;
    const qint64 steadyMs = QDeadlineTimer::current().deadline();

    QSqlQuery head = db::exec(
        db, m_loaded ? QStringLiteral("SELECT NOW(3)")
                     : QStringLiteral(
                           "SELECT NOW(3), (SELECT MAX(id) FROM callback_trace),"
                           " (SELECT MAX(id) FROM user_coupon), (SELECT MAX(id) FROM point_log)"));
    head.next();
    LiveTraffic traffic;
    traffic.nowMs = microsFromSql(head.value(0)) / 1000;
    traffic.windowStartMs = traffic.nowMs - qint64(m_windowSeconds) * 1000;
    const QString since =
        sqlTimeText(QDateTime::fromMSecsSinceEpoch(traffic.windowStartMs, Qt::UTC));

    QList<Row> traceRows, couponRows, pointRows;
    QList<bool> couponExtra, pointExtra;
    if (!m_loaded) {
        // The window once, through the time indexes, up to the ids read just before: the
        // rows after them are the next read's.
        trace.watermark = head.value(1).toLongLong();
        coupons.watermark = head.value(2).toLongLong();
        points.watermark = head.value(3).toLongLong();
        traceRows = fetch(db, kTraceSql + QStringLiteral(" WHERE c.received_at >= ? AND c.id <= ?"),
                          {since, trace.watermark});
        couponRows =
            fetch(db, kCouponSql + QStringLiteral(" WHERE c.created_at >= ? AND c.id <= ?"),
                  {since, coupons.watermark});
        pointRows = fetch(db, kPointSql + QStringLiteral(" WHERE c.created_at >= ? AND c.id <= ?"),
                          {since, points.watermark});
        for (const Row &row : std::as_const(couponRows))
            couponExtra << isExtraCopy(row, 0, {});
        for (const Row &row : std::as_const(pointRows))
            pointExtra << isExtraCopy(row, 0, {});
    } else {
        traceRows = readNew(db, kTraceSql, trace, steadyMs, nullptr);
        couponRows = readNew(db, kCouponSql, coupons, steadyMs, &couponExtra);
        pointRows = readNew(db, kPointSql, points, steadyMs, &pointExtra);
    }

    for (const Row &row : std::as_const(traceRows))
        ++perSecond[floorTo(row.atMs, 1000)];
    const auto countCopies = [&duplicates](const QList<Row> &rows, const QList<bool> &extra) {
        for (qsizetype i = 0; i < rows.size(); ++i)
            if (extra.at(i) && !rows.at(i).reversal)
                ++duplicates[floorTo(rows.at(i).atMs, LiveTraffic::kDuplicateBucketMs)];
    };
    countCopies(couponRows, couponExtra);
    countCopies(pointRows, pointExtra);
    trim(perSecond, floorTo(traffic.windowStartMs, 1000));
    trim(duplicates, floorTo(traffic.windowStartMs, LiveTraffic::kDuplicateBucketMs));

    // The flips of the window: a few rows of idx_audit_action, read whole each time.
    QSqlQuery flips =
        db::exec(db,
                 QStringLiteral(
                     "SELECT CAST(created_at AS CHAR), after_json, actor, reason FROM ops_audit_log"
                     " WHERE action = 'switch.flip' AND created_at >= ? ORDER BY created_at, id"),
                 {since});
    while (flips.next()) {
        const QJsonObject after =
            QJsonDocument::fromJson(flips.value(1).toString().toUtf8()).object();
        traffic.flips << LiveTraffic::Flip{microsFromSql(flips.value(0)) / 1000,
                                           after.value(QStringLiteral("mode")).toString(),
                                           flips.value(2).toString(), flips.value(3).toString()};
    }

    m_trace = trace;
    m_coupons = coupons;
    m_points = points;
    m_perSecond = std::move(perSecond);
    m_duplicates = std::move(duplicates);
    m_loaded = true;
    traffic.callbacksPerSecond = toList(m_perSecond);
    traffic.duplicates = toList(m_duplicates);
    return traffic;
}

Job<LiveTraffic> liveTrafficJob(std::shared_ptr<LiveTrafficReader> reader)
{
    return [reader = std::move(reader)](const QSqlDatabase &db) { return reader->read(db); };
}

} // namespace payops::console
