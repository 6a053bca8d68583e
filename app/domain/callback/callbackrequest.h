#pragma once

#include "channel.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace payops {

// One payment callback as the wire contract defines it (docs/callback-contract.md, "The request").
struct CallbackRequest
{
    QByteArray payNo; // UTF-8 bytes exactly as decoded from the body (1-64 characters)
    // The merchant's order number as the platform sent it back (out_trade_no), ASCII: a
    // gateway's team numbers its orders as it likes (docs/gateway.md). payops's own callback
    // carries order_id, and this is its decimal text.
    QByteArray orderNo;
    // orderNo as a payops order id when it is one (decimal, 1 to BIGINT's largest), else 0:
    // the handlers pay payops's own orders, by this number.
    qint64 orderId = 0;
    qint64 amountFen = 0;
    QString currency;    // ISO 4217: three letters, upper-cased on input
    QString channel;     // as sent, compared exactly
    QString tradeStatus; // as sent, compared exactly: "success" is not SUCCESS
    QString paidAt;      // RFC 3339 as sent; empty when absent
    // A later event of the trade that the notification names, after its payment: a refund's
    // outcome (WeChat Pay's event type and refund_id; Alipay's trade_status and out_biz_no).
    // Empty for the payment's own notification, or a notice before it. A gateway forwards each
    // event once (docs/gateway.md); no handler pays one.
    QByteArray event;
    QByteArray rawBody;                   // the body byte for byte, as the platform sent it
    WireFormat wire = WireFormat::Payops; // the format it arrived in
    QByteArray rawHeaders;   // the platform's headers (platformHeaders), joinHeaders' form
    QByteArray signedDigest; // SHA-256 of what its verified signature covered (signedOver)

    // Whether the callback says the payment succeeded: SUCCESS, and for Alipay TRADE_SUCCESS
    // or TRADE_FINISHED (the refund period over); never for a later event (a partial refund's
    // notice says TRADE_SUCCESS). successSql() is the same test in SQL.
    bool isSuccess() const;
    static QString successSql();
    // Same payment content: what makes a resend a replay rather than a conflict (409). Decoded
    // fields, never the raw body: WeChat Pay encrypts each resend afresh. Two success statuses
    // are the same (Alipay's TRADE_FINISHED after TRADE_SUCCESS is the same payment).
    bool sameContentAs(const CallbackRequest &other) const;

    // Parses and validates a body, strictly (strictjson.h). On failure returns nullopt and
    // sets *error to a reason that is safe to send back to the platform.
    static std::optional<CallbackRequest> parse(const QByteArray &body, QString *error);
};

// An ISO 4217 currency code from a platform's field: three ASCII letters, upper-cased; nullopt
// for anything else.
std::optional<QString> currencyCode(const QByteArray &text);

// Why a platform's payment time, in the field `field`, cannot be stored as paid_at: not RFC 3339,
// a leap second, or a year outside DATETIME's once in UTC. Empty when it can.
QString paidAtProblem(const QByteArray &paidAt, const char *field);

} // namespace payops
