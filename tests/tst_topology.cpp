#include "db/connection.h"
#include "db/dberror.h"
#include "testmain.h"
#include "topology.h"

#include <QSqlQuery>
#include <QTemporaryDir>

using namespace payops;

namespace {

qint64 count(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("count"));
    // On a Galera node a read waits until the node has applied what the cluster committed;
    // elsewhere the setting changes nothing.
    db::exec(connection.database(), QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
    return db::scalar(connection.database(), sql).toLongLong();
}

void insertRows(const Dsn &dsn, int first, int last)
{
    db::Connection connection(dsn, QStringLiteral("insert"));
    for (int v = first; v <= last; ++v)
        db::exec(connection.database(), QStringLiteral("INSERT INTO probe.t (v) VALUES (?)"), {v});
}

void setReadOnly(const Dsn &dsn, bool on)
{
    db::Connection connection(dsn, QStringLiteral("read-only"));
    db::execDirect(connection.database(),
                   QStringLiteral("SET GLOBAL read_only = %1").arg(on ? 1 : 0));
}

} // namespace

// The servers beyond one that the tests of replicas, clusters and failover stand on: each
// started here as a team runs it, and shown to behave as the docs say it does.
class TstTopology : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aReplicaFollowsItsPrimaryByGtid();
    void aGaleraClusterReplicatesAndANodeKilledRejoins();
};

void TstTopology::aReplicaFollowsItsPrimaryByGtid()
{
    QTemporaryDir directory(QStringLiteral("/tmp/payops-topology-XXXXXX"));
    testkit::ReplicaPair pair(directory.path());
    {
        db::Connection primary(pair.primaryDsn({}), QStringLiteral("schema"));
        db::execDirect(primary.database(), QStringLiteral("CREATE DATABASE probe"));
        db::execDirect(primary.database(),
                       QStringLiteral("CREATE TABLE probe.t (id BIGINT AUTO_INCREMENT PRIMARY "
                                      "KEY, v INT NOT NULL) ENGINE=InnoDB"));
    }
    insertRows(pair.primaryDsn({}), 1, 100);
    pair.waitForReplica();
    QCOMPARE(count(pair.replicaDsn({}), QStringLiteral("SELECT COUNT(*) FROM probe.t")), 100);
    QCOMPARE(count(pair.replicaDsn({}), QStringLiteral("SELECT SUM(v) FROM probe.t")), 5050);

    // A list of servers goes to the first that takes writes, and refuses two that do: a former
    // primary brought back writable beside the promoted replica would take a share of the
    // payments. A listed server that does not answer is passed over.
    Dsn list;
    list.user = QStringLiteral("lister");
    list.password = QStringLiteral("Lister-1");
    list.host = QStringLiteral("127.0.0.1");
    list.port = pair.primaryPort();
    list.laterServers = {{QStringLiteral("127.0.0.1"), testkit::freeLoopbackPort()},
                         {QStringLiteral("127.0.0.1"), pair.replicaPort()}};
    list.database = QStringLiteral("probe");
    {
        db::Connection admin(pair.primaryDsn({}), QStringLiteral("lister"));
        db::execDirect(admin.database(),
                       QStringLiteral("CREATE USER lister@'127.0.0.1' IDENTIFIED BY 'Lister-1'"));
        db::execDirect(admin.database(), QStringLiteral("GRANT SELECT ON probe.* TO "
                                                        "lister@'127.0.0.1'"));
    }
    pair.waitForReplica();
    QCOMPARE(count(list, QStringLiteral("SELECT @@port")), pair.primaryPort());
    setReadOnly(pair.replicaDsn({}), false);
    try {
        db::Connection twoPrimaries(list, QStringLiteral("two-primaries"));
        QFAIL("a connection went to one of two servers that both take writes");
    } catch (const db::Error &error) {
        QVERIFY2(QString::fromUtf8(error.what()).contains(QLatin1String("two primaries")),
                 error.what());
    }
    setReadOnly(pair.replicaDsn({}), true);
    QCOMPARE(count(list, QStringLiteral("SELECT @@port")), pair.primaryPort());

    // The replica is read-only to anyone without the right to bypass it.
    {
        db::Connection replica(pair.replicaDsn({}), QStringLiteral("reader"));
        db::execDirect(replica.database(),
                       QStringLiteral("CREATE USER reader@localhost IDENTIFIED VIA unix_socket"));
        QCOMPARE(
            db::scalar(replica.database(), QStringLiteral("SELECT @@global.read_only")).toInt(), 1);
    }

    // A failover: the primary dies, the replica is promoted and takes writes, with every
    // row the primary had sent before it died.
    pair.killPrimary();
    pair.promoteReplica();
    insertRows(pair.replicaDsn({}), 101, 110);
    QCOMPARE(count(pair.replicaDsn({}), QStringLiteral("SELECT COUNT(*) FROM probe.t")), 110);
}

