#include "paymentapplier.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QCoreApplication>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct PaymentApplier
{
    Q_DECLARE_TR_FUNCTIONS(payops::PaymentApplier)
};

void logAttempt(const QSqlDatabase &db, const CallbackRequest &request, const QString &from, bool accepted,
                const QString &reason, const QString &instance)
{
    db::exec(db, QStringLiteral("INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, accepted, reason, "
                                "instance, created_at) VALUES (?, ?, ?, 'PAID', ?, ?, ?, NOW(3))"),
             {request.orderId, request.payNo, from, accepted ? 1 : 0, reason, instance});
}

// Why a CAS moved nothing, from the order as it is now (read under the row lock the CAS
// already waited for).
std::pair<QString, QString> explainRejection(const QSqlDatabase &db, const CallbackRequest &request,
                                             const QString &fromState)
{
    QSqlQuery order = db::exec(db, QStringLiteral("SELECT status, amount_fen, currency FROM orders WHERE id = ?"),
                               {request.orderId});
    if (!order.next())
        return {QString(), QStringLiteral("unknown_order")};
    const QString status = order.value(0).toString();
    if (status != fromState) {
        if (status == QLatin1String("PAID"))
            return {status, QStringLiteral("order_already_paid")};
        if (status == QLatin1String("CLOSED"))
            return {status, QStringLiteral("order_closed")};
        return {status, QStringLiteral("order_not_payable")};
    }
    if (order.value(1).toLongLong() != request.amountFen)
        return {status, QStringLiteral("amount_mismatch")};
    // ISO 4217 codes: the column compares without case, and so does this.
    if (order.value(2).toString().compare(request.currency, Qt::CaseInsensitive) != 0)
        return {status, QStringLiteral("currency_mismatch")};
    return {status, QStringLiteral("order_changed")};
}

} // namespace

QString paymentFromState(const QSqlDatabase &db)
{
    const QString from = db::scalar(db, QStringLiteral(
        "SELECT from_state FROM order_transition WHERE to_state = 'PAID' AND event = 'pay_success_callback'")).toString();
    if (from.isEmpty())
        throw db::Error(PaymentApplier::tr("order_transition has no pay_success_callback edge into PAID; run payops "
                                           "migrate"));
    return from;
}

PaymentVerdict verdictFor(const PaymentResult &result)
{
    if (result.applied)
        return {QStringLiteral("PROCESSED"), QString(),
                CallbackAnswer::success(Outcome::Processed, {},
                                        result.suppressedBySideEffectKey > 0 ? Defence::SideEffectKey : Defence::None)};
    // The platform is told unknown_order as before, so it stops retrying; the row keeps the
    // payment as UNMATCHED instead of a final refusal, for the drain to apply once the order
    // arrives.
    const CallbackAnswer answer = CallbackAnswer::success(
        Outcome::Rejected, result.reason,
        result.reason == QLatin1String("order_already_paid") ? Defence::Cas : Defence::None);
    return {result.orderMissing() ? QStringLiteral("UNMATCHED") : QStringLiteral("REJECTED"), result.reason, answer};
}

PaymentResult applyPayment(const QSqlDatabase &db, const CallbackRequest &request, const QString &fromState,
                           const QString &instance)
{
    PaymentResult result;
    // The CAS: the database decides under its row lock; 0 rows means someone else already
    // moved this order (or it is not payable as sent), and nothing below may run.
    QSqlQuery cas = db::exec(db, QStringLiteral(
        "UPDATE orders SET status = 'PAID', paid_at = NOW(3), pay_no = ? "
        "WHERE id = ? AND status = ? AND amount_fen = ? AND currency = ?"),
        {request.payNo, request.orderId, fromState, request.amountFen, request.currency});
    if (cas.numRowsAffected() != 1) {
        const auto [current, reason] = explainRejection(db, request, fromState);
        logAttempt(db, request, current, false, reason, instance);
        result.reason = reason;
        return result;
    }
    logAttempt(db, request, fromState, true, QString(), instance);
    result.applied = true;

    // Each side effect carries its own key (uk_order_tpl, uk_order_type at level current);
    // ON DUPLICATE KEY UPDATE with no change counts 0 rows, so a refused duplicate shows.
    QSqlQuery expected = db::exec(db, QStringLiteral(
        "SELECT o.user_id, (SELECT COUNT(*) FROM coupon_template WHERE active = 1), "
        "(SELECT COUNT(*) FROM point_rule WHERE active = 1), "
        "(SELECT COALESCE(SUM(points), 0) FROM point_rule WHERE active = 1) FROM orders o WHERE o.id = ?"),
        {request.orderId});
    expected.next();
    const qint64 userId = expected.value(0).toLongLong();
    const int couponTemplates = expected.value(1).toInt();
    const int pointRules = expected.value(2).toInt();
    const qint64 rulePoints = expected.value(3).toLongLong();

    if (couponTemplates > 0) {
        QSqlQuery coupons = db::exec(db, QStringLiteral(
            "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, status, face_value_fen, pay_no) "
            "SELECT ?, ?, t.id, 'ISSUED', t.face_value_fen, ? FROM coupon_template t WHERE t.active = 1 "
            "ON DUPLICATE KEY UPDATE superseded_by = user_coupon.superseded_by"),
            {userId, request.orderId, request.payNo});
        result.couponsIssued = coupons.numRowsAffected();
        result.suppressedBySideEffectKey += couponTemplates - result.couponsIssued;
    }
    if (pointRules > 0) {
        QSqlQuery points = db::exec(db, QStringLiteral(
            "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no) "
            "SELECT ?, ?, r.point_type, r.points, ? FROM point_rule r WHERE r.active = 1 "
            "ON DUPLICATE KEY UPDATE superseded_by = point_log.superseded_by"),
            {userId, request.orderId, request.payNo});
        const int inserted = points.numRowsAffected();
        result.suppressedBySideEffectKey += pointRules - inserted;
        result.pointsAdded = inserted == pointRules
            ? rulePoints
            : db::scalar(db, QStringLiteral("SELECT COALESCE(SUM(points), 0) FROM point_log "
                                            "WHERE order_id = ? AND pay_no = ? AND reverses_id IS NULL"),
                         {request.orderId, request.payNo}).toLongLong();
        if (result.pointsAdded != 0)
            db::exec(db, QStringLiteral("UPDATE users SET points_balance = points_balance + ? WHERE id = ?"),
                     {result.pointsAdded, userId});
    }
    return result;
}

} // namespace payops
