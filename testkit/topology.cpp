#include "topology.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QThread>

#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace payops::testkit {
namespace {

// What every server of a topology shares: smaller than a sandbox's, since three run at once
// on one machine beside the tests.
const QStringList kSmallServer{QStringLiteral("--innodb-buffer-pool-size=128M"),
                               QStringLiteral("--innodb-log-file-size=48M")};

std::runtime_error failure(const QString &what)
{
    return std::runtime_error(what.toStdString());
}

// The folder of one server. Its parent is made passable to others (0711, no listing), so that
// a server running as another OS user (a Galera node started by root) reaches its own folder.
QString serverFolder(const QString &directory, const QString &name)
{
    QDir().mkpath(directory);
    QFile::setPermissions(directory, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                         QFileDevice::ExeOwner | QFileDevice::ExeGroup |
                                         QFileDevice::ExeOther);
    return directory + QLatin1Char('/') + name;
}

void killServer(LocalServer &server)
{
    const LocalServer::Status status = server.status();
    if (status.state != LocalServer::State::Running)
        return;
    ::kill(pid_t(status.pid), SIGKILL);
    QDeadlineTimer deadline(30000);
    while (server.status().state == LocalServer::State::Running) {
        if (deadline.hasExpired())
            throw failure(
                QStringLiteral("the server in %1 outlived SIGKILL").arg(server.directory()));
        QThread::msleep(50);
    }
}

void stopQuietly(LocalServer *server)
{
    if (!server)
        return;
    try {
        server->stop();
    } catch (const std::exception &) {
        killServer(*server); // a node that will not stop must not outlive its test
    }
}

QString randomPassword()
{
    return QString::number(QRandomGenerator::system()->generate64(), 16) +
           QString::number(QRandomGenerator::system()->generate64(), 16);
}

QString galeraProvider()
{
    for (const char *path : {"/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so",
                             "/usr/lib64/galera-4/libgalera_smm.so"})
        if (QFileInfo::exists(QString::fromLatin1(path)))
            return QString::fromLatin1(path);
    throw failure(QStringLiteral("Galera is not installed: no libgalera_smm.so (Debian package "
                                 "galera-4; script/bootstrap installs it)"));
}

} // namespace

Dsn roleAccount(const Dsn &admin, const QString &user, const QString &role)
{
    Dsn account = admin;
    account.user = user;
    account.password = QStringLiteral("Role-") + user;
    db::Connection connection(admin, QStringLiteral("role-account"));
    const QSqlDatabase db = connection.database();
    db::execDirect(db, QStringLiteral("CREATE USER '%1'@'localhost' IDENTIFIED BY '%2'")
                           .arg(user, account.password));
    db::execDirect(db, QStringLiteral("GRANT %1 TO '%2'@'localhost'").arg(role, user));
    db::execDirect(db, QStringLiteral("SET DEFAULT ROLE %1 FOR '%2'@'localhost'").arg(role, user));
    return account;
}

Dsn asAccount(Dsn dsn, const Dsn &account)
{
    dsn.user = account.user;
    dsn.password = account.password;
    return dsn;
}

namespace {

// The lowest port the kernel hands out for outgoing connections (and for bind to port 0).
int lowestEphemeralPort()
{
    QFile range(QStringLiteral("/proc/sys/net/ipv4/ip_local_port_range"));
    if (range.open(QIODevice::ReadOnly)) {
        const int low =
            QString::fromLatin1(range.readAll()).simplified().section(u' ', 0, 0).toInt();
        if (low > 2048)
            return low;
    }
    return 32768;
}

bool canListenOn(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        throw failure(QStringLiteral("no socket for a free port"));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(quint16(port));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
    ::close(fd);
    return ok;
}

} // namespace

int freeLoopbackPort()
{
    // Below the ephemeral range: a port from it, free when asked, could be the local end of
    // any outgoing connection (another test's clients, a node joining its cluster) by the
    // time the server binds it, which then fails with "Address already in use". Each process
    // starts at its own place, by pid, so that two tests run at once seldom try the same.
    constexpr int kLowest = 10000; // above the well-known services
    static const int span = lowestEphemeralPort() - kLowest;
    static std::atomic<int> next{int((qint64(::getpid()) * 211) % span)};
    for (int tries = 0; tries < span; ++tries) {
        const int port = kLowest + next.fetch_add(1) % span;
        if (canListenOn(port))
            return port;
    }
    throw failure(QStringLiteral("no free port on 127.0.0.1"));
}

// ---- ReplicaPair ----

