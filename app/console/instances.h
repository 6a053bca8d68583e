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
    QString modeApplied;
    bool stopped = false;
    bool alive = false; // live by instanceLiveSql, as the switch counts it
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
