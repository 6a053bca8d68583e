#pragma once

#include "domain/money/compensation.h"
#include "job.h"
#include "sqltime.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace payops::console {

enum class DuplicateKind { Any, Coupon, Points };
enum class CompensationFilter { Open, Compensated, All };

struct DuplicateFilter
{
    TimeWindow window; // on the latest copy of a group
    DuplicateKind kind = DuplicateKind::Any;
    qint64 userId = 0; // 0: every user
    CompensationFilter compensation = CompensationFilter::Open;
    qint64 pointsPerYuan = 100;
};

// One side effect issued more than once: the coupons of one (order, template) or the points
// of one (order, point type). "Live" rows are those compensation has not superseded.
struct DuplicateGroup
{
    qint64 orderId = 0;
    qint64 userId = 0;
    DuplicateKind kind = DuplicateKind::Coupon;
    QString key;      // coupon template id or point type
    QString keyLabel; // template name or point type
    int copies = 0;   // every row of the group, compensated or not (reversals excluded)
    int live = 0;
    int compensated = 0; // rows with a compensation record
    qint64 unitFen = 0;  // value of one copy
    qint64 firstMicros = 0;
    qint64 lastMicros = 0;

    int extra() const { return live > 1 ? live - 1 : 0; }
    qint64 atRiskFen() const { return extra() * unitFen; }
};

// Keyset paging by order id: a page holds whole orders, never half of one.
struct DuplicatePage
{
    QList<DuplicateGroup> groups;
    qint64 nextOrderId = 0; // where the next page starts
    bool atEnd = false;
};

DuplicatePage loadDuplicatePage(const QSqlDatabase &db, const DuplicateFilter &filter,
                                qint64 fromOrderId, int candidateLimit = 500);

// What "compensate all in this filter" covers: every group with a live extra copy that the
// filter shows, read page by page; without any filter, simply everything. Throws db::Error.
CompensationScope compensationScopeOf(const QSqlDatabase &db, const DuplicateFilter &filter);
CompensationGroup compensationGroupOf(const DuplicateGroup &group);
// A scope already known, picked row by row, as the job a compensation dialog reads its scope with.
Job<CompensationScope> knownScopeJob(CompensationScope scope);

// Live (not yet compensated) duplicates and the money they put at risk.
struct DuplicateTotals
{
    qint64 couponGroups = 0;
    qint64 couponExtra = 0;
    qint64 couponFen = 0;
    qint64 pointGroups = 0;
    qint64 pointExtra = 0;
    qint64 pointFen = 0;
    qint64 orders = 0;
    qint64 compensations = 0;

    qint64 extraRows() const { return couponExtra + pointExtra; }
    qint64 atRiskFen() const { return couponFen + pointFen; }
};
DuplicateTotals loadDuplicateTotals(const QSqlDatabase &db, const DuplicateFilter &filter);
// The statement behind the totals, for the benchmark's baseline.
QString duplicateTotalsSql(const DuplicateFilter &filter);

// Extra live copies by the minute or hour they were issued. Buckets are labels, consecutive
// from the first to the last bucket with any copy.
struct DuplicateTimeline
{
    bool perHour = true;
    QStringList buckets;
    QList<qint64> coupons;
    QList<qint64> points;
};
DuplicateTimeline loadDuplicateTimeline(const QSqlDatabase &db, const DuplicateFilter &filter);

// The duplicates page's figures above its list.
struct DuplicateSummary
{
    DuplicateTotals totals;
    DuplicateTimeline timeline;
};
DuplicateSummary loadDuplicateSummary(const QSqlDatabase &db, const DuplicateFilter &filter);

} // namespace payops::console
