#pragma once

#include "db/dsn.h"

#include <QObject>
#include <QPointer>

class QThread;

namespace payops::console {

// Starts the local sandbox (a private MariaDB, migrated and seeded on first use) on a thread
// of its own: the first start takes many seconds, and a UI thread must never wait that long.
class SandboxLauncher final : public QObject
{
    Q_OBJECT

public:
    explicit SandboxLauncher(QObject *parent = nullptr);
    ~SandboxLauncher() override;
    Q_DISABLE_COPY_MOVE(SandboxLauncher)

    // Does nothing while a start is under way. directory empty: the default sandbox.
    void start(const QString &directory = QString());
    bool isRunning() const { return m_thread != nullptr; }

Q_SIGNALS:
    void progress(const QString &text);
    void started(const payops::Dsn &dsn);
    void failed(const QString &message);

private:
    QThread *m_thread = nullptr;
};

} // namespace payops::console
