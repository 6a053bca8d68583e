// bench_scaleout: more than one payops-callbackd, and more than one server.
//
// NORMAL callbacks (the safe handler, every callback a new pay_no paying a PENDING order),
// sent by 32 clients over HTTP keep-alive, spread evenly over the instances:
//
// - 1, 2 and 3 instances against one primary that has an asynchronous replica (the one
//   instance is the baseline of every ratio);
// - the same primary and replica with semi-synchronous replication (AFTER_SYNC), 1 and 3
//   instances: what waiting for the replica's acknowledgement costs;
// - a three-node Galera cluster, 1 instance on one node and 3 instances, one per node.
//
// Each figure is two runs in mirrored order, after a run that warms the server up. Each
// topology is private, on loopback, started here (testkit/topology.h). It ends with one
// SUMMARY line (bench/README.md names its keys). It stops at once when a run's callbacks were
// not all processed.

#include "callbackfixture.h"
#include "db/connection.h"
#include "loadrun.h"
#include "log/application.h"
#include "log/logging.h"
#include "topology.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QTextStream>

#include <csignal>
#include <map>
#include <memory>

using namespace payops;

namespace {

constexpr int kDefaultRequests = 2000;
constexpr int kClients = 32;
const QString kDatabase = QStringLiteral("bench");

// Clients spread over several endpoints: the n-th client made talks to instance n mod count.
struct SpreadPoster
{
    std::vector<bench::SignedPoster> posters;
    mutable std::atomic<size_t> made{0};

    std::pair<const bench::SignedPoster *, std::unique_ptr<httplib::Client>> makeClient() const
    {
        const bench::SignedPoster &poster = posters[made++ % posters.size()];
        return {&poster, poster.makeClient()};
    }
    bool
    operator()(std::pair<const bench::SignedPoster *, std::unique_ptr<httplib::Client>> &client,
               const QByteArray &body) const
    {
        return (*client.first)(client.second, body);
    }
};

// One topology's database and its next unpaid orders.
class Shop
{
public:
    explicit Shop(const Dsn &dsn)
        : m_dsn(dsn)
    {
        {
            db::Connection admin(dsn.withDatabase({}), QStringLiteral("bench-database"));
            db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + kDatabase);
        }
        test::prepareCallbackDatabase(dsn.withDatabase(kDatabase), QStringLiteral("current"), 0);
        m_connection = std::make_unique<db::Connection>(dsn.withDatabase(kDatabase),
                                                        QStringLiteral("bench-shop"));
        // On a Galera node, the count of a run waits for what the other nodes committed.
        if (db::isClusterNode(m_connection->database()))
            db::execDirect(m_connection->database(),
                           QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
    }

