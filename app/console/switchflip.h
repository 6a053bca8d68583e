#pragma once

#include "domain/callback/callbackswitch.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <functional>

namespace payops::console {

// How long live instances get to apply a new switch version before they are named as late;
// also how recent a heartbeat must be for an instance to count as live.
constexpr int kAcknowledgeMs = 5000;

// The instances a flip reaches now: those alive as flipAndAwait counts them. Throws db::Error.
QStringList liveInstanceIds(const QSqlDatabase &db);

struct SwitchOutcome
{
    FlipResult flip;
    QList<InstanceAck> instances; // every live instance, acknowledged or not
    QString waitError;            // the flip committed, but watching the instances failed
};

// Flips the callback switch the way `payops degrade` does (audited with `reason` in the same
// transaction), then waits up to kAcknowledgeMs for every live instance to apply the new
// version, calling `onAck` on this thread as each one does. Throws db::Error when the flip
// fails, which then changed nothing; a failure while waiting leaves the flip done and is told
// in waitError instead, since the operator must not think the switch unflipped.
SwitchOutcome flipAndAwait(const QSqlDatabase &db, CallbackMode target, const QString &reason,
                           const std::function<void(const InstanceAck &)> &onAck = {});

} // namespace payops::console
