#include "doublepayments.h"

#include "db/connection.h"
#include "domain/money/money.h"

#include <QSqlQuery>
#include <QStringList>

namespace payops {
namespace {

// The REJECTED rows that are second payments: a SUCCESS the CAS refused because another pay_no
// had already paid the order. `<=>` so that an order without a recorded pay_no still counts.
// Only a success is ever refused order_already_paid, whatever its platform calls it (Alipay's
// TRADE_SUCCESS, TRADE_FINISHED), so the reason alone says it.
constexpr auto kSecondPayments =
    "FROM pay_callback_log c FORCE INDEX (idx_callback_status) JOIN orders o ON o.id = c.order_id "
    "WHERE c.status = 'REJECTED' AND c.reason = 'order_already_paid' "
    "AND NOT (o.pay_no <=> c.pay_no)";

} // namespace

QString DoublePayments::describe() const
{
    if (isEmpty())
        return DoublePayments::tr("no order paid twice by the customer");
    QStringList samples;
    for (qint64 id : sampleOrderIds)
        samples << QString::number(id);
    return DoublePayments::tr(
               "%1 order(s) paid twice by the customer (%2 refused payment(s), %3 yuan to refund), "
               "e.g. orders %4")
        .arg(QString::number(orders), QString::number(callbacks), fenToYuan(refundOwedFen),
             samples.join(QStringLiteral(", ")));
}

DoublePayments countDoublePayments(const QSqlDatabase &db)
{
    DoublePayments found;
    QSqlQuery totals = db::exec(
        db, QStringLiteral(
                "SELECT COUNT(*), COUNT(DISTINCT c.order_id), COALESCE(SUM(c.amount_fen), 0) ") +
                QLatin1String(kSecondPayments));
    if (totals.next()) {
        found.callbacks = totals.value(0).toLongLong();
        found.orders = totals.value(1).toLongLong();
        found.refundOwedFen = totals.value(2).toLongLong();
    }
    if (found.isEmpty())
        return found;
    QSqlQuery samples = db::exec(db, QStringLiteral("SELECT DISTINCT c.order_id ") +
                                         QLatin1String(kSecondPayments) +
                                         QStringLiteral(" ORDER BY c.order_id LIMIT 10"));
    while (samples.next())
        found.sampleOrderIds << samples.value(0).toLongLong();
    return found;
}

} // namespace payops