    // Sends `requests` callbacks for new orders through the endpoints on `dsns` (one
    // payops-callbackd each) and checks that each was processed.
    bench::RunResult run(const std::vector<Dsn> &dsns, int requests)
    {
        // The orders first: the instances' start gives the other nodes of a cluster the
        // time to apply them.
        test::addPendingOrders(m_connection->database(), requests, m_nextOrder);
        std::vector<std::unique_ptr<test::CallbackdProcess>> instances;
        SpreadPoster poster;
        for (const Dsn &dsn : dsns) {
            instances.push_back(std::make_unique<test::CallbackdProcess>(
                dsn.withDatabase(kDatabase), QStringLiteral("safe"), QString(),
                QStringList{QStringLiteral("--max-connections-per-ip"), QStringLiteral("0"),
                            QStringLiteral("--log-level"), QStringLiteral("error")}));
            poster.posters.push_back({instances.back()->port(), test::testSecret()});
        }
        std::vector<QByteArray> bodies;
        for (int i = 0; i < requests; ++i)
            bodies.push_back(test::callbackBody("S-" + QByteArray::number(m_nextOrder + i),
                                                m_nextOrder + i, 9900));
        const bench::RunResult result = bench::drive(kClients, bodies, poster);
        const qint64 processed =
            db::scalar(m_connection->database(),
                       QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE order_id >= ? "
                                      "AND order_id < ? AND status = 'PROCESSED'"),
                       {m_nextOrder, m_nextOrder + requests})
                .toLongLong();
        if (processed != requests)
            qFatal("a run processed %lld of its %d callbacks", static_cast<long long>(processed),
                   requests);
        m_nextOrder += requests;
        return result;
    }

private:
    Dsn m_dsn;
    std::unique_ptr<db::Connection> m_connection;
    qint64 m_nextOrder = 100001;
};

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    setApplicationIdentity();
    setupLogging(QStringLiteral("bench"), 4 /* error */);
    QTextStream out(stdout);
    const int requests = bench::requestsPerRun(kDefaultRequests);
    out << requests << " NORMAL callbacks a run, every one a new pay_no, from " << kClients
        << " clients spread over the instances" << Qt::endl;
    out << "\n| run | callbacks/s | p50 ms | p99 ms | failed |\n|---|---|---|---|---|" << Qt::endl;
    // Each figure is two runs, taken in mirrored order (1, 2, 3, then 3, 2, 1 instances), so that
    // a load that rises or falls on the shared machine weighs on each alike; after a first run
    // that warms the new server up and is not counted.
    std::map<QString, bench::RunResult> runs;
    const auto measure = [&](const QString &name, Shop &shop, const std::vector<Dsn> &dsns) {
        const bench::RunResult run = shop.run(dsns, requests);
        out << run.row(name, 28) << Qt::endl;
        bench::RunResult &both = runs[name];
        both.requests += run.requests;
        both.seconds += run.seconds;
        both.failures += run.failures;
        both.latencies.insert(both.latencies.end(), run.latencies.begin(), run.latencies.end());
    };
    const auto mirrored = [&](Shop &shop,
                              const std::vector<std::pair<QString, std::vector<Dsn>>> &order) {
        shop.run(order.front().second, requests / 4);
        for (const auto &[name, dsns] : order)
            measure(name, shop, dsns);
        for (auto step = order.rbegin(); step != order.rend(); ++step)
            measure(step->first, shop, step->second);
    };

    for (const auto replication : {testkit::ReplicaPair::Replication::Asynchronous,
                                   testkit::ReplicaPair::Replication::SemiSynchronous}) {
        const bool async = replication == testkit::ReplicaPair::Replication::Asynchronous;
        QTemporaryDir directory(QStringLiteral("/tmp/payops-scaleout-XXXXXX"));
        testkit::ReplicaPair pair(directory.path(), replication);
        Shop shop(pair.primaryDsn({}));
        const Dsn primary = pair.primaryDsn({});
        const QString prefix = async ? QStringLiteral("async") : QStringLiteral("semisync");
        std::vector<std::pair<QString, std::vector<Dsn>>> order{
            {prefix + QStringLiteral(", 1 instance"), {primary}}};
        if (async)
            order.push_back({prefix + QStringLiteral(", 2 instances"), {primary, primary}});
        order.push_back({prefix + QStringLiteral(", 3 instances"), {primary, primary, primary}});
        mirrored(shop, order);
    }
    {
        QTemporaryDir directory(QStringLiteral("/tmp/payops-scaleout-XXXXXX"));
        testkit::GaleraCluster cluster(directory.path(), 3);
        Shop shop(cluster.dsn(0, {}));
        mirrored(shop, {{QStringLiteral("galera, 1 instance"), {cluster.dsn(0, {})}},
                        {QStringLiteral("galera, 3 instances"),
                         {cluster.dsn(0, {}), cluster.dsn(1, {}), cluster.dsn(2, {})}}});
    }

    const auto throughput = [&](const char *name) {
        return runs.at(QString::fromLatin1(name)).throughput();
    };
    const auto p99Ms = [&](const char *name) {
        return runs.at(QString::fromLatin1(name)).percentile(0.99) * 1000;
    };
    const double one = throughput("async, 1 instance");
    QStringList summary{QStringLiteral("SUMMARY bench_scaleout")};
    const auto add = [&summary](const QString &key, double value, int decimals) {
        summary << QStringLiteral("%1=%2").arg(key).arg(value, 0, 'f', decimals);
    };
    add(QStringLiteral("primary1_per_s"), one, 0);
    add(QStringLiteral("primary2_ratio"), throughput("async, 2 instances") / one, 2);
    add(QStringLiteral("primary3_ratio"), throughput("async, 3 instances") / one, 2);
    add(QStringLiteral("semisync1_ratio"), throughput("semisync, 1 instance") / one, 2);
    add(QStringLiteral("semisync3_ratio"),
        throughput("semisync, 3 instances") / throughput("async, 3 instances"), 2);
    add(QStringLiteral("galera1_ratio"), throughput("galera, 1 instance") / one, 2);
    add(QStringLiteral("galera3_ratio"), throughput("galera, 3 instances") / one, 2);
    for (const auto &[key, name] : std::initializer_list<std::pair<const char *, const char *>>{
             {"primary1_p99_ms", "async, 1 instance"},
             {"primary3_p99_ms", "async, 3 instances"},
             {"semisync1_p99_ms", "semisync, 1 instance"},
             {"semisync3_p99_ms", "semisync, 3 instances"},
             {"galera3_p99_ms", "galera, 3 instances"}})
        add(QString::fromLatin1(key), p99Ms(name), 1);
    out << '\n' << summary.join(QLatin1Char(' ')) << Qt::endl;
    return 0;
}
