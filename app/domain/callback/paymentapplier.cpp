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

// Every statement applyPayment runs, written once: probePrivileges asks the server about these
// very texts (paymentStatements()), so it cannot say yes to an action the server refuses.
const QString kPayOrder =
    QStringLiteral("UPDATE orders SET status = 'PAID', paid_at = NOW(3), pay_no = ? "
                   "WHERE id = ? AND status = ? AND amount_fen = ? AND currency = ?");
const QString kLogAttempt =
    QStringLiteral("INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, accepted, "
                   "reason, instance, created_at) "
                   "VALUES (?, ?, ?, 'PAID', ?, ?, ?, NOW(3))");
// One row per template or rule. No ON DUPLICATE KEY UPDATE: MariaDB then wants UPDATE on
// every inserted column (user_id, order_id, ...), which no role may hold.
const QString kIssueCoupon = QStringLiteral(
    "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, status, face_value_fen, "
    "pay_no) "
    "SELECT ?, ?, t.id, 'ISSUED', t.face_value_fen, ? FROM coupon_template t WHERE t.id = ?");
const QString kAddPoints = QStringLiteral(
    "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no) "
    "SELECT ?, ?, r.point_type, r.points, ? FROM point_rule r WHERE r.point_type = ?");
const QString kCreditPoints =
    QStringLiteral("UPDATE users SET points_balance = points_balance + ? WHERE id = ?");

void logAttempt(const QSqlDatabase &db, const CallbackRequest &request, const QString &from,
                bool accepted, const QString &reason, const QString &instance)
{
    db::exec(db, kLogAttempt,
             {request.orderId, request.payNo, from, accepted ? 1 : 0, reason, instance});
}

// Inserts one side effect under its key: false when the key (uk_order_tpl, uk_order_type, at
// level current) refused it as a duplicate. A duplicate-key error undoes this statement
// only; the transaction and what it did so far stay.
bool insertUnderKey(const QSqlDatabase &db, const QString &statement, const QVariantList &binds)
{
    try {
        db::exec(db, statement, binds);
        return true;
    } catch (const db::Error &error) {
        if (error.isDuplicateKey())
            return false;
        throw;
    }
}

// Why a CAS moved nothing, from the order as it is now (read under the row lock the CAS
// already waited for).
std::pair<QString, QString> explainRejection(const QSqlDatabase &db, const CallbackRequest &request,
                                             const QString &fromState)
{
    QSqlQuery order =
        db::exec(db, QStringLiteral("SELECT status, amount_fen, currency FROM orders WHERE id = ?"),
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

QStringList paymentStatements()
{
    return {kPayOrder, kLogAttempt, kIssueCoupon, kAddPoints, kCreditPoints};
}

QString paymentFromState(const QSqlDatabase &db)
{
    const QString from =
        db::scalar(db, QStringLiteral("SELECT from_state FROM order_transition WHERE to_state = "
                                      "'PAID' AND event = 'pay_success_callback'"))
            .toString();
    if (from.isEmpty())
        throw db::Error(PaymentApplier::tr(
            "order_transition has no pay_success_callback edge into PAID; run payops "
            "migrate"));
    return from;
}

PaymentVerdict verdictFor(const PaymentResult &result)
{
    if (result.applied)
        return {QStringLiteral("PROCESSED"), QString(),
                CallbackAnswer::success(
                    Outcome::Processed, {},
                    result.suppressedBySideEffectKey > 0 ? Defence::SideEffectKey : Defence::None)};
    // The platform is told unknown_order as before, so it stops retrying; the row keeps the
    // payment as UNMATCHED instead of a final refusal, for the drain to apply once the order
    // arrives.
    const CallbackAnswer answer = CallbackAnswer::success(
        Outcome::Rejected, result.reason,
        result.reason == QLatin1String("order_already_paid") ? Defence::Cas : Defence::None);
    return {result.orderMissing() ? QStringLiteral("UNMATCHED") : QStringLiteral("REJECTED"),
            result.reason, answer};
}

PaymentResult applyPayment(const QSqlDatabase &db, const CallbackRequest &request,
                           const QString &fromState, const QString &instance)
{
    PaymentResult result;
    // The CAS: the database decides under its row lock; 0 rows means someone else already
    // moved this order (or it is not payable as sent), and nothing below may run.
    QSqlQuery cas =
        db::exec(db, kPayOrder,
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
    // a row its key refuses is counted, so a refused duplicate shows.
    const qint64 userId =
        db::scalar(db, QStringLiteral("SELECT user_id FROM orders WHERE id = ?"), {request.orderId})
            .toLongLong();
    // Read whole before the inserts, which run on the same connection.
    QList<qint64> templateIds;
    QSqlQuery templates =
        db::exec(db, QStringLiteral("SELECT id FROM coupon_template WHERE active = 1 ORDER BY id"));
    while (templates.next())
        templateIds << templates.value(0).toLongLong();
    QList<std::pair<QString, qint64>> rules;
    QSqlQuery ruleRows = db::exec(
        db, QStringLiteral(
                "SELECT point_type, points FROM point_rule WHERE active = 1 ORDER BY point_type"));
    while (ruleRows.next())
        rules.append({ruleRows.value(0).toString(), ruleRows.value(1).toLongLong()});

    for (const qint64 templateId : templateIds) {
        if (insertUnderKey(db, kIssueCoupon, {userId, request.orderId, request.payNo, templateId}))
            ++result.couponsIssued;
        else
            ++result.suppressedBySideEffectKey;
    }
    for (const auto &[pointType, points] : rules) {
        if (insertUnderKey(db, kAddPoints, {userId, request.orderId, request.payNo, pointType}))
            result.pointsAdded += points;
        else
            ++result.suppressedBySideEffectKey;
    }
    if (result.pointsAdded != 0)
        db::exec(db, kCreditPoints, {result.pointsAdded, userId});
    return result;
}

} // namespace payops
