#include "readsourcemonitor.h"

#include "consolesettings.h"
#include "worker.h"

namespace payops::console {

ReadSourceMonitor::ReadSourceMonitor(const Dsn &primary, const Dsn &read, QObject *parent)
    : QObject(parent)
    , m_primary(std::make_unique<Worker>(primary))
    , m_read(std::make_unique<Worker>(read.asReadOnly()))
{
    const ConsoleSettings &settings = ConsoleSettings::instance();
    const auto follow = [this, &settings] { m_timer.start(settings.refreshSeconds() * 1000); };
    connect(&settings, &ConsoleSettings::changed, this, follow);
    connect(&m_timer, &QTimer::timeout, this, &ReadSourceMonitor::measure);
    follow();
}

ReadSourceMonitor::~ReadSourceMonitor() = default;

void ReadSourceMonitor::measure()
{
    if (m_pending)
        return;
    m_pending = true;
    // The primary first: a replica that moves on meanwhile is shown a little behind at worst.
    m_primary->submit<QString>(
        QStringLiteral("primary-position"), jobOf(readPrimaryPosition), this,
        [this](const QString &position) { measureReplica(position); },
        // Without the primary the replica's own delay is still worth showing.
        [this](const db::Error &) { measureReplica(std::nullopt); });
}

void ReadSourceMonitor::measureReplica(const std::optional<QString> &primaryPosition)
{
    m_read->submit<ReplicaSide>(
        QStringLiteral("replica-position"), jobOf(readReplicaSide), this,
        [this, primaryPosition](const ReplicaSide &side) {
            m_pending = false;
            m_last = combineReadSource(m_read->dsn().toDisplayString(), primaryPosition, side,
                                       ConsoleSettings::instance().staleSeconds());
            Q_EMIT measured(*m_last);
        },
        [this](const db::Error &error) {
            m_pending = false;
            Q_EMIT failed(db::userMessage(error));
        });
}

} // namespace payops::console