ReplicaPair::ReplicaPair(const QString &directory, Replication replication)
    : m_primary(std::make_unique<LocalServer>(serverFolder(directory, QStringLiteral("primary"))))
    , m_replica(std::make_unique<LocalServer>(serverFolder(directory, QStringLiteral("replica"))))
    , m_primaryPort(freeLoopbackPort())
    , m_replicaPort(freeLoopbackPort())
{
    // Both write a binary log with GTIDs, so that the replica can become the primary and a
    // position means the same on both.
    const QStringList binlog{
        QStringLiteral("--log-bin=binlog"), QStringLiteral("--binlog-format=ROW"),
        QStringLiteral("--log-slave-updates"), QStringLiteral("--gtid-strict-mode=ON")};
    const bool semiSync = replication == Replication::SemiSynchronous;
    try {
        m_primary->start(m_primaryPort, {},
                         kSmallServer + binlog + QStringList{QStringLiteral("--server-id=1")});
        QStringList replicaOptions{QStringLiteral("--server-id=2"),
                                   QStringLiteral("--read-only=ON")};
        if (semiSync)
            replicaOptions << QStringLiteral("--rpl-semi-sync-slave-enabled=ON");
        m_replica->start(m_replicaPort, {}, kSmallServer + binlog + replicaOptions);
        const QString password = randomPassword();
        {
            db::Connection primary(primaryDsn({}), QStringLiteral("replication-account"));
            db::execDirect(
                primary.database(),
                QStringLiteral("CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY '%1'").arg(password));
            db::execDirect(primary.database(),
                           QStringLiteral("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'"));
        }
        db::Connection replica(replicaDsn({}), QStringLiteral("replication-start"));
        db::execDirect(replica.database(),
                       QStringLiteral("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = "
                                      "%1, MASTER_USER = 'repl', MASTER_PASSWORD = '%2', "
                                      "MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1")
                           .arg(m_primaryPort)
                           .arg(password));
        db::execDirect(replica.database(), QStringLiteral("START SLAVE"));
        waitForReplica();
        if (semiSync)
            startSemiSync();
    } catch (...) {
        stopQuietly(m_replica.get());
        stopQuietly(m_primary.get());
        throw;
    }
}

ReplicaPair::~ReplicaPair()
{
    stopQuietly(m_replica.get());
    stopQuietly(m_primary.get());
}

Dsn ReplicaPair::primaryDsn(const QString &database) const
{
    return m_primary->rootDsn(database);
}

Dsn ReplicaPair::replicaDsn(const QString &database) const
{
    return m_replica->rootDsn(database);
}

void ReplicaPair::waitForReplica(int timeoutSeconds) const
{
    QString position;
    {
        db::Connection primary(primaryDsn({}), QStringLiteral("replication-position"));
        position =
            db::scalar(primary.database(), QStringLiteral("SELECT @@gtid_binlog_pos")).toString();
    }
    db::Connection replica(replicaDsn({}), QStringLiteral("replication-wait"));
    const int result =
        db::scalar(replica.database(), QStringLiteral("SELECT MASTER_GTID_WAIT(?, ?)"),
                   {position, timeoutSeconds})
            .toInt();
    if (result == 0)
        return;
    QSqlQuery status = db::exec(replica.database(), QStringLiteral("SHOW SLAVE STATUS"));
    QString errors;
    if (status.next())
        errors = status.value(QStringLiteral("Last_IO_Error")).toString() + QLatin1Char(' ') +
                 status.value(QStringLiteral("Last_SQL_Error")).toString();
    throw failure(QStringLiteral("the replica did not reach %1 within %2 s: %3")
                      .arg(position)
                      .arg(timeoutSeconds)
                      .arg(errors.trimmed()));
}

void ReplicaPair::startSemiSync()
{
    // Turned on once the replica has caught up, so that setting up the replication does not
    // wait for an acknowledgement no replica sends yet. The replica's I/O thread then connects
    // again: a primary takes a replica as semi-synchronous only when it connects.
    {
        db::Connection primary(primaryDsn({}), QStringLiteral("semi-sync"));
        for (const char *setting :
             {"rpl_semi_sync_master_wait_point = AFTER_SYNC",
              "rpl_semi_sync_master_timeout = 60000", "rpl_semi_sync_master_enabled = ON"})
            db::execDirect(primary.database(),
                           QStringLiteral("SET GLOBAL ") + QLatin1String(setting));
    }
    {
        db::Connection replica(replicaDsn({}), QStringLiteral("semi-sync"));
        db::execDirect(replica.database(), QStringLiteral("STOP SLAVE IO_THREAD"));
        db::execDirect(replica.database(), QStringLiteral("START SLAVE IO_THREAD"));
    }
    db::Connection primary(primaryDsn({}), QStringLiteral("semi-sync-status"));
    QDeadlineTimer deadline(30000);
    while (!deadline.hasExpired()) {
        QSqlQuery status = db::exec(
            primary.database(), QStringLiteral("SHOW STATUS LIKE 'Rpl_semi_sync_master_clients'"));
        if (status.next() && status.value(1).toInt() > 0)
            return;
        QThread::msleep(100);
    }
    throw failure(QStringLiteral("the replica did not connect as semi-synchronous within 30 s"));
}

void ReplicaPair::killPrimary()
{
    killServer(*m_primary);
}

