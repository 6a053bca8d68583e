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

struct SwitchObserver;

// What a gateway does with one row of pay_callback_log (gateway = 1), shared by the live
// endpoint (GatewayHandler) and the drain to the upstream (drainToUpstream). A row is
// RECORDED (taken in record-only mode), FORWARDING (recorded, no final answer yet: never
// forwarded, or its last forward failed) or FORWARDED (the upstream's final answer stored in
// response_code and response_body).

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

enum class ForwardStep {
    Final,    // the upstream's answer is final: the row is FORWARDED
    NotFinal, // no answer, or one that is not the platform's success: the row is FORWARDING
    Recorded, // the switch is RECORD_ONLY: nothing forwarded, the row is RECORDED
    Settled,  // the row already held its final answer: nothing forwarded
    Missing,  // no such row
    Busy,     // on a cluster, another instance's claim to forward it holds: nothing forwarded
};

struct Forward
{
    ForwardStep step = ForwardStep::Missing;
    UpstreamAnswer upstream; // when forwarded
    WireFormat wire = WireFormat::Payops;
    StoredCallback row; // as read before the forward (Settled: with its final answer)
};

// Forwards the row of `payNo` once and stores the outcome. The caller holds the pay_no's
// named lock: no second forward of it starts anywhere meanwhile.
//
// One transaction that first reads the switch under its shared lock and stays open across the
// forward (bounded by the upstream's timeout), as the safe handler's transaction is held across
// its side effects: a flip to RECORD_ONLY waits for the forwards in flight, and once it has
// committed no forward starts. The request goes out as the platform sent it (POST, raw body,
// the platform's headers) plus X-Payops-Pay-No, X-Payops-Order-Id, X-Payops-Delivery (this
// forward's number, 1 for the first) and Idempotency-Key (the pay_no). On a Galera node the
// flip does not wait for a forward on another node; the instance's acknowledgement, held back
// by the forward's reading of the switch (SwitchReading), does. Throws db::Error.
//
// `delivery` is the platform's delivery in hand (null for a drain): its bytes and headers go
// out, not the row's first ones, and are stored with the forward's result, so that a handler
// checking the signature's time takes a retry after a long outage.
Forward forwardRow(const QSqlDatabase &db, UpstreamClient &client, const QByteArray &payNo,
                   const QString &instance, SwitchObserver &switchObserver, CallbackTrace &trace,
                   const CallbackRequest *delivery = nullptr);

} // namespace payops
