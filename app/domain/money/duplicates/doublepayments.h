#pragma once

#include <QCoreApplication>
#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops {

// Orders the customer paid twice: the order was paid by one pay_no, and a SUCCESS callback of
// another pay_no for it was refused order_already_paid. The platform took that second payment
// all the same, so it is money owed back to the customer (a refund), not a duplicate to undo.
struct DoublePayments
{
    Q_DECLARE_TR_FUNCTIONS(payops::DoublePayments)

public:
    qint64 orders = 0;            // orders with at least one such second payment
    qint64 callbacks = 0;         // the refused payments
    qint64 refundOwedFen = 0;     // what those payments took from the customers
    QList<qint64> sampleOrderIds; // up to ten, lowest first

    bool isEmpty() const { return callbacks == 0; }
    // "2 order(s) paid twice by the customer (2 refused payment(s), 198.00 yuan to refund), e.g.
    // orders 1001, 1002"
    QString describe() const;
};

// One range of idx_callback_status (status, id) over the REJECTED callbacks, each joined to its
// order by primary key: the cost is the number of refused payments ever, which grows with
// refusals, not with callbacks or orders (see docs/decisions/0031-refunds-owed-index-range.md).
// Throws db::Error.
DoublePayments countDoublePayments(const QSqlDatabase &db);

} // namespace payops
