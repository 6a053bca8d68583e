#pragma once

#include <QCoreApplication>
#include <QList>
#include <QSqlDatabase>

namespace payops {

// Side effects that were issued more than once and not yet compensated ("live").
// Groups are (order, coupon template) for coupons and (order, point type) for points.
struct LiveDuplicateCount
{
    Q_DECLARE_TR_FUNCTIONS(payops::LiveDuplicateCount)

public:
    qint64 couponGroups = 0;
    qint64 couponExtraRows = 0; // rows beyond the first in each group
    qint64 pointGroups = 0;
    qint64 pointExtraRows = 0;
    QList<qint64> sampleOrderIds; // up to ten affected orders, lowest first

    bool isEmpty() const { return couponGroups == 0 && pointGroups == 0; }
    // "3 coupon groups (4 extra rows) in user_coupon ..., e.g. orders 1001, 1002"
    QString describe() const;
};

// Throws db::Error.
LiveDuplicateCount countLiveDuplicates(const QSqlDatabase &db);

// The requirements migrations name ("-- requires: no-live-duplicates"), for db::Migrator:
// why one is not met, or an empty string.
QString checkMigrationRequirement(const QSqlDatabase &db, const QString &requirement);

} // namespace payops
