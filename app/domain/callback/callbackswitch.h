#pragma once

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <functional>
#include <optional>

namespace payops {

enum class CallbackMode { Normal, RecordOnly };
QString callbackModeName(CallbackMode mode);
std::optional<CallbackMode> parseCallbackMode(const QString &name);

struct SwitchState
{
    CallbackMode mode = CallbackMode::Normal;
    qint64 version = 0;
    QString reason;
    QString changedBy;
    QDateTime changedAt;
};

// A plain read: fine for display and as a hint, never to decide whether to process.
SwitchState readSwitch(const QSqlDatabase &db);

// The barrier. Inside a processing transaction, reads the switch with a shared lock: an
// operator's flip (an exclusive lock) waits for every transaction that read NORMAL to end,
// and every transaction that starts after the flip committed reads RECORD_ONLY. A cached
// value could never promise that.
SwitchState readSwitchForProcessing(const QSqlDatabase &db);
// Its statement, for a transaction that sends it with others (SwitchReading::readFrom).
QString switchForProcessingStatement();

struct FlipResult
{
    SwitchState before;
    SwitchState after;
    bool changed = false; // false when the switch already was in the asked mode
};

// Flips the switch and audits it in one transaction; the reason is required. Throws db::Error.
FlipResult flipSwitch(const QSqlDatabase &db, CallbackMode mode, const QString &reason);
// The statement flipSwitch changes the switch with (probePrivileges asks the server about it).
QString flipSwitchStatement();

struct InstanceAck
{
    QString instance;
    qint64 versionApplied = 0;
    bool acknowledged = false;
};

// Waits until every live instance (instanceLiveSql: the console's alive) reports at least
// `version`, or the timeout passes. Returns every instance seen live meanwhile, with its
// state: one whose heartbeat stops during the wait is returned unacknowledged, one that
// stops cleanly is left out.
QList<InstanceAck>
waitForAcknowledgement(const QSqlDatabase &db, qint64 version, int timeoutMs,
                       const std::function<void(const InstanceAck &)> &onAck = {});

} // namespace payops
