#include "compensation.h"

#include "auditlog.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"
#include "domain/money/money.h"

#include <QCoreApplication>
#include <QHash>
#include <QSet>
#include <QStringList>
#include <QUuid>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Compensation
{
    Q_DECLARE_TR_FUNCTIONS(payops::Compensation)
};

QString orderFilter(const QList<qint64> &orderIds, const char *column)
{
    if (orderIds.isEmpty())
        return {};
    return QStringLiteral(" AND %1 IN (%2)").arg(QLatin1String(column), db::idList(orderIds));
}

// The actions of a batch whose rows are still the live duplicates the plan saw, read under
// row locks: a second compensator waits here and then finds them superseded.
QList<PlannedAction> lockStillLive(const QSqlDatabase &db, const QList<PlannedAction> &batch)
{
    QList<qint64> couponIds;
    QList<qint64> pointIds;
    for (const PlannedAction &action : batch)
        (action.targetTable == QLatin1String("user_coupon") ? couponIds : pointIds)
            << action.targetId;
    QHash<qint64, QString> couponStatus;
    if (!couponIds.isEmpty()) {
        QSqlQuery rows =
            db::exec(db, QStringLiteral("SELECT id, status FROM user_coupon WHERE id IN (%1) "
                                        "AND superseded_by IS NULL FOR UPDATE")
                             .arg(db::idList(couponIds)));
        while (rows.next())
            couponStatus.insert(rows.value(0).toLongLong(), rows.value(1).toString());
    }
    QSet<qint64> livePoints;
    if (!pointIds.isEmpty()) {
        QSqlQuery rows =
            db::exec(db, QStringLiteral(
                             "SELECT id FROM point_log WHERE id IN (%1) AND superseded_by IS NULL "
                             "AND reverses_id IS NULL FOR UPDATE")
                             .arg(db::idList(pointIds)));
        while (rows.next())
            livePoints.insert(rows.value(0).toLongLong());
    }
    QList<PlannedAction> live;
    for (const PlannedAction &action : batch) {
        const bool still =
            action.action == CompensationAction::ReversePoints
                ? livePoints.contains(action.targetId)
                : couponStatus.value(action.targetId) ==
                      (action.action == CompensationAction::FreezeCoupon ? QLatin1String("ISSUED")
                                                                         : QLatin1String("USED"));
        if (still)
            live << action;
    }
    return live;
}

// The statements of one batch, each written once for the ids it is given: applyBatch runs
// them, and compensationStatements() hands them to the privilege probe as they are (all but
// the audit entries, which fill the session's temporary audit batch).
const QString kCompensationRows =
    QStringLiteral("INSERT INTO compensation (target_table, target_id, kept_id, order_id, action, "
                   "amount_fen, points, batch_id, "
                   "request_id, reason, ticket) VALUES ");

QString couponCorrection(const QString &ids)
{
    return QStringLiteral("UPDATE user_coupon u JOIN compensation c ON c.target_table = "
                          "'user_coupon' AND c.target_id = u.id "
                          "SET u.status = IF(c.action = 'FREEZE_COUPON', 'FROZEN', u.status), "
                          "    u.frozen_at = IF(c.action = 'FREEZE_COUPON', NOW(3), u.frozen_at), "
                          "u.superseded_by = c.kept_id "
                          "WHERE u.id IN (%1)")
        .arg(ids);
}

QString pointReversals(const QString &ids)
{
    return QStringLiteral(
               "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no, reverses_id) "
               "SELECT user_id, order_id, point_type, -points, pay_no, id FROM point_log "
               "WHERE id IN (%1)")
        .arg(ids);
}

QString pointsSuperseded(const QString &ids)
{
    return QStringLiteral(
               "UPDATE point_log p JOIN compensation c ON c.target_table = 'point_log' "
               "AND c.target_id = p.id SET p.superseded_by = c.kept_id WHERE p.id IN (%1)")
        .arg(ids);
}

QString balancesCorrected(const QString &ids)
{
    return QStringLiteral(
               "UPDATE users u JOIN (SELECT user_id, SUM(points) AS points FROM point_log "
               "WHERE id IN (%1) GROUP BY user_id) d ON d.user_id = u.id "
               "SET u.points_balance = u.points_balance - d.points")
        .arg(ids);
}

// The audit entries are read back from the rows a batch just wrote, so that they say what the
// database now holds (the reversal row, the balance after it); in action order. By target, not
// by batch id: a run's batches share one id, so that would read every earlier batch's rows again.
// One statement per table, coupons first as the plan lists them: a coupon's entry needs no
// reversal row or balance, and joining them for it cost a lookup per entry.
// They go into the audit batch, which the batch's end chains in one statement.
const QString kAuditEntries =
    auditBatchInsert() + QStringLiteral("SELECT CONCAT('compensation.', LOWER(c.action)), "
                                        "CONCAT(c.target_table, ':', c.target_id), c.reason, "
                                        "c.ticket, ");

