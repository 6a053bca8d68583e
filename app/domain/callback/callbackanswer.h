#pragma once

#include <QByteArray>
#include <QString>

namespace payops {

// What happened to one callback; one Prometheus label each.
enum class Outcome {
    Processed,
    Recorded,
    Replayed,
    Rejected,
    Ignored,
    Invalid,
    Unauthorized,
    Conflict,
    Unavailable,
    TooLarge
};
constexpr int kOutcomeCount = 10;
const char *outcomeLabel(Outcome outcome);

// Which defence stopped a duplicate from paying out twice.
enum class Defence { None, Replay, PayNoKey, Cas, SideEffectKey };
constexpr int kDefenceCount = 5;
const char *defenceLabel(Defence defence);

struct CallbackAnswer
{
    int httpStatus = 200;
    QByteArray body;
    Outcome outcome = Outcome::Processed;
    Defence suppressedBy = Defence::None;
    // Set when the body is already the platform's answer (a gateway's upstream gave it): the
    // HTTP layer sends status, body and this Content-Type as they are.
    bool verbatim = false;
    QByteArray contentType = {};
    // SHA-256 of the bytes a signature that verified covered; empty when none did (a refusal
    // before or by the check). Only a signed request may keep its connection.
    QByteArray signedDigest = {};

    static CallbackAnswer success(Outcome outcome, const QString &reason = {},
                                  Defence defence = Defence::None);
    static CallbackAnswer failure(int httpStatus, Outcome outcome, const QString &message);
};

} // namespace payops
