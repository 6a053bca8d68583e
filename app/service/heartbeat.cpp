#include "heartbeat.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "servicemetrics.h"

#include <QDateTime>

#include <spdlog/spdlog.h>

#include <memory>

namespace payops {

Heartbeat::Heartbeat(Dsn dsn, InstanceInfo info, SwitchObserver &switchObserver,
                     ServiceMetrics &metrics, int intervalMs)
    : m_dsn(std::move(dsn))
    , m_info(std::move(info))
    , m_switch(switchObserver)
    , m_metrics(metrics)
    , m_intervalMs(intervalMs)
    , m_startedAtMs(QDateTime::currentMSecsSinceEpoch())
{
}

Heartbeat::~Heartbeat()
{
    stop();
}

void Heartbeat::start()
{
    {
        db::Connection connection(m_dsn, QStringLiteral("heartbeat-first"));
        beat(connection.database());
    }
    m_thread = std::thread([this] { run(); });
}

void Heartbeat::stop()
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping)
            return;
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
    try {
        db::Connection connection(m_dsn, QStringLiteral("heartbeat-stop"));
        db::exec(connection.database(),
                 QStringLiteral("UPDATE callback_instance SET stopped_at = NOW(3), "
                                "last_seen_at = NOW(3) WHERE id = ?"),
                 {m_info.id});
    } catch (const db::Error &error) {
        spdlog::warn("could not mark instance {} stopped: {}", m_info.id.toStdString(),
                     error.what());
    }
}

void Heartbeat::beat(const QSqlDatabase &db)
{
    const SwitchState state = readSwitch(db);
    m_switch.observe(state.mode == CallbackMode::RecordOnly, state.version);
    static const char *const kUpstreamStates[] = {"", "ok", "failing"};
    const qint64 checked = m_metrics.upstreamCheckedMicros();
    db::exec(db,
             QStringLiteral(
                 "INSERT INTO callback_instance (id, host, pid, listen, build_version, handler, "
                 "started_at, last_seen_at, "
                 "switch_version_applied, mode_applied, stopped_at, mode, upstream, "
                 "upstream_state, upstream_checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                 "NOW(3), ?, ?, NULL, ?, ?, ?, ?) "
                 "ON DUPLICATE KEY UPDATE host = VALUES(host), pid = VALUES(pid), listen = "
                 "VALUES(listen), "
                 "build_version = VALUES(build_version), handler = VALUES(handler), started_at = "
                 "VALUES(started_at), "
                 "last_seen_at = NOW(3), switch_version_applied = VALUES(switch_version_applied), "
                 "mode_applied = VALUES(mode_applied), stopped_at = NULL, mode = VALUES(mode), "
                 "upstream = VALUES(upstream), upstream_state = VALUES(upstream_state), "
                 "upstream_checked_at = VALUES(upstream_checked_at)"),
             {m_info.id, m_info.host, m_info.pid, m_info.listen, QStringLiteral(PAYOPS_VERSION),
              m_info.handler, formatMicros(m_startedAtMs * 1000), m_switch.versionAcknowledged(),
              callbackModeName(state.mode), m_info.mode, m_info.upstream.left(255),
              QLatin1String(kUpstreamStates[int(m_metrics.upstreamState())]),
              checked > 0 ? QVariant(formatMicros(checked)) : QVariant()});
    // A gateway's later events held by record-only are owed to its handler as its payments are.
    m_metrics.setBacklog(
        db::scalar(db, QStringLiteral("SELECT (SELECT COUNT(*) FROM pay_callback_log WHERE status "
                                      "= 'RECORDED') + (SELECT COUNT(*) FROM callback_event WHERE "
                                      "status = 'RECORDED')"))
            .toLongLong());
    m_reachable.store(true);
}

void Heartbeat::run()
{
    // One connection for the life of the thread; a new one after a failure.
    std::unique_ptr<db::Connection> connection;
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        lock.unlock();
        try {
            if (!connection)
                connection = std::make_unique<db::Connection>(m_dsn, QStringLiteral("heartbeat"));
            beat(connection->database());
        } catch (const db::Error &error) {
            connection.reset();
            if (m_reachable.exchange(false))
                spdlog::warn("heartbeat: database unreachable: {}", error.what());
        }
        lock.lock();
        m_wake.wait_for(lock, std::chrono::milliseconds(m_intervalMs),
                        [this] { return m_stopping; });
    }
}

} // namespace payops