void TstTopology::aGaleraClusterReplicatesAndANodeKilledRejoins()
{
    QTemporaryDir directory(QStringLiteral("/tmp/payops-galera-XXXXXX"));
    testkit::GaleraCluster cluster(directory.path(), 3);
    QCOMPARE(count(cluster.dsn(2, {}),
                   QStringLiteral("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                                  "WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'")),
             3);
    {
        db::Connection first(cluster.dsn(0, {}), QStringLiteral("schema"));
        db::execDirect(first.database(), QStringLiteral("CREATE DATABASE probe"));
        db::execDirect(first.database(),
                       QStringLiteral("CREATE TABLE probe.t (id BIGINT AUTO_INCREMENT PRIMARY "
                                      "KEY, v INT NOT NULL) ENGINE=InnoDB"));
    }
    insertRows(cluster.dsn(1, {}), 1, 20);
    QCOMPARE(count(cluster.dsn(2, {}), QStringLiteral("SELECT COUNT(*) FROM probe.t")), 20);

    // GET_LOCK is local to a node: two nodes both take the same name at once, which one
    // server never allows. This is why the pay_no lock alone cannot hold on a cluster.
    {
        db::Connection a(cluster.dsn(0, {}), QStringLiteral("lock-a"));
        db::Connection b(cluster.dsn(1, {}), QStringLiteral("lock-b"));
        QCOMPARE(db::scalar(a.database(), QStringLiteral("SELECT GET_LOCK('pay:42', 0)")).toInt(),
                 1);
        QCOMPARE(db::scalar(b.database(), QStringLiteral("SELECT GET_LOCK('pay:42', 0)")).toInt(),
                 1);
    }

    // Two nodes writing one row (ids step by the cluster's size, so the row is found by value): the
    // transaction that certifies second is aborted, and the abort surfaces at its next statement,
    // here its COMMIT, as error 1213.
    {
        db::Connection a(cluster.dsn(0, {}), QStringLiteral("writer-a"));
        db::Connection b(cluster.dsn(1, {}), QStringLiteral("writer-b"));
        db::execDirect(a.database(), QStringLiteral("BEGIN"));
        db::exec(a.database(), QStringLiteral("UPDATE probe.t SET v = 1001 WHERE v = 1"));
        db::execDirect(b.database(), QStringLiteral("BEGIN"));
        db::exec(b.database(), QStringLiteral("UPDATE probe.t SET v = 2001 WHERE v = 1"));
        db::execDirect(b.database(), QStringLiteral("COMMIT"));
        int code = 0;
        try {
            db::execDirect(a.database(), QStringLiteral("COMMIT"));
        } catch (const db::Error &error) {
            code = error.serverCode();
        }
        QCOMPARE(code, 1213);
    }
    QCOMPARE(
        count(cluster.dsn(2, {}), QStringLiteral("SELECT COUNT(*) FROM probe.t WHERE v = 2001")),
        1);
    QCOMPARE(
        count(cluster.dsn(2, {}), QStringLiteral("SELECT COUNT(*) FROM probe.t WHERE v = 1001")),
        0);

    // A node killed in the middle of writes rejoins and catches up by itself.
    cluster.kill(2);
    insertRows(cluster.dsn(0, {}), 21, 60);
    cluster.restart(2);
    QCOMPARE(count(cluster.dsn(2, {}), QStringLiteral("SELECT COUNT(*) FROM probe.t")), 60);
    QCOMPARE(count(cluster.dsn(2, {}), QStringLiteral("SELECT SUM(v) FROM probe.t")),
             count(cluster.dsn(0, {}), QStringLiteral("SELECT SUM(v) FROM probe.t")));
}

PAYOPS_TEST_MAIN_CORE(TstTopology)
#include "tst_topology.moc"
