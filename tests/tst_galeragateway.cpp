// payops-callbackd in gateway mode on a three-node Galera cluster, one gateway per node, in
// front of one team handler: every pay_no delivered to all three gateways at once. GET_LOCK is
// local to a node, so the pay_no lock no longer makes the later delivery wait for the earlier's
// forward; the handler must still see each pay_no once.

#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbackswitch.h"
#include "platform.h"
#include "testmain.h"
#include "topology.h"

#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>
#include <vector>

using namespace payops;

namespace {

constexpr qint64 kFirstOrder = 1001;
constexpr qint64 kAmountFen = 9900;

struct Storm
{
    int payNos = 0;
    int forwardedTwice = 0; // pay_nos the handler saw more than once
    int neverAnswered2xx = 0;
    int forwardedRows = 0; // rows FORWARDED with their upstream's answer kept
    int recordedRows = 0;  // rows RECORDED under the record-only switch
};

// One gateway per node against `upstream`, each pay_no delivered to all three at the same
// moment, 100 pay_nos a second; the platform retries whatever was not answered 2xx.
// `midStorm`, when given, runs once the storm is under way, with the database's name.
Storm storm(const testkit::GaleraCluster &cluster, const QString &database, int payNos,
            const test::CountingUpstream &upstream,
            const std::function<void(const test::Platform &)> &midStorm = {})
{
    {
        db::Connection admin(cluster.dsn(0, {}), QStringLiteral("gateway-database"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE %1").arg(database));
    }
    test::prepareCallbackDatabase(cluster.dsn(0, database), QStringLiteral("current"), payNos,
                                  kFirstOrder);
    // Each gateway as an account holding only the endpoint's role, made on node 1 and
    // replicated to the others with the grant tables.
    const Dsn endpoint =
        testkit::roleAccount(cluster.dsn(0, database), QStringLiteral("gw_") + database,
                             QStringLiteral("payops_endpoint"));
    std::vector<std::unique_ptr<test::CallbackdProcess>> gateways;
    test::Endpoints endpoints(cluster.size());
    for (int node = 0; node < cluster.size(); ++node) {
        cluster.waitSynced(node);
        gateways.push_back(std::make_unique<test::CallbackdProcess>(
            testkit::asAccount(cluster.dsn(node, database), endpoint), QString(),
            QStringLiteral("gw%1").arg(node + 1),
            QStringList{QStringLiteral("--upstream"), upstream.url()}));
        endpoints.set(node, gateways.back()->port(), gateways.back()->instance());
    }
    QList<test::Delivery> plan;
    for (int i = 0; i < payNos; ++i)
        for (int node = 0; node < cluster.size(); ++node)
            plan.append({kFirstOrder + i, database.toLatin1() + QByteArray::number(i), kAmountFen,
                         node, qint64(i) * 10});
    test::Platform platform(plan, endpoints, test::testSecret());
    platform.start();
    if (midStorm)
        midStorm(platform);
    platform.wait();
    for (auto &gateway : gateways)
        gateway->terminate();

    Storm result;
    result.payNos = payNos;
    const QHash<QByteArray, int> forwards = upstream.countByPayNo();
    for (int i = 0; i < payNos; ++i)
        if (forwards.value(database.toLatin1() + QByteArray::number(i)) > 1)
            ++result.forwardedTwice;
    for (int i = 0; i < plan.size(); ++i) {
        const QList<test::Attempt> &attempts = platform.attempts(i);
        if (attempts.isEmpty() || attempts.constLast().status != 200)
            ++result.neverAnswered2xx;
    }
    db::Connection check(cluster.dsn(1, database), QStringLiteral("gateway-check"));
    db::execDirect(check.database(), QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
    result.forwardedRows =
        db::scalar(check.database(),
                   QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                  "'FORWARDED' AND upstream_status = 200"))
            .toInt();
    result.recordedRows =
        db::scalar(check.database(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE "
                                                    "status = 'RECORDED'"))
            .toInt();
    qInfo("%s: %d pay_nos, %d forwarded more than once, %d deliveries never answered 2xx",
          qPrintable(database), payNos, result.forwardedTwice, result.neverAnswered2xx);
    return result;
}

} // namespace

class TstGaleraGateway final : public QObject
{
    Q_OBJECT

    QTemporaryDir m_directory{QStringLiteral("/tmp/payops-galeragateway-XXXXXX")};
    std::unique_ptr<testkit::GaleraCluster> m_cluster;

private Q_SLOTS:
    void initTestCase()
    {
        m_cluster = std::make_unique<testkit::GaleraCluster>(m_directory.path());
    }
    void cleanupTestCase() { m_cluster.reset(); }

    // Every pay_no delivered at all three nodes' gateways at once: each forward is claimed in a
    // committed write, which certification lets only one node commit; the others answer 503 and
    // the platform sends again. (Before claims a gateway took its node's pay_no lock, local to
    // the node, and the same storm forwarded pay_nos twice; tst_gatewayfaults shows what a claim
    // holds against on any server.)
    void eachPayNoReachesTheHandlerOnce()
    {
        const testkit::GaleraCluster &cluster = *m_cluster;
        const test::CountingUpstream upstream(0, {}, 30);
        const Storm guarded = storm(cluster, QStringLiteral("guarded"), 300, upstream);
        QCOMPARE(guarded.forwardedTwice, 0);
        QCOMPARE(upstream.count(), guarded.payNos);
        QCOMPARE(guarded.neverAnswered2xx, 0);
        QCOMPARE(guarded.forwardedRows, guarded.payNos);
    }

    // The switch flipped to record-only on one node mid-storm, as an operator does when the
    // team's handler pays twice: once every gateway has acknowledged the flip, nothing more
    // reaches the handler (by the machine's one clock), and every delivery is still answered
    // 2xx, forwarded before and recorded after. That the acknowledgement waits for a forward
    // that read NORMAL is shown step by step in tst_galeraswitch, for the safe handler's
    // transactions that a gateway's forwards share.
    void nothingIsForwardedAfterEveryGatewayAcknowledgedTheFlip()
    {
        const test::CountingUpstream upstream(0, {}, 30);
        qint64 acknowledgedMicros = 0;
        const auto flipMidStorm = [&](const test::Platform &platform) {
            while (platform.elapsedMs() < 1000)
                QTest::qWait(10);
            const Dsn operatorAccount =
                testkit::roleAccount(m_cluster->dsn(0, QStringLiteral("flip")),
                                     QStringLiteral("op_flip"), QStringLiteral("payops_operator"));
            db::Connection operatorNode(operatorAccount, QStringLiteral("gateway-flip"));
            const FlipResult flip = flipSwitch(operatorNode.database(), CallbackMode::RecordOnly,
                                               QStringLiteral("the team's handler pays twice"));
            const QList<InstanceAck> acks =
                waitForAcknowledgement(operatorNode.database(), flip.after.version, 30000);
            acknowledgedMicros = nowMicros();
            QCOMPARE(acks.size(), 3);
            for (const InstanceAck &ack : acks)
                QVERIFY2(ack.acknowledged, qPrintable(ack.instance));
        };
        const Storm flipped =
            storm(*m_cluster, QStringLiteral("flip"), 400, upstream, flipMidStorm);
        QVERIFY(acknowledgedMicros > 0);
        int forwardedAfter = 0;
        for (const test::CountingUpstream::Request &request : upstream.received())
            if (request.arrivedMicros > acknowledgedMicros)
                ++forwardedAfter;
        qInfo("forwarded: %d before every gateway acknowledged the flip, %d after; recorded: %d",
              upstream.count() - forwardedAfter, forwardedAfter, flipped.recordedRows);
        QCOMPARE(forwardedAfter, 0);
        QCOMPARE(flipped.forwardedTwice, 0);
        QCOMPARE(flipped.neverAnswered2xx, 0);
        QVERIFY2(flipped.recordedRows > 100, "the flip came after the storm: this shows nothing");
        QCOMPARE(flipped.forwardedRows + flipped.recordedRows, flipped.payNos);
    }
};

PAYOPS_TEST_MAIN_CORE(TstGaleraGateway)
#include "tst_galeragateway.moc"
