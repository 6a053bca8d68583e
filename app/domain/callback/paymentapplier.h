#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace payops {

struct PaymentResult
{
    bool applied = false; // the order moved to PAID and the side effects were issued
    QString reason;       // why not: unknown_order, amount_mismatch, order_already_paid, ...
    int couponsIssued = 0;
    qint64 pointsAdded = 0;
    int suppressedBySideEffectKey = 0; // side effects a unique key refused (current level)

    // The order is not in the database (yet): replication lag or an order writer that is
    // late. Not a business refusal: the payment waits for its order.
    bool orderMissing() const { return !applied && reason == QLatin1String("unknown_order"); }
};

// What a SUCCESS callback's pay_callback_log row becomes after applyPayment, and its answer.
struct PaymentVerdict
{
    QString status; // PROCESSED, UNMATCHED (waits for `payops drain --unmatched`) or REJECTED
    QString reason;
    CallbackAnswer answer;
};
PaymentVerdict verdictFor(const PaymentResult &result);

// The state-machine edge a successful payment callback takes, from order_transition: the
// one definition the service's CAS and the console's diagram share. Throws db::Error.
QString paymentFromState(const QSqlDatabase &db);

// The statements applyPayment may run that change rows, as it runs them: what an account
// needs to pay an order (probePrivileges).
QStringList paymentStatements();

// Applies one SUCCESS callback inside the caller's open transaction: the CAS from
// `fromState` with its affected rows checked, the attempt written to order_state_log
// (accepted or rejected), and only when the CAS moved the order, each side effect under
// its own key. Used by the live endpoint and the backlog drain alike. Throws db::Error.
PaymentResult applyPayment(const QSqlDatabase &db, const CallbackRequest &request,
                           const QString &fromState, const QString &instance);

} // namespace payops
