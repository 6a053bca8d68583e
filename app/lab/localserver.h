#pragma once

#include "db/dsn.h"

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace payops::db {
class Connection;
}

namespace payops {

// A private MariaDB server in one directory: data/, mysqld.sock, mysqld.pid, mysqld.err.
// No system service, no TCP unless a port is asked for. The sandbox and the test harness
// both run their server through this class.
//
// The server runs as the user who starts it, so whoever reaches it acts as that user: the
// directory is 0700 (its socket is unreachable to other users), the server reads and writes
// files only in files/ (secure_file_priv), the administrator account authenticates by unix
// socket as the starting user only, and root over TCP needs the generated password kept in
// tcp-root-password (0600).
class LocalServer final
{
    Q_DECLARE_TR_FUNCTIONS(payops::LocalServer)

public:
    enum class State { Stopped, Running, Stale };
    struct Status
    {
        State state = State::Stopped;
        qint64 pid = 0;
        int tcpPort = 0; // for Running: the port it listens on at 127.0.0.1, 0 for none
        QString detail;  // for Stale: what was left behind
    };
    using Progress = std::function<void(const QString &)>;

    explicit LocalServer(const QString &directory);

    // <AppDataLocation>/sandbox
    static QString defaultDirectory();

    const QString &directory() const { return m_dir; }
    QString socketPath() const;
    QString errorLogPath() const;
    // The administrator over the unix socket, authenticated by the kernel as this OS user.
    // MariaDB 10.11's unix_socket plugin admits an OS user only to the account of the same
    // name, so the account is root for root and named after any other user who starts it.
    Dsn rootDsn(const QString &database) const;
    // root over TCP at 127.0.0.1:port, with the generated password; empty password when the
    // server has not made one yet.
    Dsn tcpRootDsn(int port, const QString &database) const;
    QString tcpPasswordPath() const;
    // Where SELECT ... INTO OUTFILE and LOAD DATA INFILE may reach (secure_file_priv).
    QString filesDir() const;
    static QString osUserName();

    Status status() const;
    // Starts the server unless it already runs; recovers from a stale pid or socket file
    // left by a crash; creates the data directory on first use. tcpPort 0 means no TCP.
    // serverOptions go to mariadbd after the class's own, so they override them (a benchmark
    // of production's durability settings).
    // Throws std::runtime_error naming what failed, with the tail of the server's log.
    void start(int tcpPort = 0, const Progress &progress = {},
               const QStringList &serverOptions = {});
    // Stops it cleanly (SIGTERM, then waits). Returns false if it was not running.
    bool stop(int timeoutSeconds = 60);

    // When root starts it, the server runs as this OS user instead, and the directory is
    // given to that user. A Galera node needs it: the daemon of the rsync state transfer,
    // started by root, drops to `nobody` and then cannot read a data directory private to
    // root. Empty (the default): the server runs as whoever starts it.
    void setServiceUser(const QString &user) { m_serviceUser = user; }

private:
    QString pidFilePath() const;
    // The server's temporary files stay in its own directory: with the default, /tmp, the
    // temporary tables of two servers on one machine (the sandbox, a test run, a benchmark)
    // share a directory, and a first start was seen to lose its bootstrap tables there.
    QString tmpDir() const;
    void initializeDataDirectory(const Progress &progress);
    // The password of root@127.0.0.1, made (0600) on first use.
    QString tcpPassword() const;
    // Brings the accounts to what the class comment promises, also in a directory made by an
    // older payops whose root had no password: idempotent, run on every start.
    void secureAccounts() const;
    void removeStaleFiles() const;
    // As rootDsn(), or as root without password in a directory an older payops made.
    std::unique_ptr<db::Connection> connectAsAdmin(const QString &purpose) const;
    void waitUntilReady(qint64 pid, int timeoutSeconds) const;
    // The --user the server and mariadb-install-db are given; empty for none.
    QString serverUser() const;
    // chown -R of the directory to serverUser(), when it is not root.
    void giveDirectoryToServerUser() const;

    QString m_dir;
    QString m_serviceUser;
};

} // namespace payops
