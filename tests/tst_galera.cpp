#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/inspection/posture.h"
#include "testmain.h"
#include "topology.h"

#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace payops;
using namespace std::chrono_literals;

namespace {

// What a storm left, counted by the test's own statements on a node that waited for the
// cluster (wsrep_sync_wait).
struct StormResult
{
    qint64 duplicateCoupons = 0; // (order, template) groups with more than one coupon
    qint64 duplicatePoints = 0;  // orders with more than one points row
    qint64 paidOrders = 0;
    qint64 acceptedTransitions = 0;
    QList<QByteArray> answered2xx; // pay_nos some instance answered 2xx
    qint64 answered2xxUnrecorded = 0;
};

// The incident's delivery on a cluster: every order's success callback sent to all three
// instances at once, ten orders at a time, all orders of one user (so that every payment
// also writes the same points balance row); a delivery answered otherwise than 2xx is sent
// again, as the platform does, up to `retries` times.
StormResult storm(const testkit::GaleraCluster &cluster, const QString &database, int orders,
                  int retries)
{
    {
        db::Connection admin(cluster.dsn(0, {}), QStringLiteral("storm-database"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE %1").arg(database));
    }
    test::prepareCallbackDatabase(cluster.dsn(0, database), QStringLiteral("legacy"), orders);
    // Each instance as an account holding only the endpoint's role, made on node 1 and
    // replicated to the others with the grant tables.
    const Dsn endpoint =
        testkit::roleAccount(cluster.dsn(0, database), QStringLiteral("endpoint_") + database,
                             QStringLiteral("payops_endpoint"));
    {
        db::Connection c(cluster.dsn(0, database), QStringLiteral("storm-user"));
        db::execDirect(c.database(), QStringLiteral("UPDATE orders SET user_id = 1"));
    }
    std::vector<std::unique_ptr<test::CallbackdProcess>> instances;
    for (int node = 0; node < cluster.size(); ++node) {
        // The node first applies the migration and the orders, which its instance checks as it
        // starts: a read with wsrep_sync_wait waits until the node has all the cluster
        // committed before it.
        {
            db::Connection c(cluster.dsn(node, database), QStringLiteral("storm-node"));
            db::execDirect(c.database(), QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
            db::scalar(c.database(), QStringLiteral("SELECT COUNT(*) FROM orders"));
        }
        instances.push_back(std::make_unique<test::CallbackdProcess>(
            testkit::asAccount(cluster.dsn(node, database), endpoint), QStringLiteral("safe"),
            QStringLiteral("node%1").arg(node + 1)));
    }

    StormResult result;
    std::mutex answeredMutex;
    std::atomic<int> next{0};
    std::vector<std::thread> platform;
    for (int worker = 0; worker < 10; ++worker)
        platform.emplace_back([&] {
            for (int o = next++; o < orders; o = next++) {
                const QByteArray payNo = QByteArray("PAY") + QByteArray::number(1001 + o);
                const QByteArray body = test::callbackBody(payNo, 1001 + o, 9900);
                std::vector<std::thread> deliveries;
                for (const auto &instance : instances)
                    deliveries.emplace_back([&, port = instance->port()] {
                        for (int attempt = 0; attempt <= retries; ++attempt) {
                            const int status = test::postCallback(port, body).status;
                            if (status >= 200 && status < 300) {
                                const std::lock_guard lock(answeredMutex);
                                result.answered2xx << payNo;
                                return;
                            }
                            std::this_thread::sleep_for(20ms);
                        }
                    });
                for (auto &delivery : deliveries)
                    delivery.join();
            }
        });
    for (auto &thread : platform)
        thread.join();
    for (auto &instance : instances)
        instance->terminate();

    db::Connection check(cluster.dsn(1, database), QStringLiteral("storm-check"));
    const QSqlDatabase db = check.database();
    db::execDirect(db, QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
    const auto count = [&db](const char *sql) {
        return db::scalar(db, QString::fromLatin1(sql)).toLongLong();
    };
    result.duplicateCoupons =
        count("SELECT COUNT(*) FROM (SELECT 1 FROM user_coupon GROUP BY order_id, "
              "coupon_template_id HAVING COUNT(*) > 1) d");
    result.duplicatePoints = count(
        "SELECT COUNT(*) FROM (SELECT 1 FROM point_log GROUP BY order_id HAVING COUNT(*) > 1) d");
    result.paidOrders = count("SELECT COUNT(*) FROM orders WHERE status = 'PAID'");
    result.acceptedTransitions = count("SELECT COUNT(*) FROM order_state_log WHERE accepted = 1");
    for (const QByteArray &payNo : std::as_const(result.answered2xx))
        if (db::scalar(db,
                       QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ? "
                                      "AND status = 'PROCESSED'"),
                       {payNo})
                .toLongLong() != 1)
            ++result.answered2xxUnrecorded;
    return result;
}

} // namespace

// The safe handler on a three-node Galera cluster, one payops-callbackd per node. GET_LOCK is
// local to a node, so the pay_no lock no longer keeps two deliveries apart: the CAS and the
// callback's unique pay_no, both certified across the cluster, must. And a transaction that a
// conflicting one from another node rolls back must come back whole or not at all.
class TstGalera final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void threeDeliveriesAtOnceAcrossThreeNodesPayOnce()
    {
        QTemporaryDir directory(QStringLiteral("/tmp/payops-galera-XXXXXX"));
        testkit::GaleraCluster cluster(directory.path(), 3);

        // First the defect, with the care for a cluster node turned off: a roll-back whose
        // error reached no statement leaves the statements after it to commit on their own,
        // and side effects are issued twice. It shows in some storms of 300 orders, not in
        // every one (two runs side by side on two cores: the first storm, then the fifth): up
        // to twelve are given, six having once not been enough.
        qputenv("PAYOPS_GALERA_UNGUARDED", "1");
        qint64 duplicates = 0;
        int rounds = 0;
        while (rounds < 12 && duplicates == 0) {
            ++rounds;
            const StormResult unguarded =
                storm(cluster, QStringLiteral("unguarded%1").arg(rounds), 300, 0);
            duplicates = unguarded.duplicateCoupons + unguarded.duplicatePoints;
        }
        qunsetenv("PAYOPS_GALERA_UNGUARDED");
        QVERIFY2(duplicates > 0, "the unguarded handler never paid twice: this test shows nothing");
        qInfo("the unguarded handler paid %lld side effects twice in storm %d", duplicates, rounds);

        // Then as shipped: every order paid once, nothing issued twice, no 2xx unrecorded.
        const int orders = 400;
        const StormResult guarded = storm(cluster, QStringLiteral("guarded"), orders, 10);
        QCOMPARE(guarded.duplicateCoupons, 0);
        QCOMPARE(guarded.duplicatePoints, 0);
        QCOMPARE(guarded.answered2xxUnrecorded, 0);
        QCOMPARE(guarded.paidOrders, orders);
        QCOMPARE(guarded.acceptedTransitions, orders);

        // payops posture says which defences hold differently here.
        db::Connection node(cluster.dsn(2, QStringLiteral("guarded")), QStringLiteral("posture"));
        QHash<QString, QString> evidence;
        for (const Defence &defence : inspectPosture(node.database()))
            evidence.insert(defence.name, defence.evidence);
        QVERIFY2(evidence.value(QStringLiteral("lock_across_commit"))
                     .contains(QStringLiteral("(3 nodes) the lock is local to a node")),
                 qPrintable(evidence.value(QStringLiteral("lock_across_commit"))));
        const QString certified = QStringLiteral("Certified across this Galera cluster's 3 nodes");
        for (const char *present : {"uk_pay_no", "cas_affected_rows"})
            QVERIFY2(evidence.value(QLatin1String(present)).contains(certified), present);
        // At level legacy the coupon key is missing, and holds on no node.
        QVERIFY(!evidence.value(QStringLiteral("uk_order_tpl")).contains(certified));
        QVERIFY(evidence.value(QStringLiteral("record_only_switch"))
                    .contains(QStringLiteral("not certified")));
    }
};

PAYOPS_TEST_MAIN_CORE(TstGalera)
#include "tst_galera.moc"
