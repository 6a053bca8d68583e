#include "duplicatecount.h"

#include "db/connection.h"

#include <QSqlQuery>
#include <QStringList>

namespace payops {

QString LiveDuplicateCount::describe() const
{
    QStringList parts;
    if (couponGroups > 0)
        parts << LiveDuplicateCount::tr(
                     "%1 duplicate coupon group(s) (%2 extra row(s)) in user_coupon by "
                     "(order_id, coupon_template_id)")
                     .arg(QString::number(couponGroups), QString::number(couponExtraRows));
    if (pointGroups > 0)
        parts << LiveDuplicateCount::tr(
                     "%1 duplicate points group(s) (%2 extra row(s)) in point_log by "
                     "(order_id, point_type)")
                     .arg(QString::number(pointGroups), QString::number(pointExtraRows));
    if (parts.isEmpty())
        return LiveDuplicateCount::tr("no live duplicates");
    QStringList orders;
    for (qint64 id : sampleOrderIds)
        orders << QString::number(id);
    return LiveDuplicateCount::tr("%1; e.g. order(s) %2")
        .arg(parts.join(LiveDuplicateCount::tr("; ")), orders.join(QStringLiteral(", ")));
}

LiveDuplicateCount countLiveDuplicates(const QSqlDatabase &db)
{
    // superseded_by marks a duplicate that compensation already dealt with; reversal rows
    // (reverses_id) are corrections, not side effects.
    static const QString couponGroups = QStringLiteral(
        "SELECT order_id, COUNT(*) - 1 AS extra FROM user_coupon WHERE superseded_by IS NULL "
        "GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1");
    static const QString pointGroups =
        QStringLiteral("SELECT order_id, COUNT(*) - 1 AS extra FROM point_log "
                       "WHERE superseded_by IS NULL AND reverses_id IS NULL "
                       "GROUP BY order_id, point_type HAVING COUNT(*) > 1");

    LiveDuplicateCount count;
    QSqlQuery coupons = db::exec(
        db,
        QStringLiteral("SELECT COUNT(*), COALESCE(SUM(extra), 0) FROM (%1) g").arg(couponGroups));
    coupons.next();
    count.couponGroups = coupons.value(0).toLongLong();
    count.couponExtraRows = coupons.value(1).toLongLong();

    QSqlQuery points = db::exec(
        db,
        QStringLiteral("SELECT COUNT(*), COALESCE(SUM(extra), 0) FROM (%1) g").arg(pointGroups));
    points.next();
    count.pointGroups = points.value(0).toLongLong();
    count.pointExtraRows = points.value(1).toLongLong();

    if (!count.isEmpty()) {
        QSqlQuery sample = db::exec(
            db,
            QStringLiteral(
                "SELECT DISTINCT order_id FROM ((%1) UNION ALL (%2)) g ORDER BY order_id LIMIT 10")
                .arg(couponGroups, pointGroups));
        while (sample.next())
            count.sampleOrderIds << sample.value(0).toLongLong();
    }
    return count;
}

QString checkMigrationRequirement(const QSqlDatabase &db, const QString &requirement)
{
    if (requirement != QLatin1String("no-live-duplicates"))
        return LiveDuplicateCount::tr("'%1' is not a requirement this program knows")
            .arg(requirement);
    const LiveDuplicateCount duplicates = countLiveDuplicates(db);
    if (duplicates.isEmpty())
        return {};
    return LiveDuplicateCount::tr(
               "the side-effect keys cannot be added while live duplicates remain: %1. Compensate "
               "them first (payops compensate), then migrate again.")
        .arg(duplicates.describe());
}

} // namespace payops
