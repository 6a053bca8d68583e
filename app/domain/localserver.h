#pragma once

#include "db/dsn.h"

#include <QCoreApplication>
#include <QString>

#include <functional>

namespace payops {

// A private MariaDB server in one directory: data/, mysqld.sock, mysqld.pid, mysqld.err.
// No system service, no TCP unless a port is asked for. The sandbox and the test harness
// both run their server through this class.
class LocalServer final
{
    Q_DECLARE_TR_FUNCTIONS(payops::LocalServer)

public:
    enum class State { Stopped, Running, Stale };
    struct Status
    {
        State state = State::Stopped;
        qint64 pid = 0;
        QString detail; // for Stale: what was left behind
    };
    using Progress = std::function<void(const QString &)>;

    explicit LocalServer(const QString &directory);

    // <AppDataLocation>/sandbox
    static QString defaultDirectory();

    const QString &directory() const { return m_dir; }
    QString socketPath() const;
    QString errorLogPath() const;
    // root over the unix socket; the sandbox's root has no password and no TCP.
    Dsn rootDsn(const QString &database) const;

    Status status() const;
    // Starts the server unless it already runs; recovers from a stale pid or socket file
    // left by a crash; creates the data directory on first use. tcpPort 0 means no TCP.
    // Throws std::runtime_error naming what failed, with the tail of the server's log.
    void start(int tcpPort = 0, const Progress &progress = {});
    // Stops it cleanly (SIGTERM, then waits). Returns false if it was not running.
    bool stop(int timeoutSeconds = 60);

private:
    QString pidFilePath() const;
    // The server's temporary files stay in its own directory: with the default, /tmp, the
    // temporary tables of two servers on one machine (the sandbox, a test run, a benchmark)
    // share a directory, and a first start was seen to lose its bootstrap tables there.
    QString tmpDir() const;
    void initializeDataDirectory(const Progress &progress);
    void removeStaleFiles() const;
    void waitUntilReady(qint64 pid, int timeoutSeconds) const;

    QString m_dir;
};

} // namespace payops