QString couponAuditEntries(const QString &ids)
{
    return kAuditEntries +
           QStringLiteral(
               "IF(c.action = 'FREEZE_COUPON', "
               "   JSON_OBJECT('id', c.target_id, 'superseded_by', NULL, 'status', 'ISSUED'), "
               "   JSON_OBJECT('id', c.target_id, 'superseded_by', NULL)), "
               "IF(c.action = 'FREEZE_COUPON', "
               "   JSON_OBJECT('id', c.target_id, 'superseded_by', c.kept_id, 'order_id', "
               "c.order_id, 'amount_fen', c.amount_fen, 'status', 'FROZEN'), "
               "   JSON_OBJECT('id', c.target_id, 'superseded_by', c.kept_id, 'order_id', "
               "c.order_id, 'amount_fen', c.amount_fen)) "
               "FROM compensation c "
               "WHERE c.target_table = 'user_coupon' AND c.target_id IN (%1) ORDER BY c.id")
               .arg(ids);
}

QString pointAuditEntries(const QString &ids)
{
    return kAuditEntries +
           QStringLiteral(
               "JSON_OBJECT('id', c.target_id, 'superseded_by', NULL), "
               "JSON_OBJECT('id', c.target_id, 'superseded_by', c.kept_id, 'order_id', c.order_id, "
               "'amount_fen', c.amount_fen, 'reversal_id', r.id, 'points', -c.points, "
               "'user_balance', u.points_balance) "
               "FROM compensation c "
               "LEFT JOIN point_log r ON r.reverses_id = c.target_id "
               "LEFT JOIN users u ON u.id = r.user_id "
               "WHERE c.target_table = 'point_log' AND c.target_id IN (%1) ORDER BY c.id")
               .arg(ids);
}

// On a Galera node, the batch's first write (its compensation rows) must still be there before
// COMMIT: a conflict from another node can roll the transaction back without an error reaching
// any statement (docs/decisions/0065-galera-roll-back-without-error.md), and the reversals and
// balances that ran after it would then commit with no compensation row to say so, to be
// compensated again by the next run.
void requireCompensationRows(const QSqlDatabase &db, const QString &batchId,
                             const QList<qint64> &couponIds, const QList<qint64> &pointIds)
{
    if (!db::isClusterNode(db))
        return;
    const qint64 there =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM compensation WHERE batch_id = ? AND "
                                  "((target_table = 'user_coupon' AND target_id IN (%1)) OR "
                                  "(target_table = 'point_log' AND target_id IN (%2)))")
                       .arg(couponIds.isEmpty() ? QStringLiteral("0") : db::idList(couponIds),
                            pointIds.isEmpty() ? QStringLiteral("0") : db::idList(pointIds)),
                   {batchId})
            .toLongLong();
    if (there != couponIds.size() + pointIds.size())
        throw db::rolledBackByAnotherNode(QStringLiteral("a compensation batch"));
}

// One batch as a handful of set-based statements: the compensation rows, the corrections
// they describe, the balances, and one audit entry per action. Returns users whose balance
// went below zero.
QList<qint64> applyBatch(const QSqlDatabase &db, const QList<PlannedAction> &actions,
                         const QString &batchId, qint64 requestId, const QString &reason,
                         const QString &ticket)
{
    QList<QVariantList> rows;
    QList<qint64> couponIds;
    QList<qint64> pointIds;
    QList<qint64> pointUsers;
    for (const PlannedAction &action : actions) {
        rows << QVariantList{action.targetTable,
                             action.targetId,
                             action.keptId,
                             action.orderId,
                             compensationActionName(action.action),
                             action.amountFen,
                             action.points,
                             batchId,
                             requestId > 0 ? QVariant(requestId) : QVariant(),
                             reason,
                             ticket};
        if (action.targetTable == QLatin1String("user_coupon")) {
            couponIds << action.targetId;
        } else {
            pointIds << action.targetId;
            pointUsers << action.userId;
        }
    }
    // Who and when are the database's own (the trigger of migration 0014 sets them), not
    // something the client says.
    db::execDirect(db, kCompensationRows + db::valueRows(db, rows));
    openAuditBatch(db);
    if (!couponIds.isEmpty()) {
        const QString ids = db::idList(couponIds);
        db::execDirect(db, couponCorrection(ids));
        db::execDirect(db, couponAuditEntries(ids));
    }
    QList<qint64> negative;
    if (!pointIds.isEmpty()) {
        const QString ids = db::idList(pointIds);
        db::execDirect(db, pointReversals(ids));
        db::execDirect(db, pointsSuperseded(ids));
        db::execDirect(db, balancesCorrected(ids));
        QSqlQuery below = db::exec(
            db, QStringLiteral(
                    "SELECT id FROM users WHERE id IN (%1) AND points_balance < 0 ORDER BY id")
                    .arg(db::idList(pointUsers)));
        while (below.next())
            negative << below.value(0).toLongLong();
        db::execDirect(db, pointAuditEntries(ids));
    }
    appendAuditBatch(db);
    requireCompensationRows(db, batchId, couponIds, pointIds);
    return negative;
}

