#include "callbackanswer.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payops {

const char *outcomeLabel(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Processed:
        return "processed";
    case Outcome::Recorded:
        return "recorded";
    case Outcome::Replayed:
        return "replayed";
    case Outcome::Rejected:
        return "rejected";
    case Outcome::Ignored:
        return "ignored";
    case Outcome::Invalid:
        return "invalid";
    case Outcome::Unauthorized:
        return "unauthorized";
    case Outcome::Conflict:
        return "conflict";
    case Outcome::Unavailable:
        return "unavailable";
    case Outcome::TooLarge:
        return "too_large";
    }
    return "unknown";
}

const char *defenceLabel(Defence defence)
{
    switch (defence) {
    case Defence::None:
        return "none";
    case Defence::Replay:
        return "replay";
    case Defence::PayNoKey:
        return "pay_no_key";
    case Defence::Cas:
        return "cas";
    case Defence::SideEffectKey:
        return "side_effect_key";
    }
    return "unknown";
}

CallbackAnswer CallbackAnswer::success(Outcome outcome, const QString &reason, Defence defence)
{
    QJsonObject body{{QStringLiteral("code"), QStringLiteral("SUCCESS")},
                     {QStringLiteral("outcome"), QLatin1String(outcomeLabel(outcome))}};
    if (!reason.isEmpty())
        body.insert(QStringLiteral("reason"), reason);
    return {200, QJsonDocument(body).toJson(QJsonDocument::Compact), outcome, defence};
}

CallbackAnswer CallbackAnswer::failure(int httpStatus, Outcome outcome, const QString &message)
{
    const QJsonObject body{{QStringLiteral("code"), QStringLiteral("FAIL")},
                           {QStringLiteral("message"), message}};
    return {httpStatus, QJsonDocument(body).toJson(QJsonDocument::Compact), outcome, Defence::None};
}

} // namespace payops
