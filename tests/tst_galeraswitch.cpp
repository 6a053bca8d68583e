// The endpoint on a three-node Galera cluster beyond paying each order once (tst_galera): the
// record-only switch flipped on one node while all three instances take a storm, then drained
// from two nodes; the fault storm (copies 0-50 ms apart across instances, replays, forged
// callbacks) with one node killed with SIGKILL in the middle and started again; compensation
// from two nodes at once, on payops's own tables and through a mapping on a team's; and audited
// actions at once on three nodes. Every action runs as an account holding only its role.

#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbackswitch.h"
#include "domain/mapping/mappedcompensation.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensation.h"
#include "domain/money/compensationrequest.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "platform.h"
#include "teamshop.h"
#include "testmain.h"
#include "topology.h"

#include <QElapsedTimer>
#include <QFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

using namespace payops;
using namespace std::chrono_literals;

namespace {

constexpr qint64 kFirstOrder = 1001;
constexpr qint64 kAmountFen = 9900;

bool is2xx(int status)
{
    return status >= 200 && status < 300;
}

// The test's own connection to a node, reading only once that node has applied everything
// the cluster committed before each statement.
struct Check
{
    db::Connection connection;
    explicit Check(const Dsn &dsn)
        : connection(dsn, QStringLiteral("galera-check"))
    {
        db::execDirect(db(), QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
    }
    QSqlDatabase db() const { return connection.database(); }
    qint64 count(const QString &sql, const QVariantList &binds = {}) const
    {
        return db::scalar(db(), sql, binds).toLongLong();
    }
};

// A database of `orders` PENDING orders (level legacy: no side-effect keys, so that only the
// handler stands between a storm and a double payout), and the accounts that act on it, each
// holding only its role: made on node 1 once the migration created the roles, and replicated
// to every node with the grant tables.
struct Database
{
    const testkit::GaleraCluster &cluster;
    QString name;
    Dsn endpoint;     // payops-callbackd
    Dsn operatorRole; // flips, drains, compensation

    Database(const testkit::GaleraCluster &cluster, const QString &name, int orders)
        : cluster(cluster)
        , name(name)
    {
        {
            db::Connection admin(cluster.dsn(0, {}), QStringLiteral("galera-database"));
            db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE %1").arg(name));
        }
        test::prepareCallbackDatabase(cluster.dsn(0, name), QStringLiteral("legacy"), orders,
                                      kFirstOrder);
        endpoint = account(QStringLiteral("endpoint"), QStringLiteral("payops_endpoint"));
        operatorRole = account(QStringLiteral("operator"), QStringLiteral("payops_operator"));
    }
    // Another account holding only `role`, USER_<database>.
    Dsn account(const QString &user, const QString &role) const
    {
        return testkit::roleAccount(cluster.dsn(0, name), user + QLatin1Char('_') + name, role);
    }
    // `account` on node `node`, once that node has applied all the cluster committed (the
    // migration, the accounts).
    Dsn on(int node, const Dsn &account) const
    {
        const Dsn root = cluster.dsn(node, name);
        Check(root).count(QStringLiteral("SELECT COUNT(*) FROM callback_switch"));
        return testkit::asAccount(root, account);
    }
};

// One safe instance per node, each as the database's endpoint account.
struct Instances
{
    Database database;
    std::vector<std::unique_ptr<test::CallbackdProcess>> processes;
    test::Endpoints endpoints{3};

