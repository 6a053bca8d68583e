#pragma once

#include "db/dsn.h"
#include "lab/localserver.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace payops::testkit {

// Servers beyond one, each a LocalServer in a folder of its own under `directory`, on
// loopback ports picked free, stopped when the object goes. Tests and benchmarks that need
// them carry the label `cluster` (docs/development.md).

// A primary and one asynchronous replica following it by GTID, both with the binary log on,
// the replica read-only, as a team runs them when operations staff get the replica.
class ReplicaPair final
{
public:
    enum class Replication {
        Asynchronous,
        // MariaDB's built-in semi-synchronous replication, wait point AFTER_SYNC: a commit is
        // answered only once the replica has the transaction in its relay log, and the primary
        // waits for that up to 60 s before it falls back to asynchronous.
        SemiSynchronous,
    };

    // Starts both and the replication. Throws std::runtime_error.
    explicit ReplicaPair(const QString &directory,
                         Replication replication = Replication::Asynchronous);
    ~ReplicaPair();
    ReplicaPair(const ReplicaPair &) = delete;
    ReplicaPair &operator=(const ReplicaPair &) = delete;

    // root over the unix socket; `database` may be empty.
    Dsn primaryDsn(const QString &database) const;
    Dsn replicaDsn(const QString &database) const;
    int primaryPort() const { return m_primaryPort; }
    int replicaPort() const { return m_replicaPort; }

    // Waits until the replica has applied all the primary has committed so far
    // (MASTER_GTID_WAIT on the primary's gtid_binlog_pos). Throws std::runtime_error on time out.
    void waitForReplica(int timeoutSeconds = 60) const;
    // SIGKILL: the primary is gone as in a crash, with whatever it had not sent yet.
    void killPrimary();
    // What an operator does in a failover: the replica applies all it received, stops
    // following and takes writes.
    void promoteReplica();

private:
    void startSemiSync();

    std::unique_ptr<LocalServer> m_primary;
    std::unique_ptr<LocalServer> m_replica;
    int m_primaryPort = 0;
    int m_replicaPort = 0;
};

// A MariaDB Galera cluster on loopback: the first node bootstraps it, the others join by rsync
// state transfer. Started by root, the nodes run as the OS user `nobody`
// (LocalServer::setServiceUser).
class GaleraCluster final
{
public:
    // Starts `nodes` nodes and returns when every one is synced. Throws std::runtime_error,
    // among others when Galera is not installed (Debian package galera-4).
    explicit GaleraCluster(const QString &directory, int nodes = 3);
    ~GaleraCluster();
    GaleraCluster(const GaleraCluster &) = delete;
    GaleraCluster &operator=(const GaleraCluster &) = delete;

    int size() const { return int(m_nodes.size()); }
    // root over node i's unix socket; `database` may be empty.
    Dsn dsn(int node, const QString &database) const;
    int port(int node) const { return m_nodes[std::size_t(node)].sqlPort; }

    // SIGKILL of one node's server, as in a crash; the others carry on as the cluster.
    void kill(int node);
    // Starts a node again and waits until it has caught up (a state transfer when needed).
    void restart(int node);
    // Waits until the node says Synced. Throws std::runtime_error on time out.
    void waitSynced(int node, int timeoutSeconds = 120) const;

private:
    struct Node
    {
        std::unique_ptr<LocalServer> server;
        int sqlPort = 0;
        int groupPort = 0; // gcomm
        int istPort = 0;
        int sstPort = 0;
    };
    QStringList options(int node, bool bootstrap) const;
    void start(int node, bool bootstrap);

    std::vector<Node> m_nodes;
    QString m_provider;
};

// A TCP port on 127.0.0.1 free at the time of the call, for a server to listen on: below the
// ports the kernel gives outgoing connections, so that none takes it meanwhile.
int freeLoopbackPort();

// Creates USER@localhost holding only `role` (its default role) through `admin` (a root DSN
// over a server's socket), and returns `admin` as that account. The grant tables are
// replicated: made on one node of a Galera cluster, the account logs in on every node.
Dsn roleAccount(const Dsn &admin, const QString &user, const QString &role);
// `dsn` (another node, another database) as `account`'s user and password.
Dsn asAccount(Dsn dsn, const Dsn &account);

} // namespace payops::testkit