struct BatchResult
{
    QList<PlannedAction> live; // the actions the batch took, in plan order
    QList<qint64> negative;    // users whose balance went below zero
};

// One batch, its transaction run again after a deadlock (runAudited): each run locks and checks
// its rows again, so that copies another node compensated meanwhile are skipped.
BatchResult runBatch(const QSqlDatabase &db, const QList<PlannedAction> &batch,
                     const QString &batchId, qint64 requestId, const QString &reason,
                     const QString &ticket)
{
    return runAudited([&] {
        BatchResult result;
        db::Transaction transaction(db);
        result.live = lockStillLive(db, batch);
        if (!result.live.isEmpty())
            result.negative = applyBatch(db, result.live, batchId, requestId, reason, ticket);
        transaction.commit();
        return result;
    });
}

// On a Galera node, the actions whose compensation row the commit kept. A conflict from another
// node after requireCompensationRows() can roll the batch back with no error to any statement,
// and the COMMIT then succeeds with nothing in it (decision 0065): read back, as a record-only
// batch reads its callbacks back, so that only what stayed is counted as done.
QList<PlannedAction> keptByCommit(const QSqlDatabase &db, const QList<PlannedAction> &live,
                                  const QString &batchId)
{
    if (live.isEmpty() || !db::isClusterNode(db))
        return live;
    QList<qint64> ids;
    for (const PlannedAction &action : live)
        ids << action.targetId;
    QSet<QPair<QString, qint64>> there;
    QSqlQuery rows = db::exec(db,
                              QStringLiteral("SELECT target_table, target_id FROM compensation "
                                             "WHERE batch_id = ? AND target_id IN (%1)")
                                  .arg(db::idList(ids)),
                              {batchId});
    while (rows.next())
        there.insert({rows.value(0).toString(), rows.value(1).toLongLong()});
    QList<PlannedAction> kept;
    for (const PlannedAction &action : live)
        if (there.contains({action.targetTable, action.targetId}))
            kept << action;
    return kept;
}

} // namespace

