#include "mappedorders.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/duplicates/watchgaps.h"

#include <QSqlDriver>
#include <QSqlField>
#include <QSqlQuery>

#include <algorithm>

namespace payops::mapping {
namespace {

QString column(const QString &alias, const QString &name)
{
    return alias + QLatin1Char('.') + db::quoteIdentifier(name);
}

// A value from the mapping file as an SQL literal, escaped by the driver.
QString literal(const QSqlDatabase &db, const QVariant &value)
{
    QSqlField field(QString(), value.metaType());
    field.setValue(value);
    return db.driver()->formatValue(field);
}

// Named states in the mapping's order, each even at 0, then each value no state names.
QList<MappedStateCount> stateCounts(const OrdersMapping &orders,
                                    const QList<QPair<QString, qint64>> &byValue)
{
    QList<MappedStateCount> counts;
    for (const StateValue &state : orders.states)
        counts << MappedStateCount{state.state, true, 0};
    for (const auto &[value, n] : byValue) {
        bool named = false;
        for (qsizetype i = 0; i < orders.states.size(); ++i) {
            if (orders.states[i].value.toString() == value) {
                counts[i].orders += n;
                named = true;
            }
        }
        if (!named)
            counts << MappedStateCount{value, false, n};
    }
    return counts;
}

} // namespace

QString fenExpression(const QString &column, Unit unit)
{
    if (unit == Unit::Yuan)
        return QStringLiteral("CAST(%1 * 100 AS SIGNED)").arg(column);
    return QStringLiteral("CAST(%1 AS SIGNED)").arg(column);
}

QString stateNameExpression(const QSqlDatabase &db, const OrdersMapping &orders,
                            const QString &column)
{
    QString sql = QStringLiteral("CASE %1").arg(column);
    for (const StateValue &state : orders.states)
        sql += QStringLiteral(" WHEN %1 THEN '%2'").arg(literal(db, state.value), state.state);
    return sql + QStringLiteral(" ELSE CAST(%1 AS CHAR) END").arg(column);
}

PaymentSide mappedPaymentSide(const QSqlDatabase &db, const Mapping &mapping)
{
    const OrdersMapping &orders = mapping.orders;
    QString payments;
    QString firstPayNo; // of the order o.id, in the payments above
    QVariant firstKey;
    if (mapping.payments) {
        const PaymentsMapping &pay = *mapping.payments;
        const QString table = mapping.table(pay.table);
        const auto firstOf = [&](const QString &orderId) {
            return QStringLiteral("(SELECT f.%1 FROM %2 f WHERE f.%3 = %4 ORDER BY %5f.%1 LIMIT 1)")
                .arg(db::quoteIdentifier(pay.payNo), table, db::quoteIdentifier(pay.order), orderId,
                     pay.paidAt.isEmpty()
                         ? QString()
                         : QStringLiteral("f.%1, ").arg(db::quoteIdentifier(pay.paidAt)));
        };
        // A derived table the server merges into each query, so that the joins reach the
        // team's indexes (pay_no, paid_at) directly; no function of pay_no, which would hide its
        // unique index.
        payments = QStringLiteral("(SELECT x.%1 AS pay_no, x.%2 AS order_id, %3 AS amount_fen, "
                                  "%4 AS channel, %5 AS platform_paid_at, x.%1 AS id, "
                                  "IF(%6 = x.%1, 'PROCESSED', 'REJECTED') AS status, "
                                  "IF(%6 = x.%1, '', 'order_already_paid') AS reason FROM %7 x)")
                       .arg(db::quoteIdentifier(pay.payNo), db::quoteIdentifier(pay.order),
                            fenExpression(column(QStringLiteral("x"), pay.amount), pay.amountUnit),
                            pay.channel.isEmpty() ? QStringLiteral("''")
                                                  : column(QStringLiteral("x"), pay.channel),
                            pay.paidAt.isEmpty() ? QStringLiteral("NULL")
                                                 : column(QStringLiteral("x"), pay.paidAt),
                            firstOf(column(QStringLiteral("x"), pay.order)), table);
        firstPayNo = firstOf(column(QStringLiteral("y"), orders.id));
        firstKey = QByteArray("");
    } else {
        payments = QStringLiteral("pay_callback_log");
        firstPayNo =
            QStringLiteral("(SELECT f.pay_no FROM pay_callback_log f WHERE f.order_id = y.%1 "
                           "AND f.status = 'PROCESSED' ORDER BY f.id LIMIT 1)")
                .arg(db::quoteIdentifier(orders.id));
        firstKey = qint64(0);
    }
    const QString orderTable =
        QStringLiteral("(SELECT y.%1 AS id, %2 AS pay_no, %3 AS status FROM %4 y)")
            .arg(db::quoteIdentifier(orders.id), firstPayNo,
                 stateNameExpression(db, orders, column(QStringLiteral("y"), orders.status)),
                 mapping.table(orders.table));
    PaymentSide side;
    side.payments = payments;
    side.orders = orderTable;
    side.firstKey = firstKey;
    side.channelKnown = !mapping.payments || !mapping.payments->channel.isEmpty();
    if (mapping.payments)
        for (const auto &[channel, values] : mapping.payments->channels)
            side.channelValues.insert(channel, values);
    return side;
}

PaymentSide paymentSide(const QSqlDatabase &db, const std::optional<Mapping> &mapping)
{
    return mapping ? mappedPaymentSide(db, *mapping) : ownOrGatewayPaymentSide(db);
}

std::optional<QList<MappedStateCount>> mappedStateCounts(const QSqlDatabase &db,
                                                         const Mapping &mapping,
                                                         const QDateTime &since,
                                                         const std::atomic<bool> *cancel)
{
    if (cancel && cancel->load())
        return std::nullopt;
    const OrdersMapping &orders = mapping.orders;
    const QString status = db::quoteIdentifier(orders.status);
    QString sql =
        QStringLiteral("SELECT %1, COUNT(*) FROM %2 y").arg(status, mapping.table(orders.table));
    QVariantList bound;
    if (since.isValid()) {
        sql += QStringLiteral(" WHERE y.%1 >= ?").arg(db::quoteIdentifier(orders.createdAt));
        bound << since.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    }
    sql += QStringLiteral(" GROUP BY %1").arg(status);

    QList<QPair<QString, qint64>> byValue;
    QSqlQuery query = db::exec(db, sql, bound);
    while (query.next())
        byValue << qMakePair(query.value(0).toString(), query.value(1).toLongLong());
    return stateCounts(orders, byValue);
}

MappedStateTally::MappedStateTally(qint64 windowSeconds, qint64 maxOrders)
    : m_windowSeconds(windowSeconds)
    , m_maxOrders(maxOrders)
{
}

void MappedStateTally::setWindowSeconds(qint64 seconds)
{
    m_windowSeconds = seconds;
    m_loadedWindow = std::min(m_loadedWindow, seconds); // a wider one is read again
}

std::optional<QList<MappedStateCount>> MappedStateTally::advance(const QSqlDatabase &db,
                                                                 const Mapping &mapping,
                                                                 const std::atomic<bool> *cancel)
{
    m_rowsRead = 0;
    const OrdersMapping &orders = mapping.orders;
    const auto groupBy = [&] {
        return mappedStateCounts(db, mapping,
                                 QDateTime::currentDateTimeUtc().addSecs(-m_windowSeconds), cancel);
    };
    if (orders.updatedAt.isEmpty() || (m_largeWindow > 0 && m_windowSeconds >= m_largeWindow))
        return groupBy();
    if (cancel && cancel->load())
        return std::nullopt;

    // The server's clock, as the team's timestamps are written by it; and the start of its
    // oldest open transaction, whose changes may still commit with an earlier time.
    const QVariant settled = watchSettledBefore(db);
    QSqlQuery clock =
        settled.isNull()
            ? db::exec(db, QStringLiteral("SELECT UNIX_TIMESTAMP(), NULL"))
            : db::exec(db, QStringLiteral("SELECT UNIX_TIMESTAMP(), FLOOR(UNIX_TIMESTAMP(?))"),
                       {settled});
    clock.next();
    const qint64 now = clock.value(0).toLongLong();
    qint64 from = now - kLateSeconds;
    if (!clock.value(1).isNull())
        from = std::min(from, clock.value(1).toLongLong());
    const qint64 windowStart = now - m_windowSeconds;

    if (m_loadedWindow == 0 || m_windowSeconds > m_loadedWindow) {
        clear();
        if (!readOrders(db, mapping, orders.createdAt, windowStart, windowStart, cancel,
                        m_maxOrders + 1))
            return std::nullopt;
        if (m_rowsRead > m_maxOrders) { // too many to keep: counted as without updated_at
            clear();
            m_largeWindow = m_windowSeconds;
            return groupBy();
        }
        m_loadedWindow = m_windowSeconds;
    } else if (!readOrders(db, mapping, orders.updatedAt, m_readFrom, windowStart, cancel) ||
               !readOrders(db, mapping, orders.createdAt, m_readFrom, windowStart, cancel)) {
        return std::nullopt; // read again from the same moment next time
    }
    m_readFrom = from;
    while (!m_byCreated.empty() && m_byCreated.begin()->first < windowStart)
        remove(m_byCreated.begin()->second);

    QList<QPair<QString, qint64>> byValue;
    for (qsizetype i = 0; i < m_values.size(); ++i)
        if (m_counts[i] > 0)
            byValue << qMakePair(m_values[i], m_counts[i]);
    return stateCounts(orders, byValue);
}

void MappedStateTally::clear()
{
    m_loadedWindow = 0;
    m_orders.clear();
    m_byCreated.clear();
    m_values.clear();
    m_counts.clear();
}

// The orders whose `column` is at or after `from` (the first `limit` of them, when given), each
// put at its state now, or taken out when it was created before the window. False when
// cancelled.
bool MappedStateTally::readOrders(const QSqlDatabase &db, const Mapping &mapping,
                                  const QString &column, qint64 from, qint64 windowStart,
                                  const std::atomic<bool> *cancel, qint64 limit)
{
    const OrdersMapping &orders = mapping.orders;
    QSqlQuery query =
        db::exec(db,
                 QStringLiteral("SELECT y.%1, y.%2, FLOOR(UNIX_TIMESTAMP(y.%3)) FROM %4 y "
                                "WHERE y.%5 >= FROM_UNIXTIME(?)%6")
                     .arg(db::quoteIdentifier(orders.id), db::quoteIdentifier(orders.status),
                          db::quoteIdentifier(orders.createdAt), mapping.table(orders.table),
                          db::quoteIdentifier(column),
                          limit > 0 ? QStringLiteral(" LIMIT %1").arg(limit) : QString()),
                 {from});
    while (query.next()) {
        if (++m_rowsRead % 4096 == 0 && cancel && cancel->load())
            return false;
        const qint64 id = query.value(0).toLongLong();
        const qint64 created = query.value(2).toLongLong();
        if (query.value(2).isNull() || created < windowStart) {
            remove(id);
            continue;
        }
        const QString value = query.value(1).toString();
        qsizetype index = m_values.indexOf(value);
        if (index < 0) {
            index = m_values.size();
            m_values << value;
            m_counts << 0;
        }
        put(id, Order{created, int(index)});
    }
    return true;
}

void MappedStateTally::put(qint64 id, const Order &order)
{
    const auto found = m_orders.find(id);
    if (found != m_orders.end()) {
        --m_counts[found->value];
        m_byCreated.erase({found->created, id});
        *found = order;
    } else {
        m_orders.insert(id, order);
    }
    ++m_counts[order.value];
    m_byCreated.insert({order.created, id});
}

void MappedStateTally::remove(qint64 id)
{
    const auto found = m_orders.constFind(id);
    if (found == m_orders.cend())
        return;
    --m_counts[found->value];
    m_byCreated.erase({found->created, id});
    m_orders.erase(found);
}

MappedOrderEvidence loadMappedOrderEvidence(const QSqlDatabase &db, const Mapping &mapping,
                                            qint64 orderId)
{
    MappedOrderEvidence evidence;
    const OrdersMapping &orders = mapping.orders;
    const QString y = QStringLiteral("y");
    QSqlQuery order = db::exec(
        db,
        QStringLiteral("SELECT %1, %2, %3, %4, %5, %6 FROM %7 y WHERE y.%8 = ?")
            .arg(column(y, orders.user), fenExpression(column(y, orders.amount), orders.amountUnit),
                 stateNameExpression(db, orders, column(y, orders.status)),
                 column(y, orders.status), column(y, orders.createdAt),
                 orders.paidAt.isEmpty() ? QStringLiteral("NULL") : column(y, orders.paidAt),
                 mapping.table(orders.table), db::quoteIdentifier(orders.id)),
        {orderId});
    if (!order.next())
        return evidence;
    evidence.found = true;
    evidence.order.id = orderId;
    evidence.order.user = order.value(0).toLongLong();
    evidence.order.amountFen = order.value(1).toLongLong();
    evidence.order.state = order.value(2).toString();
    evidence.order.stateNamed = false;
    for (const StateValue &state : orders.states)
        evidence.order.stateNamed |= state.value.toString() == order.value(3).toString();
    evidence.order.createdAt = db::utcDateTime(order.value(4));
    evidence.order.paidAt = db::utcDateTime(order.value(5));

    // Its payments, read through reconciliation's side so that both agree on what a payment is.
    const PaymentSide side = mappedPaymentSide(db, mapping);
    QSqlQuery payments = db::exec(
        db,
        QStringLiteral("SELECT p.pay_no, p.amount_fen, p.channel, p.platform_paid_at, p.status "
                       "FROM %1 p WHERE p.order_id = ? ORDER BY p.platform_paid_at, p.id")
            .arg(side.payments),
        {orderId});
    while (payments.next()) {
        MappedPayment payment;
        payment.payNo = payments.value(0).toByteArray();
        payment.amountFen = payments.value(1).toLongLong();
        payment.channel = payments.value(2).toString();
        payment.paidAt = db::utcDateTime(payments.value(3));
        payment.status = mapping.payments ? QStringLiteral("PAID") : payments.value(4).toString();
        evidence.payments << payment;
    }

    for (const SideEffectMapping &effect : mapping.sideEffects) {
        const QString x = QStringLiteral("x");
        QStringList keys;
        for (const QString &key : effect.key)
            keys << QStringLiteral("CAST(%1 AS CHAR)").arg(column(x, key));
        QSqlQuery rows = db::exec(
            db,
            QStringLiteral(
                "SELECT x.%1, %2, %3, (%4), (%5), c.action%6 FROM %7 x "
                "LEFT JOIN mapped_compensation c ON c.business_table = ? AND c.target_id = x.%1 "
                "WHERE x.%8 = ? ORDER BY x.%1")
                .arg(db::quoteIdentifier(effect.id),
                     fenExpression(column(x, effect.value),
                                   effect.valueUnit == Unit::Yuan ? Unit::Yuan : Unit::Fen),
                     column(x, effect.createdAt), effect.live,
                     effect.used.isEmpty() ? QStringLiteral("0") : effect.used,
                     keys.isEmpty() ? QString() : QStringLiteral(", ") + keys.join(u", "),
                     mapping.table(effect.table), db::quoteIdentifier(effect.order)),
            {businessTable(db, mapping, effect), orderId});
        while (rows.next()) {
            MappedSideEffectRow row;
            row.sideEffect = effect.name;
            row.id = rows.value(0).toLongLong();
            row.value = rows.value(1).toLongLong();
            row.points = effect.valueUnit == Unit::Points;
            row.createdAt = db::utcDateTime(rows.value(2));
            row.compensated = rows.value(5).toString();
            // A row payops froze or reversed is no longer a live copy, whatever `live` says.
            row.live = rows.value(3).toBool() && row.compensated.isEmpty();
            row.used = rows.value(4).toBool();
            for (qsizetype k = 0; k < effect.key.size(); ++k)
                row.key << rows.value(6 + int(k)).toString();
            evidence.sideEffects << row;
        }
    }

    QSqlQuery callbacks =
        db::exec(db,
                 QStringLiteral("SELECT id, pay_no, amount_fen, status, reason, created_at "
                                "FROM pay_callback_log WHERE order_id = ? ORDER BY id"),
                 {orderId});
    while (callbacks.next())
        evidence.callbacks << MappedCallback{
            callbacks.value(0).toLongLong(), callbacks.value(1).toByteArray(),
            callbacks.value(2).toLongLong(), callbacks.value(3).toString(),
            callbacks.value(4).toString(),   db::utcDateTime(callbacks.value(5))};
    QSqlQuery traces =
        db::exec(db,
                 QStringLiteral("SELECT id, pay_no, instance, outcome, http_status, received_at "
                                "FROM callback_trace WHERE order_id = ? ORDER BY id"),
                 {orderId});
    while (traces.next())
        evidence.traces << MappedTrace{
            traces.value(0).toLongLong(), traces.value(1).toByteArray(),
            traces.value(2).toString(),   traces.value(3).toString(),
            traces.value(4).toInt(),      db::utcDateTime(traces.value(5))};
    return evidence;
}

} // namespace payops::mapping
