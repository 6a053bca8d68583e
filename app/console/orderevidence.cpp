#include "orderevidence.h"

#include "db/connection.h"
#include "domain/callback/notification.h"
#include "domain/mapping/mappedorders.h"
#include "domain/money/money.h"

#include <QHash>
#include <QMap>
#include <QSqlQuery>

#include <algorithm>

namespace payops::console {
namespace {

const QString &sideEffectLane()
{
    static const QString lane = QStringLiteral("side effects");
    return lane;
}

// A side effect has no instance column; it belongs to the callback whose transaction was
// open when it was written.
QString laneAt(const QList<CallbackTrace> &traces, qint64 micros)
{
    for (const CallbackTrace &t : traces) {
        const qint64 begin = t.txBegin ? t.txBegin : t.received;
        const qint64 end = t.committed ? t.committed : t.responded;
        if (begin && end && micros >= begin && micros <= end)
            return t.instance;
    }
    return sideEffectLane();
}

// The traces `where` picks (over callback_trace), with `binds` for its placeholders.
void loadTraces(const QSqlDatabase &db, const QString &where, const QVariantList &binds,
                OrderEvidence &evidence)
{
    QSqlQuery q = db::exec(db,
                           QStringLiteral("SELECT pay_no, instance, handler, CAST(received_at AS "
                                          "CHAR), CAST(lock_acquired_at AS CHAR), "
                                          "CAST(tx_begin_at AS CHAR), CAST(committed_at AS CHAR), "
                                          "CAST(lock_released_at AS CHAR), "
                                          "CAST(responded_at AS CHAR), outcome, http_status, "
                                          "CAST(forwarded_at AS CHAR), "
                                          "CAST(upstream_answered_at AS CHAR), upstream_status, "
                                          "event FROM callback_trace WHERE %1 "
                                          "ORDER BY received_at, id")
                               .arg(where),
                           binds);
    while (q.next()) {
        CallbackTrace t;
        t.payNo = q.value(0).toByteArray();
        t.instance = q.value(1).toString();
        t.handler = q.value(2).toString();
        t.received = microsFromSql(q.value(3));
        t.lockAcquired = microsFromSql(q.value(4));
        t.txBegin = microsFromSql(q.value(5));
        t.committed = microsFromSql(q.value(6));
        t.lockReleased = microsFromSql(q.value(7));
        t.responded = microsFromSql(q.value(8));
        t.outcome = q.value(9).toString();
        t.httpStatus = q.value(10).toInt();
        t.forwarded = microsFromSql(q.value(11));
        t.upstreamAnswered = microsFromSql(q.value(12));
        t.upstreamStatus = q.value(13).toInt();
        t.event = q.value(14).toByteArray();
        evidence.traces << t;
    }
}

// The callbacks `where` picks (over pay_callback_log and the later events of callback_event,
// which share those columns), as received and as events.
void loadCallbacks(const QSqlDatabase &db, const QString &where, const QVariantList &binds,
                   OrderEvidence &evidence)
{
    using Kind = EvidenceEvent::Kind;
    const QString columns =
        QStringLiteral("instance, CAST(created_at AS CHAR) AS created, pay_no, status, %1, "
                       "response_code, id, wire_format, raw_headers, raw_body, gateway, forwards, "
                       "upstream_status, upstream_error, %2 AS event ");
    QSqlQuery callbacks =
        db::exec(db,
                 QStringLiteral("SELECT ") +
                     columns.arg(QStringLiteral("reason"), QStringLiteral("CAST('' AS BINARY)")) +
                     QStringLiteral("FROM pay_callback_log WHERE ") + where +
                     QStringLiteral(" UNION ALL SELECT ") +
                     columns.arg(QStringLiteral("''"), QStringLiteral("event")) +
                     QStringLiteral("FROM callback_event WHERE ") + where +
                     QStringLiteral(" ORDER BY created, event, id"),
                 binds + binds);
    while (callbacks.next()) {
        EvidenceCallback callback;
        callback.payNo = callbacks.value(2).toByteArray();
        callback.event = callbacks.value(14).toByteArray();
        callback.status = callbacks.value(3).toString();
        callback.id = callbacks.value(6).toLongLong();
        callback.wireFormat = callbacks.value(7).toString();
        callback.rawHeaders = callbacks.value(8).toByteArray();
        callback.rawBody = callbacks.value(9).toByteArray();
        callback.gateway = callbacks.value(10).toBool();
        callback.forwards = callbacks.value(11).toInt();
        callback.upstreamStatus = callbacks.value(12).toInt();
        callback.upstreamError = callbacks.value(13).toString();
        evidence.callbacks << callback;
        const QString reason = callback.event.isEmpty() ? callbacks.value(4).toString()
                                                        : QString::fromUtf8(callback.event);
        // A gateway's answer to the platform is the upstream's: what the upstream said is
        // the outcome, and how often it was asked.
        const QString forwarded =
            !callback.gateway ? QString()
            : callback.upstreamStatus
                ? QStringLiteral(", forwarded %1×, upstream answered %2")
                      .arg(QString::number(callback.forwards),
                           QString::number(callback.upstreamStatus))
                : QStringLiteral(", forwarded %1×, no answer from upstream%2")
                      .arg(QString::number(callback.forwards),
                           callback.upstreamError.isEmpty()
                               ? QString()
                               : QStringLiteral(": ") + callback.upstreamError);
        evidence.events << EvidenceEvent{
            Kind::Callback, callbacks.value(0).toString(), microsFromSql(callbacks.value(1)),
            QStringLiteral("callback %1 (%2) %3%4 → %5%6")
                .arg(QString::fromUtf8(callback.payNo), callback.wireFormat, callback.status,
                     reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(reason),
                     QString::number(callbacks.value(5).toInt()), forwarded),
            callback.status == QLatin1String("REJECTED")};
    }
}

void loadEvents(const QSqlDatabase &db, qint64 orderId, OrderEvidence &evidence)
{
    using Kind = EvidenceEvent::Kind;
    loadCallbacks(db, QStringLiteral("order_id = ?"), {orderId}, evidence);
    QSqlQuery attempts = db::exec(
        db,
        QStringLiteral(
            "SELECT instance, CAST(created_at AS CHAR), from_state, to_state, accepted, reason "
            "FROM order_state_log WHERE order_id = ? ORDER BY created_at, id"),
        {orderId});
    while (attempts.next()) {
        const bool accepted = attempts.value(4).toBool();
        evidence.events << EvidenceEvent{
            Kind::Attempt, attempts.value(0).toString(), microsFromSql(attempts.value(1)),
            QStringLiteral("%1 → %2 %3%4")
                .arg(attempts.value(2).toString(), attempts.value(3).toString(),
                     accepted ? QStringLiteral("accepted") : QStringLiteral("REJECTED"),
                     accepted ? QString() : QStringLiteral(": ") + attempts.value(5).toString()),
            !accepted};
    }
    QHash<QString, int> copies;
    QSqlQuery coupons = db::exec(
        db,
        QStringLiteral("SELECT c.id, CAST(c.created_at AS CHAR), c.coupon_template_id, "
                       "c.face_value_fen, c.status, c.superseded_by "
                       "FROM user_coupon c WHERE c.order_id = ? ORDER BY c.created_at, c.id"),
        {orderId});
    while (coupons.next()) {
        const qint64 at = microsFromSql(coupons.value(1));
        const int n = ++copies[QStringLiteral("Coupon template ") + coupons.value(2).toString()];
        evidence.events << EvidenceEvent{
            Kind::Coupon, laneAt(evidence.traces, at), at,
            QStringLiteral("coupon #%1 template %2 (%3 fen) %4%5")
                .arg(QString::number(coupons.value(0).toLongLong()),
                     QString::number(coupons.value(2).toLongLong()),
                     QString::number(coupons.value(3).toLongLong()), coupons.value(4).toString(),
                     n > 1 ? QStringLiteral(" — copy %1").arg(n) : QString()),
            n > 1 && coupons.value(5).isNull()};
    }
    QSqlQuery points = db::exec(
        db,
        QStringLiteral(
            "SELECT id, CAST(created_at AS CHAR), point_type, points, reverses_id, superseded_by "
            "FROM point_log WHERE order_id = ? ORDER BY created_at, id"),
        {orderId});
    while (points.next()) {
        const qint64 at = microsFromSql(points.value(1));
        const bool reversal = !points.value(4).isNull();
        const int n =
            reversal ? 0 : ++copies[QStringLiteral("Points ") + points.value(2).toString()];
        evidence.events << EvidenceEvent{
            Kind::Points, laneAt(evidence.traces, at), at,
            QStringLiteral("points #%1 %2 %3%4")
                .arg(QString::number(points.value(0).toLongLong()), points.value(2).toString(),
                     QString::number(points.value(3).toLongLong()),
                     reversal ? QStringLiteral(" (reverses #%1)").arg(points.value(4).toLongLong())
                     : n > 1  ? QStringLiteral(" — copy %1").arg(n)
                              : QString()),
            n > 1 && points.value(5).isNull()};
    }
    QSqlQuery compensations = db::exec(
        db,
        QStringLiteral(
            "SELECT CAST(created_at AS CHAR), action, target_table, target_id, created_by, reason "
            "FROM compensation WHERE order_id = ? ORDER BY created_at, id"),
        {orderId});
    while (compensations.next())
        evidence.events << EvidenceEvent{
            Kind::Compensation, QStringLiteral("operators"), microsFromSql(compensations.value(0)),
            QStringLiteral("%1 %2 #%3 by %4: %5")
                .arg(compensations.value(1).toString(), compensations.value(2).toString(),
                     QString::number(compensations.value(3).toLongLong()),
                     compensations.value(4).toString(), compensations.value(5).toString()),
            false};
    QStringList keys = copies.keys();
    keys.sort();
    for (const QString &key : keys)
        if (copies.value(key) > 1)
            evidence.findings << QStringLiteral("%1 was issued %2 times for this order.")
                                     .arg(key, QString::number(copies.value(key)));
}

void describeTraces(OrderEvidence &evidence, qint64 origin)
{
    qsizetype insertAt = 0; // the root cause comes first, in the order it happened
    for (const CallbackTrace &t : evidence.traces) {
        if (!t.releasedBeforeCommit())
            continue;
        QString text =
            QStringLiteral("%1 (%2 handler) released its lock at %3, %4 before its transaction "
                           "committed at %5: the lock protected nothing.")
                .arg(t.instance, t.handler, formatOffset(t.lockReleased, origin),
                     formatGap(t.committed - t.lockReleased), formatOffset(t.committed, origin));
        for (const CallbackTrace &other : evidence.traces) {
            if (&other == &t || !other.lockAcquired)
                continue;
            if (other.lockAcquired >= t.lockReleased && other.lockAcquired < t.committed)
                text += QStringLiteral(
                            " %1 took the lock at %2, %3 before that commit, and read the order "
                            "as it was before it.")
                            .arg(other.instance, formatOffset(other.lockAcquired, origin),
                                 formatGap(t.committed - other.lockAcquired));
        }
        evidence.findings.insert(insertAt++, text);
    }
}

// A gateway forwards each event once: a second success answer means the team's handler was
// handed the same payment (or the same refund's outcome) twice, the very thing the gateway
// stands in front of it to prevent. A refund's forward after the payment's is another event.
void describeForwards(OrderEvidence &evidence)
{
    QMap<QPair<QByteArray, QByteArray>, int> accepted;
    for (const CallbackTrace &t : evidence.traces)
        if (t.forwarded && t.upstreamStatus >= 200 && t.upstreamStatus < 300)
            ++accepted[{t.payNo, t.event}];
    for (auto it = accepted.cbegin(); it != accepted.cend(); ++it)
        if (it.value() > 1)
            evidence.findings << (it.key().second.isEmpty()
                                      ? QStringLiteral("pay_no %1 was forwarded to the upstream "
                                                       "and answered with success %2 times: the "
                                                       "team's handler was given the same payment "
                                                       "more than once.")
                                            .arg(QString::fromUtf8(it.key().first),
                                                 QString::number(it.value()))
                                      : QStringLiteral("event %3 of pay_no %1 was forwarded to "
                                                       "the upstream and answered with success "
                                                       "%2 times: the team's handler was given it "
                                                       "more than once.")
                                            .arg(QString::fromUtf8(it.key().first),
                                                 QString::number(it.value()),
                                                 QString::fromUtf8(it.key().second)));
}

// Sorts the events, takes the first thing that happened as the origin offsets count from, and
// gives each instance and event lane its place, in order of first appearance.
void placeOnLanes(OrderEvidence &evidence)
{
    std::stable_sort(
        evidence.events.begin(), evidence.events.end(),
        [](const EvidenceEvent &a, const EvidenceEvent &b) { return a.micros < b.micros; });
    qint64 origin = 0;
    for (const CallbackTrace &t : evidence.traces)
        origin = origin ? std::min(origin, t.received) : t.received;
    for (const EvidenceEvent &e : evidence.events)
        if (e.kind != EvidenceEvent::Kind::Compensation)
            origin = origin ? std::min(origin, e.micros) : e.micros;
    evidence.originMicros = origin;
    for (const CallbackTrace &t : evidence.traces)
        if (!evidence.lanes.contains(t.instance))
            evidence.lanes << t.instance;
    for (const EvidenceEvent &e : evidence.events)
        if (!evidence.lanes.contains(e.lane))
            evidence.lanes << e.lane;
}

qint64 micros(const QDateTime &time)
{
    return time.isValid() ? time.toMSecsSinceEpoch() * 1000 : 0;
}

} // namespace

QString formatGap(qint64 micros)
{
    const qint64 magnitude = micros < 0 ? -micros : micros;
    if (magnitude < 10'000'000)
        return QStringLiteral("%1 ms").arg(double(micros) / 1000.0, 0, 'f', 3);
    const qint64 seconds = magnitude / 1'000'000;
    if (seconds < 3600)
        return QStringLiteral("%1 min %2 s")
            .arg(QString::number(seconds / 60), QString::number(seconds % 60));
    if (seconds < 2 * 86400)
        return QStringLiteral("%1 h %2 min")
            .arg(QString::number(seconds / 3600), QString::number(seconds / 60 % 60));
    return QStringLiteral("%1 days").arg(seconds / 86400);
}

QString formatOffset(qint64 micros, qint64 origin)
{
    const qint64 delta = micros - origin;
    return (delta < 0 ? QStringLiteral("-") : QStringLiteral("+")) +
           formatGap(delta < 0 ? -delta : delta);
}

OrderEvidence loadOrderEvidence(const QSqlDatabase &db, qint64 orderId)
{
    OrderEvidence evidence;
    const QList<OrderRow> order = readOrderRows(db, QStringLiteral("WHERE o.id = ?"), {orderId});
    if (order.isEmpty())
        return evidence;
    evidence.found = true;
    evidence.order = order.first();
    evidence.orderNo = QByteArray::number(orderId);
    loadTraces(db, QStringLiteral("order_id = ?"), {orderId}, evidence);
    loadEvents(db, orderId, evidence);
    placeOnLanes(evidence);
    describeTraces(evidence, evidence.originMicros);
    describeForwards(evidence);
    return evidence;
}

OrderEvidence loadGatewayOrderEvidence(const QSqlDatabase &db, const QByteArray &orderNo)
{
    OrderEvidence evidence;
    evidence.orderNo = orderNo;
    // A row from before migration 0026 has no out_trade_no: its order number is its order_id.
    const qint64 orderId = orderIdFrom(orderNo).value_or(0);
    loadCallbacks(db,
                  QStringLiteral("gateway = 1 AND (out_trade_no = ? OR (out_trade_no IS NULL AND "
                                 "order_id = ?))"),
                  {orderNo, orderId}, evidence);
    if (evidence.callbacks.isEmpty())
        return evidence;
    evidence.found = true;
    evidence.gateway = true;
    evidence.order.id = orderId;
    evidence.order.payNo = evidence.callbacks.first().payNo;
    // The deliveries' traces by pay_no: a trace keeps the order id alone, 0 for an order number
    // that is none.
    QVariantList payNos;
    for (const EvidenceCallback &callback : std::as_const(evidence.callbacks))
        payNos << callback.payNo;
    QStringList places;
    places.fill(QStringLiteral("?"), payNos.size());
    loadTraces(db, QStringLiteral("pay_no IN (%1)").arg(places.join(QStringLiteral(", "))), payNos,
               evidence);
    placeOnLanes(evidence);
    describeForwards(evidence);
    return evidence;
}

OrderEvidence loadEvidenceOf(const QSqlDatabase &db, const QByteArray &orderNo)
{
    if (const auto orderId = orderIdFrom(orderNo)) {
        OrderEvidence evidence = loadOrderEvidence(db, *orderId);
        if (evidence.found)
            return evidence;
    }
    return loadGatewayOrderEvidence(db, orderNo);
}

OrderEvidence loadMappedOrderEvidence(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                      qint64 orderId)
{
    const mapping::MappedOrderEvidence mapped =
        mapping::loadMappedOrderEvidence(db, mapping, orderId);
    OrderEvidence evidence;
    if (!mapped.found)
        return evidence;
    evidence.found = true;
    const mapping::MappedOrder &o = mapped.order;
    evidence.order =
        OrderRow{o.id, o.user, o.state, o.amountFen, {}, micros(o.createdAt), micros(o.paidAt)};
    if (!mapped.payments.isEmpty())
        evidence.order.payNo = mapped.payments.first().payNo;
    using Kind = EvidenceEvent::Kind;
    for (qsizetype i = 0; i < mapped.payments.size(); ++i) {
        const mapping::MappedPayment &p = mapped.payments.at(i);
        // The first payment paid the order; a later one is the customer paying twice.
        evidence.events << EvidenceEvent{
            Kind::Callback, QStringLiteral("payments"), micros(p.paidAt),
            QStringLiteral("paid ¥%1 by %2, pay_no %3 (%4)%5")
                .arg(fenToYuan(p.amountFen), p.channel, QString::fromUtf8(p.payNo), p.status,
                     i > 0 ? QStringLiteral(" — paid twice") : QString()),
            i > 0};
    }
    if (mapped.payments.size() > 1)
        evidence.findings << QStringLiteral("The order was paid %1 times: a refund is owed.")
                                 .arg(mapped.payments.size());
    // Copies per side effect and key: a second live row is the duplicate the incident made.
    QMap<QString, int> live;
    for (const mapping::MappedSideEffectRow &row : mapped.sideEffects) {
        const QString what =
            QStringLiteral("%1 %2").arg(row.sideEffect, row.key.join(QLatin1Char('/')));
        const int copy = row.live ? ++live[what] : 0;
        QString state = row.used   ? QStringLiteral("used")
                        : row.live ? QStringLiteral("live")
                                   : QStringLiteral("not live");
        if (row.compensated == QLatin1String("FREEZE"))
            state = QStringLiteral("frozen by payops");
        else if (row.compensated == QLatin1String("REVERSE"))
            state = QStringLiteral("reversed by payops");
        evidence.events << EvidenceEvent{
            row.points ? Kind::Points : Kind::Coupon, sideEffectLane(), micros(row.createdAt),
            QStringLiteral("%1 #%2, %3 — %4%5")
                .arg(what, QString::number(row.id),
                     row.points ? QStringLiteral("%1 points").arg(row.value)
                                : QStringLiteral("¥%1").arg(fenToYuan(row.value)),
                     state, copy > 1 ? QStringLiteral(", copy %1").arg(copy) : QString()),
            copy > 1};
    }
    for (auto it = live.cbegin(); it != live.cend(); ++it)
        if (it.value() > 1)
            evidence.findings << QStringLiteral("%1 has %2 live copies for this order.")
                                     .arg(it.key(), QString::number(it.value()));
    // What payops's own tables saw of the order, when its callbacks came through payops.
    for (const mapping::MappedCallback &c : mapped.callbacks)
        evidence.events << EvidenceEvent{
            Kind::Callback, QStringLiteral("payops callbacks"), micros(c.createdAt),
            QStringLiteral("callback #%1 pay_no %2 ¥%3: %4%5")
                .arg(QString::number(c.id), QString::fromUtf8(c.payNo), fenToYuan(c.amountFen),
                     c.status,
                     c.reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(c.reason)),
            false};
    for (const mapping::MappedTrace &t : mapped.traces)
        evidence.events << EvidenceEvent{
            Kind::Callback, t.instance, micros(t.receivedAt),
            QStringLiteral("received pay_no %1, answered %2 (%3)")
                .arg(QString::fromUtf8(t.payNo), QString::number(t.httpStatus), t.outcome),
            false};
    placeOnLanes(evidence);
    return evidence;
}

} // namespace payops::console