    Instances(const testkit::GaleraCluster &cluster, const QString &name, int orders)
        : database(cluster, name, orders)
    {
        for (int node = 0; node < cluster.size(); ++node) {
            processes.push_back(std::make_unique<test::CallbackdProcess>(
                database.on(node, database.endpoint), QStringLiteral("safe"),
                QStringLiteral("node%1").arg(node + 1)));
            endpoints.set(node, processes.back()->port(), processes.back()->instance());
        }
    }
};

// Pay_nos that some instance answered 2xx and that pay_callback_log does not hold.
qint64 answered2xxNotRecorded(const Check &check, const test::Platform &platform)
{
    QSet<QByteArray> answered;
    for (int i = 0; i < platform.deliveries().size(); ++i)
        for (const test::Attempt &attempt : platform.attempts(i))
            if (is2xx(attempt.status) && !platform.deliveries()[i].forged)
                answered.insert(platform.deliveries()[i].payNo);
    qint64 missing = 0;
    for (const QByteArray &payNo : std::as_const(answered))
        if (check.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                        {payNo}) != 1)
            ++missing;
    return missing;
}

// Deliveries that never got a 2xx although the platform retried them (forged ones excluded).
qint64 neverAnswered2xx(const test::Platform &platform)
{
    qint64 count = 0;
    for (int i = 0; i < platform.deliveries().size(); ++i) {
        const QList<test::Attempt> &attempts = platform.attempts(i);
        if (!platform.deliveries()[i].forged &&
            (attempts.isEmpty() || !is2xx(attempts.constLast().status)))
            ++count;
    }
    return count;
}

// What each node is doing, for a stall's warning or a failure's message: the transactions open
// for more than five seconds and what their threads wait on, the node's replication state, and
// each instance's acknowledged version and heartbeat.
QString clusterEvidence(const testkit::GaleraCluster &cluster, const QString &name)
{
    QStringList lines;
    for (int node = 0; node < cluster.size(); ++node) {
        try {
            db::Connection root(cluster.dsn(node, name), QStringLiteral("galera-evidence"));
            QSqlQuery state = db::exec(
                root.database(),
                QStringLiteral("SHOW STATUS WHERE Variable_name IN ('wsrep_local_state_comment', "
                               "'wsrep_local_recv_queue', 'wsrep_flow_control_paused', "
                               "'wsrep_local_bf_aborts', 'wsrep_local_cert_failures')"));
            QStringList status;
            while (state.next())
                status << state.value(0).toString() + QLatin1Char('=') + state.value(1).toString();
            lines << QStringLiteral("node%1: %2").arg(node + 1).arg(status.join(QLatin1Char(' ')));
            QSqlQuery open = db::exec(
                root.database(),
                QStringLiteral("SELECT trx_mysql_thread_id, trx_state, "
                               "TIMESTAMPDIFF(SECOND, trx_started, NOW()), "
                               "COALESCE(trx_query, ''), COALESCE(p.COMMAND, ''), "
                               "COALESCE(p.STATE, ''), COALESCE(p.USER, '') "
                               "FROM information_schema.INNODB_TRX t LEFT JOIN "
                               "information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
                               "WHERE trx_started < NOW() - INTERVAL 5 SECOND"));
            while (open.next()) {
                QStringList fields;
                for (int i = 0; i < 7; ++i)
                    fields << open.value(i).toString().left(200);
                lines << QStringLiteral("  open: ") + fields.join(QStringLiteral(" | "));
            }
            QSqlQuery instances =
                db::exec(root.database(),
                         QStringLiteral("SELECT id, switch_version_applied, mode_applied, "
                                        "TIMESTAMPDIFF(MICROSECOND, last_seen_at, NOW(3)) DIV 1000 "
                                        "FROM callback_instance ORDER BY id"));
            while (instances.next())
                lines << QStringLiteral("  instance %1: version %2 %3, seen %4 ms ago")
                             .arg(instances.value(0).toString(), instances.value(1).toString(),
                                  instances.value(2).toString(), instances.value(3).toString());
        } catch (const db::Error &error) {
            lines
                << QStringLiteral("node%1: %2").arg(node + 1).arg(QString::fromUtf8(error.what()));
        }
    }
    return lines.join(QLatin1Char('\n'));
}

// Takes clusterEvidence once, while a stall lasts, if finish() has not been called within
// `afterMs`: by the time a wait has failed, what held it up may have let go.
class StallWatch
{
public:
    StallWatch(const testkit::GaleraCluster &cluster, const QString &name, int afterMs)
        : m_thread([this, &cluster, name, afterMs] {
            std::unique_lock lock(m_mutex);
            if (m_wake.wait_for(lock, std::chrono::milliseconds(afterMs),
                                [this] { return m_finished; }))
                return;
            lock.unlock();
            const QString evidence = clusterEvidence(cluster, name);
            lock.lock();
            m_evidence = QStringLiteral("still waiting after %1 ms:\n").arg(afterMs) + evidence;
        })
    {
    }
    ~StallWatch() { finish(); }
    // What it saw, or nothing when the wait ended in time.
    QString finish()
    {
        {
            const std::lock_guard lock(m_mutex);
            m_finished = true;
        }
        m_wake.notify_all();
        if (m_thread.joinable())
            m_thread.join();
        return m_evidence;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_finished = false;
    QString m_evidence;
    std::thread m_thread;
};

// The warnings and errors of an endpoint's log, the last `chars` characters of them.
QString logTroubles(const QString &log, int chars)
{
    QStringList troubles;
    for (const QString &line : log.split(QLatin1Char('\n')))
        if (line.contains(QLatin1String("warn"), Qt::CaseInsensitive) ||
            line.contains(QLatin1String("error"), Qt::CaseInsensitive))
            troubles << line;
    return troubles.join(QLatin1Char('\n')).right(chars);
}

void waitUntil(const test::Platform &platform, qint64 ms)
{
    while (platform.elapsedMs() < ms)
        std::this_thread::sleep_for(10ms);
}

// What a compensator's run did: copies done, skipped as done by the other, not kept.
struct CompensationRun
{
    qint64 done = 0;
    qint64 skipped = 0;
    qint64 notKept = 0;
};

// What the two compensators of compensateFromTwoNodes() did together.
struct CompensatorCounts
{
    int runs = 0;
    CompensationRun copies;
    QStringList errors;
};

// Compensation from node 1 and node 3 at once, as one operator account from two consoles: each
// runs `compensate` (a plan and its run, nothing once there is nothing left to plan) up to five
// times, so that copies a commit did not keep are taken by a run again. Says what they did.
CompensatorCounts compensateFromTwoNodes(
    const Database &database,
    const std::function<std::optional<CompensationRun>(const QSqlDatabase &)> &compensate)
{
    CompensatorCounts counts;
    std::mutex countsMutex;
    std::vector<std::thread> compensators;
    for (int node : {0, 2}) {
        const Dsn dsn = database.on(node, database.operatorRole);
        compensators.emplace_back([&, dsn] {
            try {
                db::Connection connection(dsn, QStringLiteral("galera-compensator"));
                for (int run = 1; run <= 5; ++run) {
                    const std::optional<CompensationRun> ran = compensate(connection.database());
                    if (!ran)
                        return;
                    const std::lock_guard lock(countsMutex);
                    ++counts.runs;
                    counts.copies.done += ran->done;
                    counts.copies.skipped += ran->skipped;
                    counts.copies.notKept += ran->notKept;
                }
            } catch (const db::Error &error) {
                const std::lock_guard lock(countsMutex);
                counts.errors << QStringLiteral("%1 (error %2)")
                                     .arg(QString::fromUtf8(error.what()))
                                     .arg(error.serverCode());
            }
        });
    }
    for (auto &compensator : compensators)
        compensator.join();
    qInfo("compensation runs: %d; copies skipped as the other node's: %lld; copies a commit did "
          "not keep, run again: %lld",
          counts.runs, counts.copies.skipped, counts.copies.notKept);
    return counts;
}

} // namespace

class TstGaleraSwitch final : public QObject
{
    Q_OBJECT

