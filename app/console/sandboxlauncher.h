#pragma once

#include "db/dsn.h"

#include <QObject>

#include <memory>

namespace payops::db {
class DbWorker;
}

namespace payops::console {

// Starts the local sandbox (a private MariaDB, migrated and seeded on first use) as a
// standalone job of a database worker of its own: the first start takes many seconds, and a
// UI thread must never wait that long.
class SandboxLauncher final : public QObject
{
    Q_OBJECT

public:
    explicit SandboxLauncher(QObject *parent = nullptr);
    // Never waits for a start under way: it goes on alone, within the wait at exit.
    ~SandboxLauncher() override;
    Q_DISABLE_COPY_MOVE(SandboxLauncher)

    // Does nothing while a start is under way. directory empty: the default sandbox.
    void start(const QString &directory = QString());
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void progress(const QString &text);
    void started(const payops::Dsn &dsn);
    void failed(const QString &message);

private:
    std::unique_ptr<db::DbWorker> m_worker; // made with the first start
    bool m_running = false;
};

} // namespace payops::console
