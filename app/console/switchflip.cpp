#include "switchflip.h"

#include "db/dberror.h"
#include "instances.h"

namespace payops::console {

QStringList liveInstanceIds(const QSqlDatabase &db)
{
    QStringList ids;
    for (const InstanceRow &row : loadInstances(db).rows) {
        if (row.alive)
            ids << row.id;
    }
    return ids;
}

SwitchOutcome flipAndAwait(const QSqlDatabase &db, CallbackMode target, const QString &reason,
                           const std::function<void(const InstanceAck &)> &onAck)
{
    SwitchOutcome outcome;
    outcome.flip = flipSwitch(db, target, reason);
    try {
        outcome.instances =
            waitForAcknowledgement(db, outcome.flip.after.version, kAcknowledgeMs, onAck);
    } catch (const db::Error &error) {
        outcome.waitError = db::userMessage(error);
    }
    return outcome;
}

} // namespace payops::console
