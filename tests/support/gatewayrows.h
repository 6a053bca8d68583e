#pragma once

#include "db/dsn.h"

#include <QByteArray>
#include <QString>

namespace payops::test {

// A gateway in front of a team's own handler, as its rows stand in the database: what the
// console reads of gateways and forwards, without a gateway running.

// The upstream both gateway instances forward to.
QString gatewayUpstream();

// Three live instances: gateway-a (its upstream ok, checked 2 s ago), gateway-b (failing,
// checked 40 s ago) and handler-c, an ordinary handler. heartbeatGateways() makes them live again.
void insertGatewayInstances(const Dsn &dsn);
void heartbeatGateways(const Dsn &dsn);
void deleteGatewayInstances(const Dsn &dsn);

// One WeChat Pay payment of a new order taken by the gateways and forwarded to the upstream:
// delivered on gateway-a, whose forward the upstream answered 503; the platform's retry 15 s
// later on gateway-b, forwarded again and answered 200, the answer stored; and a duplicate of
// that retry on gateway-a 20 ms later, which waited for the pay_no lock and got the stored
// answer without a forward. The order is PAID (by the team's handler).
struct ForwardedPayment
{
    qint64 orderId = 0;
    qint64 callbackId = 0; // its pay_callback_log row
    QByteArray payNo;
    QByteArray rawHeaders;
    QByteArray rawBody;
};
ForwardedPayment insertForwardedPayment(const Dsn &dsn);

} // namespace payops::test