QStringList compensationStatements()
{
    const QString none = QStringLiteral("0");
    return {kCompensationRows + QStringLiteral("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            couponCorrection(none), pointReversals(none), pointsSuperseded(none),
            balancesCorrected(none)};
}

QString compensationActionName(CompensationAction action)
{
    switch (action) {
    case CompensationAction::FreezeCoupon:
        return QStringLiteral("FREEZE_COUPON");
    case CompensationAction::WriteOffCoupon:
        return QStringLiteral("WRITE_OFF_COUPON");
    case CompensationAction::ReceivableCoupon:
        return QStringLiteral("RECEIVABLE_COUPON");
    case CompensationAction::ReversePoints:
        return QStringLiteral("REVERSE_POINTS");
    }
    return {};
}

QString CompensationPlan::summary() const
{
    return Compensation::tr("%1 coupon(s) to freeze, %2 used coupon(s) to write off, %3 used "
                            "coupon(s) as receivable, "
                            "%4 points row(s) to reverse (%5 points); %6 yuan in all")
        .arg(QString::number(couponsFrozen), QString::number(couponWriteOffs),
             QString::number(couponReceivables), QString::number(pointsReversed),
             QString::number(pointsTotal), fenToYuan(moneyFen));
}

void CompensationPlan::add(const PlannedAction &action)
{
    switch (action.action) {
    case CompensationAction::FreezeCoupon:
        ++couponsFrozen;
        break;
    case CompensationAction::WriteOffCoupon:
        ++couponWriteOffs;
        break;
    case CompensationAction::ReceivableCoupon:
        ++couponReceivables;
        break;
    case CompensationAction::ReversePoints:
        ++pointsReversed;
        pointsTotal += action.points;
        break;
    }
    moneyFen += action.amountFen;
    actions << action;
}

CompensationPlan planCompensation(const QSqlDatabase &db, const CompensationScope &scope,
                                  const CompensationSettings &settings)
{
    if (scope.isEmpty())
        return {};
    // Orders narrow the statements; single groups are then picked from their orders' plan.
    QList<qint64> orderIds = scope.orders;
    for (const CompensationGroup &group : scope.groups) {
        if (!orderIds.contains(group.orderId))
            orderIds << group.orderId;
    }
    const auto inScope = [&scope](const PlannedAction &action) {
        return scope.everything || scope.orders.contains(action.orderId) ||
               scope.groups.contains(CompensationGroup{action.orderId, action.groupKey});
    };
    CompensationPlan plan;
    QSqlQuery coupons = db::exec(
        db, QStringLiteral(
                "SELECT u.id, k.kept_id, u.order_id, u.user_id, u.status, u.face_value_fen, "
                "u.coupon_template_id FROM user_coupon u "
                "JOIN (SELECT order_id, coupon_template_id, MIN(id) AS kept_id FROM user_coupon "
                "WHERE superseded_by IS NULL%1 "
                "      GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1) k "
                "  ON k.order_id = u.order_id AND k.coupon_template_id = u.coupon_template_id "
                "WHERE u.superseded_by IS NULL AND u.id <> k.kept_id AND u.status IN ('ISSUED', "
                "'USED') ORDER BY u.id")
                .arg(orderFilter(orderIds, "order_id")));
    while (coupons.next()) {
        PlannedAction action;
        action.targetTable = QStringLiteral("user_coupon");
        action.targetId = coupons.value(0).toLongLong();
        action.keptId = coupons.value(1).toLongLong();
        action.orderId = coupons.value(2).toLongLong();
        action.userId = coupons.value(3).toLongLong();
        action.amountFen = coupons.value(5).toLongLong();
        action.groupKey = QStringLiteral("coupon:") + coupons.value(6).toString();
        if (coupons.value(4).toString() == QLatin1String("ISSUED"))
            action.action = CompensationAction::FreezeCoupon;
        else if (settings.usedCoupons == UsedCouponPolicy::WriteOff)
            action.action = CompensationAction::WriteOffCoupon;
        else
            action.action = CompensationAction::ReceivableCoupon;
        if (inScope(action))
            plan.add(action);
    }
    QSqlQuery points = db::exec(
        db, QStringLiteral("SELECT p.id, k.kept_id, p.order_id, p.user_id, p.points, p.point_type "
                           "FROM point_log p "
                           "JOIN (SELECT order_id, point_type, MIN(id) AS kept_id FROM point_log "
                           "      WHERE superseded_by IS NULL AND reverses_id IS NULL%1 "
                           "      GROUP BY order_id, point_type HAVING COUNT(*) > 1) k "
                           "  ON k.order_id = p.order_id AND k.point_type = p.point_type "
                           "WHERE p.superseded_by IS NULL AND p.reverses_id IS NULL AND p.id <> "
                           "k.kept_id ORDER BY p.id")
                .arg(orderFilter(orderIds, "order_id")));
    while (points.next()) {
        PlannedAction action;
        action.action = CompensationAction::ReversePoints;
        action.targetTable = QStringLiteral("point_log");
        action.targetId = points.value(0).toLongLong();
        action.keptId = points.value(1).toLongLong();
        action.orderId = points.value(2).toLongLong();
        action.userId = points.value(3).toLongLong();
        action.points = points.value(4).toLongLong();
        action.amountFen = action.points * settings.fenPerHundredPoints / 100;
        action.groupKey = QStringLiteral("points:") + points.value(5).toString();
        if (inScope(action))
            plan.add(action);
    }
    return plan;
}

CompensationOutcome executeCompensation(const QSqlDatabase &db, const CompensationPlan &plan,
                                        const QString &reason, const QString &ticket,
                                        const CompensationSettings &settings,
                                        const std::atomic<bool> *cancel,
                                        const std::function<void(int done, int total)> &progress)
{
    if (reason.trimmed().isEmpty() || ticket.trimmed().isEmpty())
        throw db::Error(Compensation::tr("a compensation needs a reason and a ticket"));
    CompensationOutcome outcome;
    outcome.batchId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const int total = int(plan.actions.size());
    for (int start = 0; start < total; start += settings.batchSize) {
        if (cancel && cancel->load()) {
            outcome.cancelled = true;
            break;
        }
        const int end = std::min(total, start + settings.batchSize);
        const BatchResult batch =
            runBatch(db, plan.actions.mid(start, end - start), outcome.batchId, plan.requestId,
                     reason.trimmed().left(255), ticket.trimmed().left(64));
        const QList<PlannedAction> kept = keptByCommit(db, batch.live, outcome.batchId);
        for (const PlannedAction &action : batch.live)
            if (!kept.contains(action))
                outcome.notKept << action;
        outcome.done += int(kept.size());
        outcome.skipped += (end - start) - int(batch.live.size());
        for (qint64 user : batch.negative) {
            if (!outcome.negativeBalanceUsers.contains(user))
                outcome.negativeBalanceUsers << user;
        }
        if (progress)
            progress(end, total);
    }
    return outcome;
}

} // namespace payops
