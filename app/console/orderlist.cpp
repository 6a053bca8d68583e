#include "orderlist.h"

#include "db/connection.h"

#include <QCoreApplication>
#include <QSqlQuery>

namespace payops::console {

QString OrderSelection::describe() const
{
    switch (kind) {
    case Kind::State:
        return QCoreApplication::translate("payops::console::OrderSelection", "orders now in %1")
            .arg(state);
    case Kind::Edge:
        // Whole sentences: "rejected" and "accepted" sit elsewhere in a Chinese one.
        return (rejected ? QCoreApplication::translate("payops::console::OrderSelection",
                                                       "orders with rejected %1 → %2")
                         : QCoreApplication::translate("payops::console::OrderSelection",
                                                       "orders with accepted %1 → %2"))
            .arg(from, to);
    case Kind::None:
        break;
    }
    return QString();
}

QList<OrderRow> readOrderRows(const QSqlDatabase &db, const QString &condition,
                              const QVariantList &binds)
{
    QSqlQuery query = db::exec(
        db,
        QStringLiteral(
            "SELECT o.id, o.user_id, o.status, o.amount_fen, o.pay_no, CAST(o.created_at AS CHAR), "
            "       CAST(o.paid_at AS CHAR) FROM orders o ") +
            condition,
        binds);
    QList<OrderRow> rows;
    while (query.next()) {
        OrderRow row;
        row.id = query.value(0).toLongLong();
        row.userId = query.value(1).toLongLong();
        row.status = query.value(2).toString();
        row.amountFen = query.value(3).toLongLong();
        row.payNo = query.value(4).toByteArray();
        row.createdMicros = microsFromSql(query.value(5));
        row.paidMicros = microsFromSql(query.value(6));
        rows << row;
    }
    return rows;
}

QList<OrderRow> loadOrderPage(const QSqlDatabase &db, const OrderSelection &selection,
                              qint64 afterId, int limit)
{
    if (selection.kind == OrderSelection::Kind::None)
        return {};
    QString sql = QStringLiteral("WHERE o.id > ?");
    QVariantList binds{afterId};
    if (selection.kind == OrderSelection::Kind::State) {
        sql += QStringLiteral(" AND o.status = ?");
        binds << selection.state;
    } else {
        sql += QStringLiteral(
            " AND o.id IN (SELECT l.order_id FROM order_state_log l WHERE l.from_state = ? "
            "AND l.to_state = ? AND l.accepted = ?");
        binds << selection.from << selection.to << (selection.rejected ? 0 : 1);
        if (!selection.window.isAll()) {
            sql += QStringLiteral(" AND l.created_at >= ?");
            binds << selection.window.fromText();
        }
        sql += QLatin1Char(')');
    }
    sql += QStringLiteral(" ORDER BY o.id LIMIT %1").arg(limit);
    return readOrderRows(db, sql, binds);
}

} // namespace payops::console