    QTemporaryDir m_directory{QStringLiteral("/tmp/payops-galeraswitch-XXXXXX")};
    std::unique_ptr<testkit::GaleraCluster> m_cluster;

private Q_SLOTS:
    void initTestCase()
    {
        m_cluster = std::make_unique<testkit::GaleraCluster>(m_directory.path());
    }
    void cleanupTestCase() { m_cluster.reset(); }

    // What the storm below relies on, step by step. A transaction on node 2 reads NORMAL under
    // the barrier's shared lock; the flip on node 1 does not wait for it. The instance on node 2
    // sees the flip (as its heartbeat does) but acknowledges it only once that transaction ended.
    void aFlipIsAcknowledgedOnlyAfterAnotherNodesTransactionEnded()
    {
        const Database database(*m_cluster, QStringLiteral("hold"), 0);
        const Check node2(m_cluster->dsn(1, database.name));
        QCOMPARE(node2.count(QStringLiteral("SELECT COUNT(*) FROM callback_switch")), 1);

        db::Connection handler(database.on(1, database.endpoint), QStringLiteral("galera-handler"));
        SwitchObserver observer;
        std::optional<SwitchReading> reading(std::in_place, observer, handler.database());
        std::optional<db::Transaction> transaction(std::in_place, handler.database());
        const SwitchState before = reading->read();
        QCOMPARE(before.mode, CallbackMode::Normal);

        db::Connection operatorNode(database.on(0, database.operatorRole),
                                    QStringLiteral("galera-flip"));
        QElapsedTimer flipping;
        flipping.start();
        const FlipResult flip = flipSwitch(operatorNode.database(), CallbackMode::RecordOnly,
                                           QStringLiteral("duplicate payouts on the cluster"));
        QVERIFY2(flipping.elapsed() < 10000, "the flip waited for the other node's reader");
        const SwitchState seen = readSwitch(node2.db());
        QCOMPARE(seen.version, flip.after.version);
        observer.observe(true, seen.version);
        QCOMPARE(observer.versionAcknowledged(), before.version);

        transaction.reset();
        reading.reset();
        QCOMPARE(observer.versionAcknowledged(), flip.after.version);
    }

