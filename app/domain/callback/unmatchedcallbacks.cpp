#include "unmatchedcallbacks.h"

#include "db/connection.h"
#include "domain/money/money.h"

#include <QSqlQuery>

namespace payops {

QString UnmatchedCount::describe() const
{
    if (callbacks == 0)
        return UnmatchedCount::tr("no unmatched callbacks");
    if (withOrder == 0)
        return UnmatchedCount::tr("%1 unmatched callback(s), 0 of them now with their order")
            .arg(callbacks);
    return UnmatchedCount::tr(
               "%1 unmatched callback(s), %2 of them now with their order (%3 yuan waiting to be "
               "applied)")
        .arg(QString::number(callbacks), QString::number(withOrder), fenToYuan(withOrderFen));
}

UnmatchedCount countUnmatched(const QSqlDatabase &db)
{
    QSqlQuery query =
        db::exec(db, QStringLiteral("SELECT COUNT(*), COALESCE(SUM(o.id IS NOT NULL), 0), "
                                    "COALESCE(SUM(IF(o.id IS NULL, 0, c.amount_fen)), 0) "
                                    "FROM pay_callback_log c LEFT JOIN orders o ON o.id = "
                                    "c.order_id WHERE c.status = 'UNMATCHED'"));
    UnmatchedCount count;
    if (query.next()) {
        count.callbacks = query.value(0).toLongLong();
        count.withOrder = query.value(1).toLongLong();
        count.withOrderFen = query.value(2).toLongLong();
    }
    return count;
}

} // namespace payops
