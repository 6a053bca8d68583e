#pragma once

#include <QCoreApplication>
#include <QSqlDatabase>

namespace payops {

// SUCCESS callbacks whose order did not exist when they arrived (pay_callback_log status
// UNMATCHED). The platform was answered unknown_order and will not send them again, so
// nothing but this count and `payops drain --unmatched` stands between them and a payment
// nobody applies.
struct UnmatchedCount
{
    Q_DECLARE_TR_FUNCTIONS(payops::UnmatchedCount)

public:
    qint64 callbacks = 0;
    qint64 withOrder = 0;    // their order exists now: a payment waiting to be applied
    qint64 withOrderFen = 0; // what those callbacks paid

    qint64 withoutOrder() const { return callbacks - withOrder; }
    // "3 unmatched callback(s), 2 of them now with their order (198.00 yuan waiting to be applied)"
    QString describe() const;
};

// An index range on idx_callback_status and one primary-key look-up per callback: the set
// is as small as the late orders are few. Throws db::Error.
UnmatchedCount countUnmatched(const QSqlDatabase &db);

} // namespace payops
