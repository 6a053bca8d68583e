#include "duplicatescan.h"

#include "db/connection.h"

#include <QMap>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>

namespace payops::console {
namespace {

// Both side-effect tables in one description, so that every query below is written once.
struct SideEffectTable
{
    DuplicateKind kind;
    QString table;
    QString keyColumn;
    QString liveCondition;  // a live row: not superseded (and for points not a reversal)
    QString rowCondition;   // rows that count at all (reversals are corrections, not effects)
    QString unitExpression; // value of one copy in fen; %1 is points per yuan
    QString labelExpression;
    QString labelJoin;
};

const SideEffectTable &couponTable()
{
    static const SideEffectTable table{
        DuplicateKind::Coupon,
        QStringLiteral("user_coupon"),
        QStringLiteral("coupon_template_id"),
        QStringLiteral("s.superseded_by IS NULL"),
        QStringLiteral("1 = 1"),
        QStringLiteral("MAX(s.face_value_fen)"),
        QStringLiteral("MAX(t.name)"),
        QStringLiteral("LEFT JOIN coupon_template t ON t.id = s.coupon_template_id")};
    return table;
}

const SideEffectTable &pointTable()
{
    static const SideEffectTable table{DuplicateKind::Points,
                                       QStringLiteral("point_log"),
                                       QStringLiteral("point_type"),
                                       QStringLiteral("s.superseded_by IS NULL"),
                                       QStringLiteral("s.reverses_id IS NULL"),
                                       QStringLiteral("MAX(s.points) * 100 DIV %1"),
                                       QStringLiteral("MAX(s.point_type)"),
                                       QString()};
    return table;
}

QString unitSql(const SideEffectTable &t, qint64 pointsPerYuan)
{
    return t.kind == DuplicateKind::Points ? t.unitExpression.arg(pointsPerYuan) : t.unitExpression;
}

QList<const SideEffectTable *> tablesFor(DuplicateKind kind)
{
    QList<const SideEffectTable *> tables;
    if (kind != DuplicateKind::Points)
        tables << &couponTable();
    if (kind != DuplicateKind::Coupon)
        tables << &pointTable();
    return tables;
}

// Orders at or after `from` with more than one row for a key. Reads only the (order, key)
// index, in its order, and stops after `limit` groups: this is what lets the page walk ten
// million orders without scanning them all for every page.
QList<qint64> candidateOrders(const QSqlDatabase &db, const SideEffectTable &t,
                              const DuplicateFilter &filter, qint64 from, int limit, bool *full)
{
    QString sql = QStringLiteral("SELECT s.order_id FROM %1 s WHERE s.order_id >= ?").arg(t.table);
    QVariantList binds{from};
    if (filter.userId > 0) {
        sql += QStringLiteral(" AND s.user_id = ?");
        binds << filter.userId;
    }
    sql += QStringLiteral(
               " GROUP BY s.order_id, s.%1 HAVING COUNT(*) > 1 ORDER BY s.order_id, s.%1 LIMIT %2")
               .arg(t.keyColumn, QString::number(limit));
    QSqlQuery query = db::exec(db, sql, binds);
    QList<qint64> orders;
    int rows = 0;
    while (query.next()) {
        ++rows;
        const qint64 id = query.value(0).toLongLong();
        if (orders.isEmpty() || orders.last() != id)
            orders << id;
    }
    *full = rows >= limit;
    return orders;
}

QString havingFor(const SideEffectTable &t, const DuplicateFilter &filter)
{
    QString having = QStringLiteral("COUNT(*) > 1");
    const QString live = QStringLiteral("SUM(%1)").arg(t.liveCondition);
    if (filter.compensation == CompensationFilter::Open)
        having += QStringLiteral(" AND %1 > 1").arg(live);
    else if (filter.compensation == CompensationFilter::Compensated)
        having += QStringLiteral(" AND %1 <= 1").arg(live);
    if (!filter.window.isAll())
        having += QStringLiteral(" AND MAX(s.created_at) >= '%1'").arg(filter.window.fromText());
    return having;
}

QList<DuplicateGroup> groupsOf(const QSqlDatabase &db, const SideEffectTable &t,
                               const DuplicateFilter &filter, const QList<qint64> &orders)
{
    if (orders.isEmpty())
        return {};
    QString sql =
        QStringLiteral(
            "SELECT s.order_id, MIN(s.user_id), s.%1, %2, COUNT(*), SUM(%3), SUM(k.id IS NOT "
            "NULL), %4, "
            "CAST(MIN(s.created_at) AS CHAR), CAST(MAX(s.created_at) AS CHAR) "
            "FROM %5 s %6 LEFT JOIN compensation k ON k.target_table = '%5' AND k.target_id = s.id "
            "WHERE s.order_id IN (%7) AND %8")
            .arg(t.keyColumn, t.labelExpression, t.liveCondition, unitSql(t, filter.pointsPerYuan),
                 t.table, t.labelJoin, db::idList(orders), t.rowCondition);
    if (filter.userId > 0)
        sql += QStringLiteral(" AND s.user_id = %1").arg(filter.userId);
    sql += QStringLiteral(" GROUP BY s.order_id, s.%1 HAVING %2")
               .arg(t.keyColumn, havingFor(t, filter));
    QSqlQuery query = db::exec(db, sql);
    QList<DuplicateGroup> groups;
    while (query.next()) {
        DuplicateGroup g;
        g.orderId = query.value(0).toLongLong();
        g.userId = query.value(1).toLongLong();
        g.kind = t.kind;
        g.key = query.value(2).toString();
        g.keyLabel = query.value(3).toString();
        g.copies = query.value(4).toInt();
        g.live = query.value(5).toInt();
        g.compensated = query.value(6).toInt();
        g.unitFen = query.value(7).toLongLong();
        g.firstMicros = microsFromSql(query.value(8));
        g.lastMicros = microsFromSql(query.value(9));
        groups << g;
    }
    return groups;
}

} // namespace

DuplicatePage loadDuplicatePage(const QSqlDatabase &db, const DuplicateFilter &filter,
                                qint64 fromOrderId, int candidateLimit)
{
    // Each kind proposes its next orders; the page ends at the lowest order a full batch
    // reached, so that no kind can still hold groups of an order below it.
    QSet<qint64> orderSet;
    qint64 bound = std::numeric_limits<qint64>::max();
    bool anyFull = false;
    QList<QList<qint64>> proposals;
    for (const SideEffectTable *t : tablesFor(filter.kind)) {
        bool full = false;
        const QList<qint64> orders =
            candidateOrders(db, *t, filter, fromOrderId, candidateLimit, &full);
        if (full && !orders.isEmpty()) {
            anyFull = true;
            bound = std::min(bound, orders.last());
        }
        proposals << orders;
    }
    for (const QList<qint64> &orders : proposals)
        for (qint64 id : orders)
            if (id <= bound)
                orderSet.insert(id);
    QList<qint64> orders(orderSet.cbegin(), orderSet.cend());
    std::sort(orders.begin(), orders.end());

    DuplicatePage page;
    page.atEnd = !anyFull;
    page.nextOrderId = anyFull ? bound + 1 : 0;
    for (const SideEffectTable *t : tablesFor(filter.kind))
        page.groups << groupsOf(db, *t, filter, orders);
    std::sort(page.groups.begin(), page.groups.end(),
              [](const DuplicateGroup &a, const DuplicateGroup &b) {
                  if (a.orderId != b.orderId)
                      return a.orderId < b.orderId;
                  if (a.kind != b.kind)
                      return a.kind < b.kind;
                  return a.key < b.key;
              });
    return page;
}

CompensationGroup compensationGroupOf(const DuplicateGroup &group)
{
    return {group.orderId, (group.kind == DuplicateKind::Coupon ? QStringLiteral("coupon:")
                                                                : QStringLiteral("points:")) +
                               group.key};
}

CompensationScope compensationScopeOf(const QSqlDatabase &db, const DuplicateFilter &filter)
{
    if (filter.window.isAll() && filter.kind == DuplicateKind::Any && filter.userId == 0)
        return CompensationScope::all();
    CompensationScope scope;
    DuplicateFilter open = filter;
    open.compensation = CompensationFilter::Open;
    for (qint64 from = 0;;) {
        const DuplicatePage page = loadDuplicatePage(db, open, from);
        for (const DuplicateGroup &group : page.groups) {
            if (group.extra() > 0)
                scope.groups << compensationGroupOf(group);
        }
        if (page.atEnd)
            return scope;
        from = page.nextOrderId;
    }
}

QString duplicateTotalsSql(const DuplicateFilter &filter)
{
    // One statement: each table is grouped once, and the orders are counted across both.
    QStringList groups;
    for (const SideEffectTable *t : tablesFor(filter.kind)) {
        QString where = t->rowCondition;
        if (filter.userId > 0)
            where += QStringLiteral(" AND s.user_id = %1").arg(filter.userId);
        DuplicateFilter open = filter;
        open.compensation = CompensationFilter::Open;
        groups << QStringLiteral("SELECT %1 AS kind, s.order_id, SUM(%2) - 1 AS extra, (SUM(%2) - "
                                 "1) * %3 AS fen FROM %4 s WHERE %5 "
                                 "GROUP BY s.order_id, s.%6 HAVING %7")
                      .arg(QString::number(int(t->kind)), t->liveCondition,
                           unitSql(*t, filter.pointsPerYuan), t->table, where, t->keyColumn,
                           havingFor(*t, open));
    }
    const int coupon = int(DuplicateKind::Coupon);
    return QStringLiteral("SELECT COUNT(DISTINCT order_id), "
                          "  COALESCE(SUM(kind = %1), 0), COALESCE(SUM(IF(kind = %1, extra, 0)), "
                          "0), COALESCE(SUM(IF(kind = %1, fen, 0)), 0), "
                          "  COALESCE(SUM(kind <> %1), 0), COALESCE(SUM(IF(kind <> %1, extra, 0)), "
                          "0), COALESCE(SUM(IF(kind <> %1, fen, 0)), 0) "
                          "FROM (%2) g")
        .arg(QString::number(coupon), groups.join(QStringLiteral(" UNION ALL ")));
}

DuplicateTotals loadDuplicateTotals(const QSqlDatabase &db, const DuplicateFilter &filter)
{
    DuplicateTotals totals;
    QSqlQuery query = db::exec(db, duplicateTotalsSql(filter));
    query.next();
    totals.orders = query.value(0).toLongLong();
    totals.couponGroups = query.value(1).toLongLong();
    totals.couponExtra = query.value(2).toLongLong();
    totals.couponFen = query.value(3).toLongLong();
    totals.pointGroups = query.value(4).toLongLong();
    totals.pointExtra = query.value(5).toLongLong();
    totals.pointFen = query.value(6).toLongLong();
    totals.compensations =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM compensation")).toLongLong();
    return totals;
}

DuplicateTimeline loadDuplicateTimeline(const QSqlDatabase &db, const DuplicateFilter &filter)
{
    DuplicateTimeline timeline;
    timeline.perHour = filter.window.isAll() || filter.window.seconds > 6 * 3600;
    const QString format =
        timeline.perHour ? QStringLiteral("%Y-%m-%d %H:00") : QStringLiteral("%Y-%m-%d %H:%i");
    QMap<QString, QPair<qint64, qint64>> counts;
    for (const SideEffectTable *t : tablesFor(filter.kind)) {
        QString where = QStringLiteral("%1 AND %2").arg(t->liveCondition, t->rowCondition);
        if (filter.userId > 0)
            where += QStringLiteral(" AND s.user_id = %1").arg(filter.userId);
        // Every live copy after the first of its group is one duplicate, dated when issued.
        QString sql =
            QStringLiteral(
                "SELECT DATE_FORMAT(c.created_at, '%1') AS b, COUNT(*) FROM %2 c "
                "JOIN (SELECT s.order_id, s.%3 AS k, MIN(s.id) AS first_id FROM %2 s WHERE %4 "
                "      GROUP BY s.order_id, s.%3 HAVING COUNT(*) > 1) g "
                "  ON g.order_id = c.order_id AND g.k = c.%3 AND c.id > g.first_id "
                "WHERE %5")
                .arg(format, t->table, t->keyColumn, where,
                     QString(where).replace(QStringLiteral("s."), QStringLiteral("c.")));
        if (!filter.window.isAll())
            sql += QStringLiteral(" AND c.created_at >= '%1'").arg(filter.window.fromText());
        sql += QStringLiteral(" GROUP BY b ORDER BY b");
        QSqlQuery query = db::exec(db, sql);
        while (query.next()) {
            auto &slot = counts[query.value(0).toString()];
            (t->kind == DuplicateKind::Coupon ? slot.first : slot.second) +=
                query.value(1).toLongLong();
        }
    }
    if (counts.isEmpty())
        return timeline;
    // Fill the quiet buckets in between, so that the axis keeps time; a very long span keeps
    // only the buckets with copies.
    const QString qtFormat = QStringLiteral("yyyy-MM-dd HH:mm");
    QDateTime at = QDateTime::fromString(counts.firstKey(), qtFormat);
    const QDateTime last = QDateTime::fromString(counts.lastKey(), qtFormat);
    const int step = timeline.perHour ? 3600 : 60;
    const bool fill = at.isValid() && last.isValid() && at.secsTo(last) / step <= 240;
    if (!fill) {
        for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
            timeline.buckets << it.key();
            timeline.coupons << it.value().first;
            timeline.points << it.value().second;
        }
        return timeline;
    }
    for (; at <= last; at = at.addSecs(step)) {
        const QString key = at.toString(qtFormat);
        const auto value = counts.value(key);
        timeline.buckets << key;
        timeline.coupons << value.first;
        timeline.points << value.second;
    }
    return timeline;
}

Job<CompensationScope> knownScopeJob(CompensationScope scope)
{
    return [scope = std::move(scope)](const QSqlDatabase &) { return scope; };
}

DuplicateSummary loadDuplicateSummary(const QSqlDatabase &db, const DuplicateFilter &filter)
{
    return DuplicateSummary{loadDuplicateTotals(db, filter), loadDuplicateTimeline(db, filter)};
}

} // namespace payops::console
