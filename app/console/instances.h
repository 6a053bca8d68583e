#pragma once

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops::console {

// One payops-callbackd instance as its heartbeat row describes it.
struct InstanceRow
{
    QString id;
    QString host;
    qint64 pid = 0;
    QString listen; // host:port of its HTTP endpoint
    QString buildVersion;
    QString handler; // safe | unsafe-demo
    qint64 startedMicros = 0;
    qint64 lastSeenMicros = 0;
    qint64 secondsSinceSeen = 0; // by the server's clock
    qint64 switchVersionApplied = 0;
    QString modeApplied; // the switch's mode it applied: NORMAL | RECORD_ONLY
    // What it does with a callback: 'handler' pays orders itself, 'gateway' records each one
    // and forwards it to the team's own handler at `upstream` (a URL).
    QString mode;
    QString upstream;
    // The upstream's health by the gateway's heartbeat: 'ok' (its last forward got an
    // answer), 'failing' (it got none), '' (no forward yet); checked that long ago by the
    // server's clock, -1 when never.
    QString upstreamState;
    qint64 secondsSinceUpstreamCheck = -1;
    bool stopped = false;
    bool alive = false; // live by instanceLiveSql, as the switch counts it

    bool isGateway() const { return mode == QLatin1String("gateway"); }
};

struct InstanceList
{
    QList<InstanceRow> rows;
    qint64 switchVersion = 0; // what the switch says now, to compare with what each applies
    QString mode;
    int aliveSeconds = 0; // the liveness threshold the rows were judged by
};

// Throws db::Error.
InstanceList loadInstances(const QSqlDatabase &db);

} // namespace payops::console
