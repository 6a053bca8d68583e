#pragma once

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>

namespace payops {

// What happens to one duplicate side effect. Nothing is ever deleted.
enum class CompensationAction {
    FreezeCoupon,     // an unused duplicate coupon is frozen
    WriteOffCoupon,   // a used duplicate coupon: finance writes its value off
    ReceivableCoupon, // a used duplicate coupon: finance books it as owed by the user
    ReversePoints,    // duplicate points get a negative row naming the row it reverses
};
QString compensationActionName(CompensationAction action);
// The statements a compensation batch writes with, for an empty batch: the privilege probe
// asks the server about exactly these. Its audit entries go through the audit procedures
// (mayAppendAudit).
QStringList compensationStatements();

enum class UsedCouponPolicy { WriteOff, Receivable };

struct CompensationSettings
{
    UsedCouponPolicy usedCoupons = UsedCouponPolicy::WriteOff;
    qint64 fenPerHundredPoints = 100; // cash value of points: 100 points = 1 yuan by default
    int batchSize = 200;              // actions per transaction
};

// One duplicate group: the coupons of one template, or the points of one type, of an order.
struct CompensationGroup
{
    qint64 orderId = 0;
    QString key; // "coupon:<template id>" or "points:<point type>"
    bool operator==(const CompensationGroup &) const = default;
};

// What to compensate: whole orders and single groups, or everything. An empty scope that is
// not "everything" covers nothing: a filter that matched no group must not widen to all.
struct CompensationScope
{
    QList<qint64> orders;
    QList<CompensationGroup> groups;
    bool everything = false;

    static CompensationScope all() { return {{}, {}, true}; }
    bool isEmpty() const { return !everything && orders.isEmpty() && groups.isEmpty(); }
};

struct PlannedAction
{
    CompensationAction action = CompensationAction::FreezeCoupon;
    QString targetTable; // user_coupon or point_log
    qint64 targetId = 0;
    qint64 keptId = 0; // the first row of the group, which stays
    qint64 orderId = 0;
    QString groupKey; // as CompensationGroup::key
    qint64 userId = 0;
    qint64 amountFen = 0; // coupon face value, or the points' cash value
    qint64 points = 0;
    bool operator==(const PlannedAction &) const = default;
};

struct CompensationPlan
{
    QList<PlannedAction> actions;
    int couponsFrozen = 0;
    int couponWriteOffs = 0;
    int couponReceivables = 0;
    int pointsReversed = 0;
    qint64 pointsTotal = 0;
    qint64 moneyFen = 0; // everything the plan corrects, in fen
    // The approved request the plan carries out; 0 for a compensation of the account's own,
    // which the database counts against its four-eyes allowance (migration 0014).
    qint64 requestId = 0;

    bool isEmpty() const { return actions.isEmpty(); }
    // Adds the action and counts it in the totals.
    void add(const PlannedAction &action);
    QString summary() const;
};

// Every live duplicate (not yet superseded) in the scope: in each (order, coupon template)
// and (order, point type) group the first row stays and every other one gets an action.
// Throws db::Error.
CompensationPlan planCompensation(const QSqlDatabase &db, const CompensationScope &scope,
                                  const CompensationSettings &settings);

struct CompensationOutcome
{
    QString batchId;
    int done = 0;
    int skipped = 0; // compensated by someone else meanwhile, or changed since the plan
    // On a Galera node, actions of a batch whose COMMIT succeeded with nothing kept: another
    // node's conflict rolled the batch back with no error. Not counted as done; the copies are
    // still open, and a run again picks them up.
    QList<PlannedAction> notKept;
    QList<qint64> negativeBalanceUsers;
    bool cancelled = false;
};

// Carries the plan out in transactions of settings.batchSize actions. Each action is
// conditional on its row still being a live duplicate in the state the plan saw, writes one
// `compensation` row (unique per target) and one audit entry. Run twice, or from two consoles
// at once, each duplicate is compensated exactly once; a failure leaves every committed batch
// complete and the rest untouched, and a rerun finishes the rest. Throws db::Error.
CompensationOutcome
executeCompensation(const QSqlDatabase &db, const CompensationPlan &plan, const QString &reason,
                    const QString &ticket, const CompensationSettings &settings,
                    const std::atomic<bool> *cancel = nullptr,
                    const std::function<void(int done, int total)> &progress = {});

} // namespace payops
