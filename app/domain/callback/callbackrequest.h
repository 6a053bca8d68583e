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
    qint64 orderId = 0;
    qint64 amountFen = 0;
    QString currency;                     // ISO 4217: three letters, upper-cased on input
    QString channel;                      // as sent, compared exactly
    QString tradeStatus;                  // as sent, compared exactly: "success" is not SUCCESS
    QString paidAt;                       // RFC 3339 as sent; empty when absent
    QByteArray rawBody;                   // the body byte for byte, as the platform sent it
    WireFormat wire = WireFormat::Payops; // the format it arrived in
    QByteArray rawHeaders; // the platform's headers (platformHeaders), joinHeaders' form

    bool isSuccess() const { return tradeStatus == QLatin1String("SUCCESS"); }
    // Same payment content: what makes a resend a replay rather than a conflict (409).
    bool sameContentAs(const CallbackRequest &other) const;

    // Parses and validates a body, strictly (strictjson.h). On failure returns nullopt and
    // sets *error to a reason that is safe to send back to the platform.
    static std::optional<CallbackRequest> parse(const QByteArray &body, QString *error);
};

} // namespace payops
