#pragma once

#include "callbackanswer.h"
#include "callbacklog.h"
#include "callbacktrace.h"
#include "channel.h"
#include "upstreamclient.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <exception>
#include <optional>

namespace payops {

class SwitchReading;

// What a gateway does with one row of pay_callback_log (gateway = 1), shared by the live
// endpoint (service/gateway.h) and the drain to the upstream (drainToUpstream). A row is
// RECORDED (taken in record-only mode), FORWARDING (recorded, no final answer yet: never
// forwarded, its forward out, or its last forward failed) or FORWARDED (the upstream's final
// answer stored in response_code and response_body).

// True when the row holds the upstream's final answer (or a handler's answer: a row that
// payops paid itself is never forwarded).
bool holdsFinalAnswer(const StoredCallback &stored);

// The answer a delivery of `request` gets from a row that holds its final answer: that first
// answer again, as the upstream gave it, when the content is the same; a 409 in the platform's
// format when it differs. nullopt when the row has no final answer yet and the content is the
// same (or supersedes a non-SUCCESS notice): the delivery is to be forwarded.
std::optional<CallbackAnswer> answerFromRow(const StoredCallback &stored,
                                            const CallbackRequest &request);

// An answer already in the platform's format, for the HTTP layer to send as it is.
CallbackAnswer platformAnswer(int status, const QByteArray &body, const QByteArray &contentType,
                              Outcome outcome);
CallbackAnswer platformFailureAnswer(WireFormat wire, int status, Outcome outcome,
                                     const QString &message);

// Where a gateway keeps a delivery: the trade's payment (or a notice before it) in
// pay_callback_log, one row per pay_no, which every report and defence reads; a later event of
// the trade in callback_event, one row per (pay_no, event). Each row is forwarded once.
struct GatewayKey
{
    QByteArray payNo;
    QByteArray event; // empty: the trade's own row

    QString table() const;
};

// The row a delivery of `request` belongs to, given the trade's row as stored (nullopt: none
// yet): the event the notification names (a refund's outcome), or, for Alipay, its
// trade_status when the trade's row holds another success or a status after it
// (TRADE_FINISHED or TRADE_CLOSED after TRADE_SUCCESS); else the trade's own row.
GatewayKey gatewayKeyOf(const CallbackRequest &request, const std::optional<StoredCallback> &trade);

// The row of `key` as storedCallback() reads it, its content's event set; nullopt when none.
std::optional<StoredCallback> findGatewayRow(const QSqlDatabase &db, const GatewayKey &key);

// Records a later event as received, status `status` (FORWARDING for a gateway); returns the
// id. Throws db::Error, isDuplicateKey() when the event is there.
qint64 recordEvent(const QSqlDatabase &db, const CallbackRequest &request, const QString &status,
                   const QString &instance);

// Records a delivery as received (raw body, platform headers, format), gateway = 1, status
// FORWARDING; returns the id. Throws db::Error, isDuplicateKey() when the pay_no is there.
qint64 recordForGateway(const QSqlDatabase &db, const CallbackRequest &request,
                        const QString &instance);
// recordForGateway for several deliveries in one transaction, one INSERT (the endpoint's group
// commit). When one of the pay_nos is there already the transaction is rolled back and each
// delivery is recorded on its own, so that only that one fails. Returns, per request in order,
// null or what its own recordForGateway threw. Throws db::Error when the batch fails as a whole.
QList<std::exception_ptr> recordForGatewayBatch(const QSqlDatabase &db,
                                                const QList<CallbackRequest> &requests,
                                                const QString &instance);

// A gateway's forward of one row goes in three steps, none of which holds a database
// connection or transaction across the HTTP call:
//
//   claimForward   reads the switch under its shared lock and, when it is NORMAL, claims the
//                  row's next forward in a committed write (forwards + 1, forward_claimed_until);
//   post           sends the claimed bytes to the upstream (UpstreamClient);
//   storeForward   stores the outcome under that claim and clears it.
//
// The claim is a row the database certifies, not a session's lock: it outlives the loss of the
// claimer's connection, holds on every Galera node (certification lets one node's claim commit),
// and only one forward of a row is in flight while it holds. It holds for the forward's bound
// plus a margin, so a gateway that dies mid-forward leaves the row to the platform's retry once
// the claim runs out.
//
// The switch barrier: the instance that claimed keeps its SwitchReading until the outcome is
// stored, so it acknowledges no flip to RECORD_ONLY while a forward it started under NORMAL is
// in flight; once every instance acknowledged, nothing reaches the handler.
enum class ClaimStep {
    Claimed,  // this caller forwards it now
    Recorded, // the switch is RECORD_ONLY: nothing forwarded, the row is RECORDED
    Settled,  // the row already holds its final answer: nothing forwarded
    Busy,     // another forward of it is in flight (its claim holds): nothing forwarded
    Missing,  // no such row
};

// What a claim forwards: the row as it is now sent.
struct ForwardClaim
{
    qint64 rowId = 0;
    qint64 number = 0; // the row's forwards once claimed: X-Payops-Delivery, and the claim's token
    QByteArray payNo;
    QByteArray event;   // a later event's row (callback_event); empty: the trade's own
    qint64 orderId = 0; // 0 when the order number is no payops order id
    QByteArray orderNo; // out_trade_no as the platform sent it: X-Payops-Order-Id
    WireFormat wire = WireFormat::Payops;
    QByteArray body;
    QByteArray headers; // joinHeaders' form
};

struct Claim
{
    ClaimStep step = ClaimStep::Missing;
    StoredCallback row;   // as read (Settled: with its final answer)
    ForwardClaim forward; // Claimed
};

// How much longer than the forward's bound a claim holds: the time to store the outcome.
constexpr int kClaimMarginSeconds = 5;

// Claims the next forward of `key`'s row for `boundSeconds` (plus the margin), in a
// transaction of its own that first reads the switch through `reading` (held by the caller until
// the outcome is stored). `delivery` is the platform's delivery in hand, null for a drain: its
// bytes and headers are written with the claim and sent, not the row's first ones, so that a
// handler checking the signature's time takes a retry after a long outage. Throws db::Error.
Claim claimForward(const QSqlDatabase &db, const GatewayKey &key, const QString &instance,
                   SwitchReading &reading, int boundSeconds,
                   const CallbackRequest *delivery = nullptr);

// The request a claim sends: the platform's bytes and headers plus X-Payops-Pay-No,
// X-Payops-Order-Id, X-Payops-Delivery (the claim's number, 1 for the first), for a later event
// X-Payops-Event, and Idempotency-Key (the pay_no, or pay_no/event for a later event).
UpstreamRequest forwardRequest(const ForwardClaim &claim);

enum class ForwardStep {
    Final,    // the upstream's answer is final: the row is FORWARDED
    NotFinal, // no answer, or one that is not the platform's success: the row waits for another
};

// Stores a forward's outcome under its claim and clears the claim. A claim that ran out and
// was taken by another forward meanwhile changes nothing (it is logged). Throws db::Error.
ForwardStep storeForward(const QSqlDatabase &db, const ForwardClaim &claim,
                         const UpstreamAnswer &answer, const QString &instance);

// Gives a claim back unsent (no connection to the upstream was free): the row is as before.
void releaseClaim(const QSqlDatabase &db, const ForwardClaim &claim);

} // namespace payops
