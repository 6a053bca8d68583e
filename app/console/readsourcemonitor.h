#pragma once

#include "db/dsn.h"
#include "domain/inspection/readsource.h"

#include <QObject>
#include <QTimer>

#include <memory>
#include <optional>

namespace payops::console {

class Worker;

// How far the console's read database (a replica, --read-db) is behind its primary, measured
// on the refresh beat: the primary's GTID position on a connection to the primary, then the
// replica's on one to the replica, each on a worker of its own so that a page's long read
// never delays it. The window shows the result once, for every page that reads there.
class ReadSourceMonitor final : public QObject
{
    Q_OBJECT

public:
    ReadSourceMonitor(const Dsn &primary, const Dsn &read, QObject *parent = nullptr);
    ~ReadSourceMonitor() override;
    Q_DISABLE_COPY_MOVE(ReadSourceMonitor)

    // Measures once now (the timer does so every refresh interval).
    void measure();
    const std::optional<ReadSource> &last() const { return m_last; }

Q_SIGNALS:
    void measured(const payops::ReadSource &source);
    // The replica itself could not be read.
    void failed(const QString &reason);

private:
    void measureReplica(const std::optional<QString> &primaryPosition);

    std::unique_ptr<Worker> m_primary;
    std::unique_ptr<Worker> m_read;
    QTimer m_timer;
    bool m_pending = false;
    std::optional<ReadSource> m_last;
};

} // namespace payops::console
