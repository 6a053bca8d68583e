#include "compensation.h"

#include "auditlog.h"
#include "db/connection.h"
#include "db/dberror.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <QUuid>

namespace payops {
namespace {

QString orderFilter(const QList<qint64> &orderIds, const char *column)
{
    if (orderIds.isEmpty())
        return {};
    QStringList ids;
    for (qint64 id : orderIds)
        ids << QString::number(id);
    return QStringLiteral(" AND %1 IN (%2)").arg(QLatin1String(column), ids.join(QLatin1Char(',')));
}

QString json(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// Marks the target superseded if, and only if, it still is the live duplicate the plan saw.
// The UPDATE's row lock is what makes two compensators at once take turns.
bool claimTarget(const QSqlDatabase &db, const PlannedAction &action)
{
    QString sql;
    switch (action.action) {
    case CompensationAction::FreezeCoupon:
        sql = QStringLiteral("UPDATE user_coupon SET status = 'FROZEN', frozen_at = NOW(3), superseded_by = ? "
                             "WHERE id = ? AND superseded_by IS NULL AND status = 'ISSUED'");
        break;
    case CompensationAction::WriteOffCoupon:
    case CompensationAction::ReceivableCoupon:
        sql = QStringLiteral("UPDATE user_coupon SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL AND status = 'USED'");
        break;
    case CompensationAction::ReversePoints:
        sql = QStringLiteral("UPDATE point_log SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL AND reverses_id IS NULL");
        break;
    }
    return db::exec(db, sql, {action.keptId, action.targetId}).numRowsAffected() == 1;
}

// Returns true when the user's balance went below zero.
bool applyAction(const QSqlDatabase &db, const PlannedAction &action, const QString &batchId, const QString &reason,
                 const QString &ticket)
{
    db::exec(db, QStringLiteral("INSERT INTO compensation (target_table, target_id, kept_id, order_id, action, amount_fen, "
                                "points, batch_id, reason, ticket, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, USER())"),
             {action.targetTable, action.targetId, action.keptId, action.orderId, compensationActionName(action.action),
              action.amountFen, action.points, batchId, reason.left(255), ticket.left(64)});
    QJsonObject before{{QStringLiteral("id"), action.targetId}, {QStringLiteral("superseded_by"), QJsonValue()}};
    QJsonObject after{{QStringLiteral("id"), action.targetId}, {QStringLiteral("superseded_by"), action.keptId},
                      {QStringLiteral("order_id"), action.orderId}, {QStringLiteral("amount_fen"), action.amountFen}};
    bool negative = false;
    if (action.action == CompensationAction::FreezeCoupon) {
        before.insert(QStringLiteral("status"), QStringLiteral("ISSUED"));
        after.insert(QStringLiteral("status"), QStringLiteral("FROZEN"));
    } else if (action.action == CompensationAction::ReversePoints) {
        const QSqlQuery reversal = db::exec(db, QStringLiteral(
            "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no, reverses_id) "
            "SELECT user_id, order_id, point_type, -points, pay_no, id FROM point_log WHERE id = ?"), {action.targetId});
        db::exec(db, QStringLiteral("UPDATE users SET points_balance = points_balance - ? WHERE id = ?"),
                 {action.points, action.userId});
        const qint64 balance = db::scalar(db, QStringLiteral("SELECT points_balance FROM users WHERE id = ?"),
                                          {action.userId}).toLongLong();
        negative = balance < 0;
        after.insert(QStringLiteral("reversal_id"), reversal.lastInsertId().toLongLong());
        after.insert(QStringLiteral("points"), -action.points);
        after.insert(QStringLiteral("balance"), balance);
    }
    appendAudit(db, QStringLiteral("compensation.") + compensationActionName(action.action).toLower(),
                QStringLiteral("%1:%2").arg(action.targetTable).arg(action.targetId), reason, ticket, json(before),
                json(after));
    return negative;
}

} // namespace

QString compensationActionName(CompensationAction action)
{
    switch (action) {
    case CompensationAction::FreezeCoupon: return QStringLiteral("FREEZE_COUPON");
    case CompensationAction::WriteOffCoupon: return QStringLiteral("WRITE_OFF_COUPON");
    case CompensationAction::ReceivableCoupon: return QStringLiteral("RECEIVABLE_COUPON");
    case CompensationAction::ReversePoints: return QStringLiteral("REVERSE_POINTS");
    }
    return {};
}

QString CompensationPlan::summary() const
{
    return QStringLiteral("%1 coupon(s) to freeze, %2 used coupon(s) to write off, %3 used coupon(s) as receivable, "
                          "%4 points row(s) to reverse (%5 points); %6.%7 yuan in all")
        .arg(couponsFrozen).arg(couponWriteOffs).arg(couponReceivables).arg(pointsReversed).arg(pointsTotal)
        .arg(moneyFen / 100).arg(moneyFen % 100, 2, 10, QLatin1Char('0'));
}

CompensationPlan planCompensation(const QSqlDatabase &db, const QList<qint64> &orderIds,
                                  const CompensationSettings &settings)
{
    CompensationPlan plan;
    QSqlQuery coupons = db::exec(db, QStringLiteral(
        "SELECT u.id, k.kept_id, u.order_id, u.user_id, u.status, u.face_value_fen FROM user_coupon u "
        "JOIN (SELECT order_id, coupon_template_id, MIN(id) AS kept_id FROM user_coupon WHERE superseded_by IS NULL%1 "
        "      GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1) k "
        "  ON k.order_id = u.order_id AND k.coupon_template_id = u.coupon_template_id "
        "WHERE u.superseded_by IS NULL AND u.id <> k.kept_id AND u.status IN ('ISSUED', 'USED') ORDER BY u.id")
                                                .arg(orderFilter(orderIds, "order_id")));
    while (coupons.next()) {
        PlannedAction action;
        action.targetTable = QStringLiteral("user_coupon");
        action.targetId = coupons.value(0).toLongLong();
        action.keptId = coupons.value(1).toLongLong();
        action.orderId = coupons.value(2).toLongLong();
        action.userId = coupons.value(3).toLongLong();
        action.amountFen = coupons.value(5).toLongLong();
        if (coupons.value(4).toString() == QLatin1String("ISSUED")) {
            action.action = CompensationAction::FreezeCoupon;
            ++plan.couponsFrozen;
        } else if (settings.usedCoupons == UsedCouponPolicy::WriteOff) {
            action.action = CompensationAction::WriteOffCoupon;
            ++plan.couponWriteOffs;
        } else {
            action.action = CompensationAction::ReceivableCoupon;
            ++plan.couponReceivables;
        }
        plan.moneyFen += action.amountFen;
        plan.actions << action;
    }
    QSqlQuery points = db::exec(db, QStringLiteral(
        "SELECT p.id, k.kept_id, p.order_id, p.user_id, p.points FROM point_log p "
        "JOIN (SELECT order_id, point_type, MIN(id) AS kept_id FROM point_log "
        "      WHERE superseded_by IS NULL AND reverses_id IS NULL%1 "
        "      GROUP BY order_id, point_type HAVING COUNT(*) > 1) k "
        "  ON k.order_id = p.order_id AND k.point_type = p.point_type "
        "WHERE p.superseded_by IS NULL AND p.reverses_id IS NULL AND p.id <> k.kept_id ORDER BY p.id")
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
        ++plan.pointsReversed;
        plan.pointsTotal += action.points;
        plan.moneyFen += action.amountFen;
        plan.actions << action;
    }
    return plan;
}

CompensationOutcome executeCompensation(const QSqlDatabase &db, const CompensationPlan &plan, const QString &reason,
                                        const QString &ticket, const CompensationSettings &settings,
                                        const std::atomic<bool> *cancel,
                                        const std::function<void(int done, int total)> &progress)
{
    if (reason.trimmed().isEmpty() || ticket.trimmed().isEmpty())
        throw db::Error(QStringLiteral("a compensation needs a reason and a ticket"));
    CompensationOutcome outcome;
    outcome.batchId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const int total = int(plan.actions.size());
    for (int start = 0; start < total; start += settings.batchSize) {
        if (cancel && cancel->load()) {
            outcome.cancelled = true;
            break;
        }
        const int end = std::min(total, start + settings.batchSize);
        int done = 0;
        int skipped = 0;
        QList<qint64> negative;
        db::Transaction transaction(db);
        for (int i = start; i < end; ++i) {
            const PlannedAction &action = plan.actions.at(i);
            if (!claimTarget(db, action)) {
                ++skipped;
                continue;
            }
            if (applyAction(db, action, outcome.batchId, reason.trimmed(), ticket.trimmed()) && !negative.contains(action.userId))
                negative << action.userId;
            ++done;
        }
        transaction.commit();
        outcome.done += done;
        outcome.skipped += skipped;
        for (qint64 user : std::as_const(negative)) {
            if (!outcome.negativeBalanceUsers.contains(user))
                outcome.negativeBalanceUsers << user;
        }
        if (progress)
            progress(end, total);
    }
    return outcome;
}

} // namespace payops
