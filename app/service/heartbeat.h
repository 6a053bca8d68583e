#pragma once

#include "db/dsn.h"

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace payops {

class ServiceMetrics;
struct SwitchObserver;

struct InstanceInfo
{
    QString id;
    QString host;
    qint64 pid = 0;
    QString listen;
    QString handler;
    QString mode = QStringLiteral("handler"); // or gateway
    QString upstream = {};                    // a gateway's, without credentials
};

// Every interval, on its own thread and connection: reads the switch (the hint and the
// version this instance reports as applied, SwitchObserver::versionAcknowledged), writes the
// instance's row in callback_instance, and counts the backlog. A database outage only makes it
// retry.
class Heartbeat final
{
public:
    Heartbeat(Dsn dsn, InstanceInfo info, SwitchObserver &switchObserver, ServiceMetrics &metrics,
              int intervalMs = 500);
    ~Heartbeat();
    Heartbeat(const Heartbeat &) = delete;
    Heartbeat &operator=(const Heartbeat &) = delete;

    // Beats once synchronously (throws db::Error if that fails), then keeps beating.
    void start();
    // Stops beating and marks the instance stopped.
    void stop();
    bool databaseReachable() const { return m_reachable.load(); }

private:
    void run();
    void beat(const QSqlDatabase &db);

    Dsn m_dsn;
    InstanceInfo m_info;
    SwitchObserver &m_switch;
    ServiceMetrics &m_metrics;
    int m_intervalMs;
    qint64 m_startedAtMs;
    std::atomic<bool> m_reachable{false};
    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
};

} // namespace payops
