#pragma once

#include "db/dsn.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

class QProcess;

namespace payops::console {

// Local payops-callbackd instances on the sandbox, run as child processes of the console, so
// that a presenter can start the incident's handler, fire a storm at it and restart it with
// the safe one without a terminal. Everything here is asynchronous: start() returns at once,
// and changed() says when an instance has its port or has stopped.
class LocalInstances final : public QObject
{
    Q_OBJECT

public:
    struct Instance
    {
        enum class State { Starting, Running, Stopping, Stopped, Failed };
        QString name;
        QString handler;
        int port = 0;         // 0 until the child printed its "listening on" line
        bool running = false; // listening and not exited
        QString logPath;      // the child's stdout and stderr, line by line
        State state = State::Starting;
    };

    explicit LocalInstances(QObject *parent = nullptr);
    // SIGTERM to every child, a bounded wait for them to finish their callbacks, then kill.
    ~LocalInstances() override;
    Q_DISABLE_COPY_MOVE(LocalInstances)

    // Default: $PAYOPS_CALLBACKD, else payops-callbackd next to the running binary.
    void setCallbackdPath(const QString &path);
    QString callbackdPath() const;

    // Starts `count` instances named "<handler>-1".. on free loopback ports. handler is
    // "safe" or "unsafe-demo"; the latter only on a database marked as a sandbox (checked
    // here first, on a short-lived connection of a thread of its own, and by callbackd
    // itself). Instances already running are stopped first. Errors come as failed().
    void start(const Dsn &dsn, const QString &handler, int count);
    void stopAll();
    // The same number of instances again, with another handler (the fix's last step).
    void restartAll(const QString &handler);

    QList<Instance> instances() const;
    // "http://127.0.0.1:PORT" of the instances that are running.
    QStringList targets() const;
    // One secret for all of them, generated once and kept in a file only the user can read.
    QByteArray secret() const;
    QString secretFilePath() const;
    // True while a start or stop is under way (the page disables its buttons meanwhile).
    bool isBusy() const;
    // Milliseconds the unsafe-demo handler sleeps between releasing its lock and committing:
    // long enough that a storm's copies land in the gap and the race shows.
    void setUnsafeCommitDelayMs(int ms) { m_unsafeCommitDelayMs = ms; }

Q_SIGNALS:
    void changed();
    void logLine(const QString &instance, const QString &line);
    void failed(const QString &message);

private:
    struct Child;
    struct PendingLaunch
    {
        Dsn dsn;
        QString handler;
        int count = 0;
    };
    void launch(const Dsn &dsn, const QString &handler, int count);
    void launchWhenStopped();
    void launchOne(const Dsn &dsn, const QString &handler, const QString &name);
    void finishChild(Child *child);
    void readLines(Child *child, int channel);
    void terminateAll(int waitMs);
    bool ensureSecretFile(QString *error);

    QString m_callbackdPath;
    QString m_secretFile;
    mutable QByteArray m_secret; // read from the file once
    std::vector<std::unique_ptr<Child>> m_children;
    Dsn m_dsn;
    std::optional<PendingLaunch> m_pendingLaunch; // waits for the old children to end
    int m_unsafeCommitDelayMs = 150;
    int m_generation = 0; // a start newer than a pending sandbox check makes its answer stale
    bool m_checking = false;
};

} // namespace payops::console