void ReplicaPair::promoteReplica()
{
    db::Connection replica(replicaDsn({}), QStringLiteral("promote"));
    // What the replica received but has not applied yet is part of what it takes over: a
    // plain STOP SLAVE would leave it in the relay log, and RESET SLAVE ALL would delete it.
    db::execDirect(replica.database(), QStringLiteral("STOP SLAVE IO_THREAD"));
    QString received;
    {
        QSqlQuery status = db::exec(replica.database(), QStringLiteral("SHOW SLAVE STATUS"));
        if (status.next())
            received = status.value(QStringLiteral("Gtid_IO_Pos")).toString();
    }
    if (!received.isEmpty() &&
        db::scalar(replica.database(), QStringLiteral("SELECT MASTER_GTID_WAIT(?, 60)"), {received})
                .toInt() != 0)
        throw failure(QStringLiteral("the replica did not apply what it received (%1) within 60 s")
                          .arg(received));
    db::execDirect(replica.database(), QStringLiteral("STOP SLAVE"));
    db::execDirect(replica.database(), QStringLiteral("RESET SLAVE ALL"));
    db::execDirect(replica.database(), QStringLiteral("SET GLOBAL read_only = OFF"));
}

// ---- GaleraCluster ----

GaleraCluster::GaleraCluster(const QString &directory, int nodes)
    : m_provider(galeraProvider())
{
    for (int i = 0; i < nodes; ++i) {
        Node node;
        node.server = std::make_unique<LocalServer>(
            serverFolder(directory, QStringLiteral("node%1").arg(i + 1)));
        // rsync's daemon, started by root, runs as nobody: so must the node, to hand it its files.
        node.server->setServiceUser(QStringLiteral("nobody"));
        node.sqlPort = freeLoopbackPort();
        node.groupPort = freeLoopbackPort();
        node.istPort = freeLoopbackPort();
        node.sstPort = freeLoopbackPort();
        m_nodes.push_back(std::move(node));
    }
    try {
        for (int i = 0; i < nodes; ++i) {
            start(i, i == 0);
            waitSynced(i);
        }
    } catch (...) {
        for (Node &node : m_nodes)
            stopQuietly(node.server.get());
        throw;
    }
}

GaleraCluster::~GaleraCluster()
{
    // The last node down is the one a later bootstrap starts from; it does not matter here.
    for (auto node = m_nodes.rbegin(); node != m_nodes.rend(); ++node)
        stopQuietly(node->server.get());
}

Dsn GaleraCluster::dsn(int node, const QString &database) const
{
    return m_nodes[std::size_t(node)].server->rootDsn(database);
}

QStringList GaleraCluster::options(int node, bool bootstrap) const
{
    const Node &self = m_nodes[std::size_t(node)];
    QStringList members;
    for (const Node &other : m_nodes)
        members << QStringLiteral("127.0.0.1:%1").arg(other.groupPort);
    QStringList options = kSmallServer;
    options << QStringLiteral("--binlog-format=ROW")
            << QStringLiteral("--innodb-autoinc-lock-mode=2") << QStringLiteral("--wsrep-on=ON")
            << QStringLiteral("--wsrep-provider=") + m_provider
            << QStringLiteral("--wsrep-cluster-name=payops")
            << QStringLiteral("--wsrep-node-name=node%1").arg(node + 1)
            << QStringLiteral("--wsrep-node-address=127.0.0.1:%1").arg(self.groupPort)
            << QStringLiteral("--wsrep-cluster-address=gcomm://") + members.join(QLatin1Char(','))
            << QStringLiteral("--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:%1;"
                              "ist.recv_addr=127.0.0.1:%2;gcache.size=64M")
                   .arg(self.groupPort)
                   .arg(self.istPort)
            << QStringLiteral("--wsrep-sst-receive-address=127.0.0.1:%1").arg(self.sstPort)
            << QStringLiteral("--wsrep-sst-method=rsync")
            << QStringLiteral("--wsrep-slave-threads=4");
    if (bootstrap)
        options << QStringLiteral("--wsrep-new-cluster");
    return options;
}

void GaleraCluster::start(int node, bool bootstrap)
{
    Node &self = m_nodes[std::size_t(node)];
    self.server->start(self.sqlPort, {}, options(node, bootstrap));
}

void GaleraCluster::kill(int node)
{
    killServer(*m_nodes[std::size_t(node)].server);
}

void GaleraCluster::restart(int node)
{
    start(node, false);
    waitSynced(node);
}

void GaleraCluster::waitSynced(int node, int timeoutSeconds) const
{
    QDeadlineTimer deadline(timeoutSeconds * 1000);
    QString state;
    while (!deadline.hasExpired()) {
        try {
            db::Connection connection(dsn(node, {}), QStringLiteral("galera-state"));
            QSqlQuery query =
                db::exec(connection.database(),
                         QStringLiteral("SHOW STATUS LIKE 'wsrep_local_state_comment'"));
            state = query.next() ? query.value(1).toString() : QString();
            if (state == QLatin1String("Synced"))
                return;
        } catch (const db::Error &) {
            // not accepting connections yet
        }
        QThread::msleep(200);
    }
    throw failure(QStringLiteral("Galera node %1 is not synced after %2 s (state: %3)")
                      .arg(node + 1)
                      .arg(timeoutSeconds)
                      .arg(state.isEmpty() ? QStringLiteral("unknown") : state));
}

} // namespace payops::testkit