    // The switch across nodes. A flip on node 1 takes the row lock there only: a handler on
    // node 2 that read NORMAL before the flip reached it goes on with its coupons and points.
    // Once every instance has acknowledged the flip, none may be issued any more
    // (docs/decisions/0067-switch-acknowledged-across-nodes.md). The times compared are the
    // servers' own (one machine, one clock), as bench/bleeding compares them.
    void noSideEffectAfterEveryNodeAcknowledgedTheFlip()
    {
        const int orders = 600;
        Instances instances(*m_cluster, QStringLiteral("switch"), orders);
        // Every order's callback to all three instances at once, 150 orders a second.
        QList<test::Delivery> plan;
        for (int i = 0; i < orders; ++i)
            for (int target = 0; target < 3; ++target)
                plan.append({kFirstOrder + i, "PAY" + QByteArray::number(kFirstOrder + i),
                             kAmountFen, target, qint64(i) * 1000 / 150});
        test::Platform platform(plan, instances.endpoints, test::testSecret());
        platform.start();

        waitUntil(platform, 1500);
        const Database &database = instances.database;
        db::Connection operatorNode(database.on(0, database.operatorRole),
                                    QStringLiteral("galera-flip"));
        // A stall is looked at while it lasts: the flip normally takes a fraction of a second,
        // every acknowledgement well under one.
        StallWatch flipWatch(*m_cluster, QStringLiteral("switch"), 10000);
        const FlipResult flip = flipSwitch(operatorNode.database(), CallbackMode::RecordOnly,
                                           QStringLiteral("duplicate payouts on the cluster"));
        const QString flipStall = flipWatch.finish();
        if (!flipStall.isEmpty())
            qWarning("the flip stalled: %s", qPrintable(flipStall));
        QVERIFY(flip.changed);
        QElapsedTimer acknowledging;
        acknowledging.start();
        StallWatch ackWatch(*m_cluster, QStringLiteral("switch"), 10000);
        const QList<InstanceAck> acks =
            waitForAcknowledgement(operatorNode.database(), flip.after.version, 30000);
        const QString ackStall = ackWatch.finish();
        if (!ackStall.isEmpty())
            qWarning("the acknowledgement stalled: %s", qPrintable(ackStall));
        qInfo("every instance acknowledged the flip %lld ms after it, %lld ms into the storm",
              acknowledging.elapsed(), platform.elapsedMs());
        const QString acknowledgedAt =
            db::scalar(operatorNode.database(),
                       QStringLiteral("SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')"))
                .toString();
        QStringList unacknowledged;
        for (const InstanceAck &ack : acks)
            if (!ack.acknowledged)
                unacknowledged << ack.instance;
        if (acks.size() != 3 || !unacknowledged.isEmpty()) {
            platform.wait();
            QStringList logs;
            for (auto &process : instances.processes) {
                process->terminate();
                logs << process->instance() + QStringLiteral(":\n") +
                            logTroubles(process->output(), 3000);
            }
            QFAIL(qPrintable(
                QStringLiteral("%1 instances live, not acknowledged by: %2\nthe flip: %3\nthe "
                               "acknowledgement: %4\n%5")
                    .arg(acks.size())
                    .arg(unacknowledged.join(QStringLiteral(", ")), flipStall, ackStall,
                         logs.join(QLatin1Char('\n')))));
        }
        platform.wait();
        for (auto &process : instances.processes)
            QCOMPARE(process->terminate(), 0);

        const Check check(m_cluster->dsn(1, QStringLiteral("switch")));
        const qint64 flippedToAcknowledged = check.count(QStringLiteral(
            "SELECT (SELECT COUNT(*) FROM user_coupon WHERE created_at > "
            "(SELECT changed_at FROM callback_switch)) + (SELECT COUNT(*) FROM "
            "point_log WHERE created_at > (SELECT changed_at FROM callback_switch))"));
        qInfo("side effects issued between the flip and its acknowledgement by every instance: "
              "%lld",
              flippedToAcknowledged);
        QCOMPARE(check.count(QStringLiteral("SELECT (SELECT COUNT(*) FROM user_coupon WHERE "
                                            "created_at > ?) + (SELECT COUNT(*) FROM point_log "
                                            "WHERE created_at > ?)"),
                             {acknowledgedAt, acknowledgedAt}),
                 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE "
                                            "created_at > ? AND status <> 'RECORDED'"),
                             {acknowledgedAt}),
                 0);
        // Else the flip came after the storm and this test showed nothing.
        const qint64 recordedSince =
            check.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE created_at > "
                                       "? AND status = 'RECORDED'"),
                        {acknowledgedAt});
        qInfo("callbacks recorded since: %lld", recordedSince);
        QVERIFY(recordedSince > 100);
        QVERIFY(countLiveDuplicates(check.db()).isEmpty());
        QCOMPARE(neverAnswered2xx(platform), 0);
        QCOMPARE(answered2xxNotRecorded(check, platform), 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")),
                 qint64(orders));

        // Then the switch back, and two drains at once on two nodes: FOR UPDATE SKIP LOCKED is
        // local to a node, so both claim the same callbacks; certification and the drain's
        // written claim must leave each order paid once.
        flipSwitch(operatorNode.database(), CallbackMode::Normal, QStringLiteral("fixed"));
        std::vector<std::thread> drains;
        QStringList errors;
        std::mutex errorsMutex;
        for (int node : {0, 2}) {
            const Dsn dsn = database.on(node, database.operatorRole); // flipped back there
            drains.emplace_back([dsn, node, &errors, &errorsMutex] {
                DrainOptions options;
                options.worker = QStringLiteral("drain-node%1").arg(node + 1);
                options.connections = 2;
                options.batch = 20;
                try {
                    drainBacklog(dsn, options);
                } catch (const db::Error &error) {
                    const std::lock_guard lock(errorsMutex);
                    errors << QStringLiteral("%1 (error %2)")
                                  .arg(QString::fromUtf8(error.what()))
                                  .arg(error.serverCode());
                }
            });
        }
        for (auto &drain : drains)
            drain.join();
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        QCOMPARE(check.count(QStringLiteral(
                     "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")),
                 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(orders));
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE accepted "
                                            "= 1")),
                 qint64(orders));
        QVERIFY(countLiveDuplicates(check.db()).isEmpty());
    }

    // The fault storm of tests/faults on the cluster: copies of each order 0-50 ms apart on two
    // instances, a replay of it seconds later on the third, forged callbacks for orders nobody
    // paid; node 3 killed with SIGKILL a second in and started again while the storm goes on.
    void faultStormWithANodeKilledPaysEachOrderOnce()
    {
        const int orders = 300;
        const int forgedOrders = 30;
        const qint64 firstForged = 9001;
        Instances instances(*m_cluster, QStringLiteral("faults"), orders);
        {
            db::Connection c(m_cluster->dsn(0, QStringLiteral("faults")),
                             QStringLiteral("galera-forged-orders"));
            test::addPendingOrders(c.database(), forgedOrders, firstForged);
        }
        QList<test::Delivery> plan;
        for (int i = 0; i < orders; ++i) {
            const qint64 order = kFirstOrder + i;
            const QByteArray payNo = "FAULT-" + QByteArray::number(order);
            const qint64 t0 = qint64(i) * 10; // 100 orders a second
            plan.append({order, payNo, kAmountFen, i % 3, t0});
            plan.append({order, payNo, kAmountFen, (i + 1) % 3, t0 + i % 51});
            plan.append({order, payNo, kAmountFen, (i + 2) % 3, t0 + 2500});
        }
        for (int i = 0; i < forgedOrders; ++i)
            plan.append({firstForged + i, "FORGED-" + QByteArray::number(firstForged + i),
                         kAmountFen, i % 3, qint64(i) * 100, true});
        test::Platform platform(plan, instances.endpoints, test::testSecret());
        platform.start();

        waitUntil(platform, 1000);
        m_cluster->kill(2);
        std::this_thread::sleep_for(500ms);
        m_cluster->restart(2);
        qInfo("node 3 back and synced %lld ms into the storm", platform.elapsedMs());
        platform.wait();

        // The instance on the restarted node reconnects by itself: a new order's callback,
        // sent to it alone, is paid.
        const qint64 lateOrder = kFirstOrder + orders;
        {
            db::Connection c(m_cluster->dsn(0, QStringLiteral("faults")),
                             QStringLiteral("galera-late-order"));
            test::addPendingOrders(c.database(), 1, lateOrder);
        }
        const QByteArray lateBody = test::callbackBody("LATE-1", lateOrder, kAmountFen);
        QCOMPARE(test::postCallback(instances.processes[2]->port(), lateBody).status, 200);
        for (auto &process : instances.processes)
            QCOMPARE(process->terminate(), 0);

        const Check check(m_cluster->dsn(0, QStringLiteral("faults")));
        QVERIFY(countLiveDuplicates(check.db()).isEmpty());
        QCOMPARE(neverAnswered2xx(platform), 0);
        QCOMPARE(answered2xxNotRecorded(check, platform), 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID' "
                                            "AND id < ?"),
                             {firstForged}),
                 qint64(orders + 1));
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE accepted "
                                            "= 1")),
                 qint64(orders + 1));
        // Forged callbacks: refused, never recorded, nothing paid.
        for (int i = 0; i < platform.deliveries().size(); ++i)
            if (platform.deliveries()[i].forged)
                for (const test::Attempt &attempt : platform.attempts(i))
                    QCOMPARE(attempt.status, 401);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM orders WHERE id >= ? AND "
                                            "status <> 'PENDING'"),
                             {firstForged}),
                 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                            "LIKE 'FORGED-%'")),
                 0);
        // Each order's replay, seconds after it was paid, got the replay answer (from another
        // instance when node 3 was down).
        QCOMPARE(check.count(QStringLiteral(
                     "SELECT COUNT(DISTINCT pay_no) FROM callback_trace WHERE outcome = "
                     "'replayed' AND http_status = 200 AND pay_no LIKE 'FAULT-%'")),
                 qint64(orders));
    }

    // Compensation from two nodes at once, as one operator account from two consoles. Each
    // compensator's row locks are local to its node, so both take the same copies; the
    // compensation rows' key, certified, lets one of two such batches commit and aborts the
    // other with the deadlock, and that batch runs again (runAudited), finds its copies
    // compensated and skips them: both runs succeed. A batch whose commit kept nothing (rolled
    // back by the other node with no error) is reported, not counted, and a run again takes it.
    void twoCompensatorsOnTwoNodesCompensateEachCopyOnce()
    {
        const int orders = 40; // each with both coupons and its points twice
        const Database database(*m_cluster, QStringLiteral("compensation"), 0);
        CompensationSettings settings;
        settings.batchSize = 7;
        qint64 planned = 0;
        qint64 entriesBefore = 0;
        {
            db::Connection c(m_cluster->dsn(0, database.name), QStringLiteral("galera-incident"));
            test::insertDuplicateIncident(c.database(), orders);
            planned =
                planCompensation(c.database(), CompensationScope::all(), settings).actions.size();
            entriesBefore =
                db::scalar(c.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"))
                    .toLongLong();
        }
        const CompensatorCounts counts =
            compensateFromTwoNodes(database, [&](const QSqlDatabase &db) {
                std::optional<CompensationRun> ran;
                const CompensationPlan plan =
                    planCompensation(db, CompensationScope::all(), settings);
                if (plan.actions.isEmpty())
                    return ran;
                const CompensationOutcome outcome = executeCompensation(
                    db, plan, QStringLiteral("duplicate payouts on the cluster"),
                    QStringLiteral("INC-7"), settings);
                ran = CompensationRun{outcome.done, outcome.skipped, outcome.notKept.size()};
                return ran;
            });
        QVERIFY2(counts.errors.isEmpty(), qPrintable(counts.errors.join(u'\n')));
        QCOMPARE(counts.copies.done, planned);

        const Check check(m_cluster->dsn(1, database.name));
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM compensation")), planned);
        QCOMPARE(check.count(QStringLiteral(
                     "SELECT COUNT(*) FROM point_log WHERE reverses_id IS NOT NULL")),
                 qint64(orders));
        QVERIFY(countLiveDuplicates(check.db()).isEmpty());
        QCOMPARE(check.count(QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(orders * 100));
        // One entry per copy compensated, whichever node wrote it, and the chain intact.
        const AuditVerification chain = verifyAuditChain(check.db());
        QVERIFY2(chain.intact, qPrintable(chain.problem));
        QCOMPARE(chain.rows, entriesBefore + planned);
    }

    // Compensation through a mapping on a team's own tables, from two nodes at once, as one
    // operator account from two consoles: as on payops's own tables, certification lets one of
    // two batches on the same copies commit (the record rows' key) and the other runs again and
    // skips them, and a batch whose commit kept nothing is reported and taken by a run again.
    // Each extra copy is frozen or reversed once, and the chain holds one entry for each.
    void twoMappedCompensatorsOnTwoNodesTakeEachCopyBackOnce()
    {
        const Database database(*m_cluster, QStringLiteral("mapped"), 0);
        const QString business = database.name + QStringLiteral("_shop");
        test::createTeamShop(m_cluster->dsn(0, {}), business);
        QTemporaryDir files;
        QVERIFY(files.isValid());
        const QString mappingPath = files.filePath(QStringLiteral("teamshop.toml"));
        {
            QFile file(mappingPath);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(test::teamShopMapping(business));
        }
        const mapping::Mapping mapping = mapping::loadMapping(mappingPath);
        // Copies to freeze or reverse; the used ones are left to finance.
        const auto takenBack = [](const mapping::MappedCompensationPlan &plan) {
            return plan.count(mapping::MappedAction::Freeze) +
                   plan.count(mapping::MappedAction::Reverse);
        };
        qint64 planned = 0;
        qint64 entriesBefore = 0;
        {
            db::Connection root(m_cluster->dsn(0, database.name), QStringLiteral("galera-team"));
            for (const QString &grant :
                 test::teamShopCompensationGrants(business, database.operatorRole.user))
                db::execDirect(root.database(), grant);
            // More of the incident's second copies than the seed plants: every coupon and
            // points row of the orders from 100101 on, once more (the handler's second run).
            const QString shop = db::quoteIdentifier(business);
            db::execDirect(root.database(),
                           QStringLiteral("INSERT INTO %1.t_coupon_grant (order_no, uid, "
                                          "tpl_code, face, status, gmt_create) SELECT order_no, "
                                          "uid, tpl_code, face, status, gmt_create FROM "
                                          "%1.t_coupon_grant WHERE order_no > 100100")
                               .arg(shop));
            db::execDirect(root.database(),
                           QStringLiteral("INSERT INTO %1.t_point_flow (biz_no, uid, biz_type, "
                                          "delta, remark, gmt_create) SELECT biz_no, uid, "
                                          "biz_type, delta, remark, gmt_create FROM "
                                          "%1.t_point_flow WHERE biz_no > 100100")
                               .arg(shop));
            // Above four eyes' threshold by far: this test is about two nodes, not two people.
            db::execDirect(root.database(),
                           QStringLiteral("UPDATE payops_meta SET value = '100000000' WHERE name "
                                          "= 'four_eyes_threshold_fen'"));
            const mapping::MappedCompensationPlan plan = mapping::planMappedCompensation(
                root.database(), mapping, mapping::MappedScope::all());
            planned = takenBack(plan);
            entriesBefore =
                db::scalar(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"))
                    .toLongLong();
        }
        QVERIFY2(planned > 200, qPrintable(QString::number(planned)));
        const CompensatorCounts counts =
            compensateFromTwoNodes(database, [&](const QSqlDatabase &db) {
                std::optional<CompensationRun> ran;
                const mapping::MappedCompensationPlan plan =
                    mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all());
                if (takenBack(plan) == 0)
                    return ran;
                const mapping::MappedCompensationOutcome outcome =
                    mapping::executeMappedCompensation(
                        db, mapping, plan, QStringLiteral("duplicate payouts on the cluster"),
                        QStringLiteral("INC-9"), 7);
                ran = CompensationRun{outcome.done.size(), outcome.skipped, outcome.notKept.size()};
                return ran;
            });
        QVERIFY2(counts.errors.isEmpty(), qPrintable(counts.errors.join(u'\n')));
        QCOMPARE(counts.copies.done, planned);

        const Check check(m_cluster->dsn(1, database.name));
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM mapped_compensation")), planned);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(DISTINCT business_table, target_id) "
                                            "FROM mapped_compensation")),
                 planned);
        // Nothing left to take back, read on node 2, and one reversal row per points copy
        // reversed.
        const mapping::MappedCompensationPlan after =
            mapping::planMappedCompensation(check.db(), mapping, mapping::MappedScope::all());
        QCOMPARE(takenBack(after), 0);
        QCOMPARE(check.count(QStringLiteral("SELECT COUNT(*) FROM %1.t_point_flow WHERE delta < 0")
                                 .arg(db::quoteIdentifier(business))),
                 check.count(QStringLiteral(
                     "SELECT COUNT(*) FROM mapped_compensation WHERE action = 'REVERSE'")));
        const AuditVerification chain = verifyAuditChain(check.db());
        QVERIFY2(chain.intact, qPrintable(chain.problem));
        QCOMPARE(chain.rows, entriesBefore + planned);
    }

    // Audited actions at the same moment on three nodes: the switch flipped back and forth on
    // node 1, compensation requests filed on node 3, and each rejected on node 2 by another
    // operator as it arrives. Any two of them at once write the audit chain's head, and
    // certification aborts one with the deadlock (1213); it runs again (runAudited), so every
    // action succeeds, and the chain holds exactly their entries.
    void auditedActionsAtOnceOnThreeNodesAllSucceed()
    {
        const int actions = 40;
        const Database database(*m_cluster, QStringLiteral("audited"), 0);
        const Dsn requester =
            database.account(QStringLiteral("requester"), QStringLiteral("payops_operator"));
        qint64 entriesBefore = 0;
        {
            const Check node1(m_cluster->dsn(0, database.name));
            entriesBefore = node1.count(QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"));
        }
        QStringList errors;
        std::mutex errorsMutex;
        const auto failed = [&](const QString &who, const db::Error &error) {
            const std::lock_guard lock(errorsMutex);
            errors << who + QStringLiteral(": ") + QString::fromUtf8(error.what());
        };
        int unchangedFlips = 0;
        int rejected = 0;
        std::vector<std::thread> operators;
        operators.emplace_back([&, dsn = database.on(0, database.operatorRole)] {
            try {
                db::Connection connection(dsn, QStringLiteral("galera-flipper"));
                for (int i = 0; i < actions; ++i)
                    if (!flipSwitch(connection.database(),
                                    i % 2 == 0 ? CallbackMode::RecordOnly : CallbackMode::Normal,
                                    QStringLiteral("flip %1").arg(i))
                             .changed)
                        ++unchangedFlips;
            } catch (const db::Error &error) {
                failed(QStringLiteral("flips"), error);
            }
        });
        operators.emplace_back([&, dsn = database.on(2, requester)] {
            try {
                db::Connection connection(dsn, QStringLiteral("galera-requester"));
                for (int i = 0; i < actions; ++i)
                    requestCompensation(
                        connection.database(), CompensationPlan(), CompensationScope::all(),
                        QStringLiteral("request %1").arg(i), QStringLiteral("INC-8"));
            } catch (const db::Error &error) {
                failed(QStringLiteral("requests"), error);
            }
        });
        operators.emplace_back([&, dsn = database.on(1, database.operatorRole)] {
            try {
                db::Connection connection(dsn, QStringLiteral("galera-rejecter"));
                QElapsedTimer waiting;
                waiting.start();
                while (rejected < actions && waiting.elapsed() < 60000) {
                    QSqlQuery pending = db::exec(
                        connection.database(),
                        QStringLiteral("SELECT id FROM compensation_request WHERE status = "
                                       "'PENDING' ORDER BY id"));
                    QList<qint64> ids;
                    while (pending.next())
                        ids << pending.value(0).toLongLong();
                    for (qint64 id : std::as_const(ids))
                        rejected += rejectCompensationRequest(connection.database(), id);
                    if (ids.isEmpty())
                        std::this_thread::sleep_for(5ms);
                }
            } catch (const db::Error &error) {
                failed(QStringLiteral("rejections"), error);
            }
        });
        for (auto &thread : operators)
            thread.join();
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        QCOMPARE(unchangedFlips, 0);
        QCOMPARE(rejected, actions);

        const Check check(m_cluster->dsn(1, database.name));
        const AuditVerification chain = verifyAuditChain(check.db());
        QVERIFY2(chain.intact, qPrintable(chain.problem));
        QCOMPARE(chain.rows, entriesBefore + 3 * actions);
        for (const char *action : {"switch.flip", "compensation.request", "compensation.reject"})
            QCOMPARE(
                check.count(QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = ?"),
                            {QLatin1String(action)}),
                qint64(actions));
        QCOMPARE(check.count(QStringLiteral(
                     "SELECT COUNT(*) FROM compensation_request WHERE status = 'REJECTED'")),
                 qint64(actions));
    }
};

PAYOPS_TEST_MAIN_CORE(TstGaleraSwitch)
#include "tst_galeraswitch.moc"
