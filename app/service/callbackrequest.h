#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace payops {

// One payment callback as the wire contract defines it (DESIGN.md, "The callback contract").
struct CallbackRequest
{
    QByteArray payNo;   // UTF-8 bytes exactly as the platform sent them (1-64 characters)
    qint64 orderId = 0;
    qint64 amountFen = 0;
    QString currency;   // three letters, upper case
    QString channel;
    QString tradeStatus;
    QString paidAt;     // as sent; empty when absent
    QByteArray rawBody; // the body byte for byte

    bool isSuccess() const { return tradeStatus == QLatin1String("SUCCESS"); }
    // Same payment content: what makes a resend a replay rather than a conflict (409).
    bool sameContentAs(const CallbackRequest &other) const;

    // Parses and validates a body. On failure returns nullopt and sets *error to a reason
    // that is safe to send back to the platform.
    static std::optional<CallbackRequest> parse(const QByteArray &body, QString *error);
};

} // namespace payops
