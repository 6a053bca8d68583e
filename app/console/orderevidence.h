#pragma once

#include "domain/callback/callbacktrace.h"
#include "domain/mapping/mapping.h"
#include "orderlist.h"

#include <QList>
#include <QSqlDatabase>
#include <QStringList>

namespace payops::console {

// One callback's steps on one instance: the struct the service writes callback_trace from.
using payops::CallbackTrace;

// Anything else that happened to the order, placed on a lane.
struct EvidenceEvent
{
    enum class Kind { Callback, Attempt, Coupon, Points, Compensation };
    Kind kind = Kind::Callback;
    QString lane; // service instance, or "side effects" / "operators"
    qint64 micros = 0;
    QString text;
    bool bad = false; // rejected attempt, duplicate copy
};

// One of the order's callbacks as the platform sent it (pay_callback_log): the wire format,
// the platform's signature headers and the body, byte for byte, beside what became of it.
struct EvidenceCallback
{
    qint64 id = 0;
    QByteArray payNo;
    QByteArray event;      // a later event of the trade (callback_event); empty: its payment
    QString wireFormat;    // payops | wechatpay | alipay
    QByteArray rawHeaders; // "Name: value" lines (channel.h's joinHeaders)
    QByteArray rawBody;
    QString status;
    bool gateway = false;   // a gateway's row: forwarded to the upstream, never paid by payops
    int forwards = 0;       // how many times a gateway sent it to the upstream
    int upstreamStatus = 0; // the last forward's answer; 0: never answered
    QString upstreamError;  // why the last forward got no final answer
};

struct OrderEvidence
{
    bool found = false;
    // The merchant's order number looked for (a payops order's id in decimal); a gateway's
    // order has no row in orders: then gateway is set and order holds only its first pay_no
    // and the number as a payops order id, or 0 when it is none.
    QByteArray orderNo;
    bool gateway = false;
    OrderRow order;
    QList<CallbackTrace> traces;
    QList<EvidenceEvent> events;
    // The order's callbacks as received, oldest first.
    QList<EvidenceCallback> callbacks;
    QStringList findings;    // the verdicts, in words
    QStringList lanes;       // in order of first appearance
    qint64 originMicros = 0; // the first thing that happened; offsets count from here
};

// Throws db::Error.
OrderEvidence loadOrderEvidence(const QSqlDatabase &db, qint64 orderId);
// The callbacks gateways took under the merchant's order number `orderNo` (out_trade_no as the
// platform sent it: a gateway's database has no orders of its own), their deliveries' traces and
// what their forwards show. Throws db::Error.
OrderEvidence loadGatewayOrderEvidence(const QSqlDatabase &db, const QByteArray &orderNo);
// The order `orderNo` names: payops's own when it is an order id that exists, else a gateway's
// (loadGatewayOrderEvidence). Throws db::Error.
OrderEvidence loadEvidenceOf(const QSqlDatabase &db, const QByteArray &orderNo);
// The same order on the team's own tables (mapping::loadMappedOrderEvidence): its state by
// payops's name, its payments on a "payments" lane, each side effect's rows with what payops
// did to them, and payops's own callbacks and traces for the order id. No callback as received
// (the team's tables keep none) and no lock timings. Throws db::Error.
OrderEvidence loadMappedOrderEvidence(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                      qint64 orderId);

// "+41.500 ms" relative to origin.
QString formatOffset(qint64 micros, qint64 origin);
// "45.000 ms", "2 h 3 min"
QString formatGap(qint64 micros);

} // namespace payops::console
