// The console's simulation core: local payops-callbackd children, the storm on its thread,
// and the live chart's reads, against the test run's MariaDB and real callbackd processes.
#include "bulkdata.h"
#include "callbackfixture.h"
#include "console/livetraffic.h"
#include "console/localinstances.h"
#include "console/stormrunner.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QUrl>

#include <map>

using namespace payops;
using Instance = console::LocalInstances::Instance;

namespace {

constexpr int kStartTimeoutMs = 30000;

std::unique_ptr<test::ScratchDatabase> sandboxDatabase(int pendingOrders)
{
    auto scratch = std::make_unique<test::ScratchDatabase>(QStringLiteral("sim"));
    test::prepareCallbackDatabase(scratch->dsn(), QStringLiteral("legacy"), pendingOrders);
    return scratch;
}

void startInstances(console::LocalInstances &instances, const Dsn &dsn, const QString &handler,
                    int count)
{
    instances.setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
    instances.start(dsn, handler, count);
    QTRY_COMPARE_WITH_TIMEOUT(instances.targets().size(), count, kStartTimeoutMs);
}

std::map<qint64, qint64> asMap(const QList<console::LiveTraffic::Bucket> &buckets)
{
    std::map<qint64, qint64> map;
    for (const auto &bucket : buckets)
        map[bucket.startMs] = bucket.count;
    return map;
}

std::map<qint64, qint64> bySql(const QSqlDatabase &db, const QString &sql, qint64 sinceMs)
{
    QSqlQuery query = db::exec(db, sql,
                               {QDateTime::fromMSecsSinceEpoch(sinceMs, Qt::UTC)
                                    .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"))});
    std::map<qint64, qint64> map;
    while (query.next())
        map[query.value(0).toLongLong() * 1000] = query.value(1).toLongLong();
    return map;
}

// The chart's figures by plain SQL, each row judged on its own: callbacks per second, and
// side-effect rows with an earlier row in their (order, key) group, per 10 s.
std::map<qint64, qint64> expectedPerSecond(const QSqlDatabase &db, qint64 sinceMs)
{
    return bySql(
        db,
        QStringLiteral("SELECT FLOOR(UNIX_TIMESTAMP(received_at)), COUNT(*) FROM callback_trace"
                       " WHERE received_at >= ? GROUP BY 1"),
        sinceMs);
}

std::map<qint64, qint64> expectedDuplicates(const QSqlDatabase &db, qint64 sinceMs)
{
    std::map<qint64, qint64> total =
        bySql(db,
              QStringLiteral("SELECT FLOOR(UNIX_TIMESTAMP(c.created_at) / 10) * 10, COUNT(*) FROM "
                             "user_coupon c WHERE c.created_at >= ? AND"
                             " EXISTS (SELECT 1 FROM user_coupon q WHERE q.order_id = c.order_id "
                             "AND q.coupon_template_id = c.coupon_template_id"
                             " AND q.id < c.id) GROUP BY 1"),
              sinceMs);
    for (const auto &[minute, n] :
         bySql(db,
               QStringLiteral("SELECT FLOOR(UNIX_TIMESTAMP(c.created_at) / 10) * 10, COUNT(*) FROM "
                              "point_log c WHERE c.created_at >= ? AND"
                              " c.reverses_id IS NULL AND EXISTS (SELECT 1 FROM point_log q WHERE "
                              "q.order_id = c.order_id AND"
                              " q.point_type = c.point_type AND q.reverses_id IS NULL AND q.id < "
                              "c.id) GROUP BY 1"),
               sinceMs))
        total[minute] += n;
    return total;
}

void insertTraces(const QSqlDatabase &db, int count, const QString &receivedAtSql)
{
    for (int i = 0; i < count; ++i)
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO callback_trace (pay_no, order_id, received_at) VALUES (?, 1, %1)")
                     .arg(receivedAtSql),
                 {QStringLiteral("lt-%1-%2").arg(receivedAtSql.size()).arg(i).toUtf8()});
}

} // namespace

class TestLocalInstances final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startsSafeInstancesThatAnswerAndStops()
    {
        const auto scratch = sandboxDatabase(5);
        console::LocalInstances instances;
        QSignalSpy lines(&instances, &console::LocalInstances::logLine);
        QSignalSpy failures(&instances, &console::LocalInstances::failed);
        startInstances(instances, scratch->dsn(), QStringLiteral("safe"), 2);
        QCOMPARE(failures.count(), 0);
        const QList<Instance> list = instances.instances();
        QCOMPARE(list.size(), 2);
        QCOMPARE(list.at(0).name, QStringLiteral("safe-1"));
        QCOMPARE(list.at(1).name, QStringLiteral("safe-2"));
        QVERIFY(list.at(0).port != list.at(1).port);
        for (const QString &target : instances.targets()) {
            const test::HttpResult health =
                test::get(QUrl(target).port(), QStringLiteral("/healthz"));
            QCOMPARE(health.status, 200);
            QVERIFY2(health.body.contains("safe"), health.body.constData());
        }
        // Each child's "listening on" line reached the log, named by its instance.
        QTRY_VERIFY(std::any_of(lines.begin(), lines.end(), [](const QList<QVariant> &args) {
            return args.at(0).toString() == QLatin1String("safe-2") &&
                   args.at(1).toString().contains(QLatin1String("listening on"));
        }));
        // One secret, readable by the user only, that the instances accept (the storm test signs
        // with it).
        QVERIFY(instances.secret().size() >= 32);
        QCOMPARE(QFile(instances.secretFilePath()).permissions() &
                     (QFileDevice::ReadGroup | QFileDevice::ReadOther),
                 QFileDevice::Permissions());

        const int port = list.at(0).port;
        instances.stopAll();
        const auto allStopped = [&instances] {
            const QList<Instance> now = instances.instances();
            return std::all_of(now.cbegin(), now.cend(), [](const Instance &i) {
                return i.state == Instance::State::Stopped;
            });
        };
        QTRY_VERIFY_WITH_TIMEOUT(allStopped(), kStartTimeoutMs);
        QVERIFY(instances.targets().isEmpty());
        QCOMPARE(test::get(port, QStringLiteral("/healthz")).status, 0);
        QCOMPARE(failures.count(), 0);
    }

    void restartsWithTheSafeHandler()
    {
        const auto scratch = sandboxDatabase(5);
        console::LocalInstances instances;
        startInstances(instances, scratch->dsn(), QStringLiteral("unsafe-demo"), 2);
        QCOMPARE(instances.instances().at(0).handler, QStringLiteral("unsafe-demo"));
        instances.restartAll(QStringLiteral("safe"));
        QTRY_VERIFY_WITH_TIMEOUT(instances.targets().size() == 2 &&
                                     instances.instances().at(0).handler == QLatin1String("safe"),
                                 kStartTimeoutMs);
        QCOMPARE(instances.instances().at(1).name, QStringLiteral("safe-2"));
        // The database sees the safe handlers alive and the unsafe ones stopped.
        db::Connection connection(scratch->dsn(), QStringLiteral("check"));
        QTRY_COMPARE(db::scalar(connection.database(),
                                QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE "
                                               "handler = 'safe' AND stopped_at IS NULL"))
                         .toInt(),
                     2);
    }

    void refusesTheUnsafeHandlerOffTheSandbox()
    {
        const auto scratch = sandboxDatabase(1);
        {
            db::Connection connection(scratch->dsn(), QStringLiteral("unmark"));
            db::execDirect(connection.database(),
                           QStringLiteral("DELETE FROM payops_meta WHERE name = 'sandbox'"));
        }
        console::LocalInstances instances;
        instances.setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
        QSignalSpy failures(&instances, &console::LocalInstances::failed);
        instances.start(scratch->dsn(), QStringLiteral("unsafe-demo"), 2);
        QTRY_COMPARE_WITH_TIMEOUT(failures.count(), 1, 10000);
        const QString message = failures.at(0).at(0).toString();
        QVERIFY2(message.contains(QLatin1String("not marked as a sandbox")) &&
                     message.contains(scratch->name()),
                 qPrintable(message));
        QVERIFY(instances.instances().isEmpty());
        QVERIFY(!instances.isBusy());
    }

    void refusesBadRequests()
    {
        console::LocalInstances instances;
        QSignalSpy failures(&instances, &console::LocalInstances::failed);
        instances.setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
        instances.start(test::serverDsn(), QStringLiteral("fast"), 1);
        instances.start(test::serverDsn(), QStringLiteral("safe"), 0);
        instances.setCallbackdPath(QStringLiteral("/nonexistent/payops-callbackd"));
        instances.start(test::serverDsn(), QStringLiteral("safe"), 1);
        QCOMPARE(failures.count(), 3);
        QVERIFY(failures.at(0).at(0).toString().contains(QLatin1String("'fast'")));
        QVERIFY(failures.at(1).at(0).toString().contains(QLatin1String("not 0")));
        QVERIFY(failures.at(2).at(0).toString().contains(QLatin1String("PAYOPS_CALLBACKD")));
        QVERIFY(instances.instances().isEmpty());
    }

    void surfacesWhyAChildDidNotStart()
    {
        // A database payops never migrated: callbackd itself refuses, and says why.
        test::ScratchDatabase scratch(QStringLiteral("bare"));
        console::LocalInstances instances;
        instances.setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
        QSignalSpy failures(&instances, &console::LocalInstances::failed);
        instances.start(scratch.dsn(), QStringLiteral("safe"), 1);
        QTRY_COMPARE_WITH_TIMEOUT(failures.count(), 1, kStartTimeoutMs);
        const QString message = failures.at(0).at(0).toString();
        QVERIFY2(message.startsWith(QLatin1String("safe-1 did not start: ")) &&
                     message.contains(QLatin1String("payops migrate")),
                 qPrintable(message));
        QCOMPARE(instances.instances().at(0).state, Instance::State::Failed);
    }

    void stormRunsAgainstTheInstancesAndStops()
    {
        const auto scratch = sandboxDatabase(0);
        console::LocalInstances instances;
        startInstances(instances, scratch->dsn(), QStringLiteral("safe"), 2);

        StormPlan plan;
        plan.targets = instances.targets();
        plan.secret = instances.secret();
        plan.orders = 20;
        plan.copies = 2;
        plan.pattern = StormPattern::Concurrent;
        console::StormRunner runner;
        QSignalSpy progress(&runner, &console::StormRunner::progress);
        QSignalSpy finished(&runner, &console::StormRunner::finished);
        QSignalSpy failures(&runner, &console::StormRunner::failed);
        runner.start(scratch->dsn(), plan, true);
        QVERIFY(runner.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(failures.count(), 0);
        QVERIFY(!runner.isRunning());
        QVERIFY(progress.count() >= 1);
        const auto counts = finished.at(0).at(0).value<StormCounts>();
        QCOMPARE(counts.ordersCreated, 20);
        QCOMPARE(counts.answered2xx, 40);
        QVERIFY(!counts.stopped);
        // The safe handler paid each fresh order once.
        db::Connection connection(scratch->dsn(), QStringLiteral("check"));
        QCOMPARE(db::scalar(connection.database(),
                            QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
                     .toInt(),
                 20);
        QCOMPARE(db::scalar(connection.database(),
                            QStringLiteral("SELECT COUNT(*) FROM pay_callback_log"))
                     .toInt(),
                 20);

        // A long one, slowed to 10 orders a second, stops promptly.
        plan.orders = 2000;
        plan.ratePerSecond = 10;
        runner.start(scratch->dsn(), plan, true);
        QTRY_VERIFY_WITH_TIMEOUT(
            !progress.isEmpty() && progress.constLast().at(0).value<StormCounts>().sent > 0 &&
                progress.constLast().at(0).value<StormCounts>().planned == 4000,
            30000);
        QElapsedTimer stopping;
        stopping.start();
        runner.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 5000);
        QVERIFY2(stopping.elapsed() < 2000, qPrintable(QString::number(stopping.elapsed())));
        const auto stopped = finished.at(1).at(0).value<StormCounts>();
        QVERIFY(stopped.stopped);
        QVERIFY(stopped.sent < 400);
    }

    void stormRefusesAnInvalidPlan()
    {
        console::StormRunner runner;
        QSignalSpy failures(&runner, &console::StormRunner::failed);
        StormPlan plan; // no targets, no secret
        runner.start(test::serverDsn(), plan, true);
        QCOMPARE(failures.count(), 1);
        QVERIFY(!failures.at(0).at(0).toString().isEmpty());
        QVERIFY(!runner.isRunning());
    }

    void liveTrafficCountsWhatPlainSqlCounts()
    {
        const auto scratch = sandboxDatabase(0);
        db::Connection connection(scratch->dsn(), QStringLiteral("traffic"));
        const QSqlDatabase db = connection.database();
        // History outside the window, which no read on the timer may touch.
        insertTraces(db, 1, QStringLiteral("NOW(6) - INTERVAL 2 DAY"));
        for (int doubling = 0; doubling < 13; ++doubling) // 8,192 rows
            db::execDirect(
                db, QStringLiteral(
                        "INSERT INTO callback_trace (pay_no, order_id, received_at)"
                        " SELECT CONCAT(pay_no, '-', id), 1, received_at FROM callback_trace"));
        insertTraces(db, 30, QStringLiteral("NOW(6) - INTERVAL 5 MINUTE"));
        insertTraces(db, 12, QStringLiteral("NOW(6) - INTERVAL 30 SECOND"));
        insertTraces(db, 7, QStringLiteral("NOW(6) - INTERVAL 1 HOUR"));
        // In a second's last half millisecond: it counts in that second, not the next.
        insertTraces(db, 1,
                     QStringLiteral("FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW(6) - INTERVAL 3 "
                                    "MINUTE)) + 0.999700)"));
        test::insertDuplicateIncident(db,
                                      6); // 6 orders: 2 coupons and 1 points row issued twice each

        console::LiveTrafficReader reader;
        const console::LiveTraffic first = reader.read(db);
        QVERIFY(first.nowMs - first.windowStartMs == 15 * 60 * 1000);
        QCOMPARE(asMap(first.callbacksPerSecond), expectedPerSecond(db, first.windowStartMs));
        qint64 traces = 0;
        for (const auto &bucket : first.callbacksPerSecond)
            traces += bucket.count;
        QCOMPARE(traces, 43);
        QCOMPARE(asMap(first.duplicates), expectedDuplicates(db, first.windowStartMs));
        qint64 copies = 0;
        for (const auto &bucket : first.duplicates)
            copies += bucket.count;
        QCOMPARE(copies, 18);

        // New rows: a duplicate of a group read before, a new incident, callbacks, a flip.
        db::exec(db,
                 QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                                "face_value_fen) VALUES (1, 1001, 1, 1000)"));
        db::exec(db, QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points) "
                                    "VALUES (1, 1002, 'PAY_REWARD', 100)"));
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO point_log (user_id, order_id, point_type, points, reverses_id) "
                     "SELECT user_id, order_id, point_type, -points, id FROM point_log WHERE "
                     "order_id = 1003 ORDER BY id DESC LIMIT 1"));
        db::exec(db,
                 QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                                "face_value_fen) VALUES (1, 5000, 1, 1000)"));
        insertTraces(db, 25, QStringLiteral("NOW(6)"));
        flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("live traffic test"));

        const qint64 before = bench::sessionRowsRead(db);
        const console::LiveTraffic second = reader.read(db);
        const qint64 rowsRead = bench::sessionRowsRead(db) - before;
        // 25 callbacks, 4 side-effect rows and their groups, the flip: a few dozen rows, never
        // the 8,192 of history (nor the window's 43 again).
        QVERIFY2(rowsRead < 200, qPrintable(QString::number(rowsRead)));
        QCOMPARE(asMap(second.callbacksPerSecond), expectedPerSecond(db, second.windowStartMs));
        QCOMPARE(asMap(second.duplicates), expectedDuplicates(db, second.windowStartMs));
        copies = 0;
        for (const auto &bucket : second.duplicates)
            copies += bucket.count;
        QCOMPARE(copies, 20); // the reversal and the first coupon of order 5000 are no copies
        QCOMPARE(second.flips.size(), 1);
        QCOMPARE(second.flips.at(0).mode, QStringLiteral("RECORD_ONLY"));
        QVERIFY(second.flips.at(0).atMs <= second.nowMs &&
                second.flips.at(0).atMs >= first.nowMs - 1000);
    }

    void liveTrafficCountsARowCommittedLate()
    {
        const auto scratch = sandboxDatabase(0);
        db::Connection connection(scratch->dsn(), QStringLiteral("traffic"));
        db::Connection late(scratch->dsn(), QStringLiteral("late"));
        const QSqlDatabase db = connection.database();
        db::exec(db,
                 QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                                "face_value_fen) VALUES (1, 7001, 1, 1000)"));
        console::LiveTrafficReader reader;
        reader.read(db);

        // The incident's shape: a copy whose transaction commits after a later row was read.
        db::execDirect(late.database(), QStringLiteral("BEGIN"));
        db::exec(late.database(),
                 QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                                "face_value_fen) VALUES (1, 7001, 1, 1000)"));
        insertTraces(late.database(), 1, QStringLiteral("NOW(6)"));
        db::exec(db,
                 QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                                "face_value_fen) VALUES (1, 7002, 1, 1000)"));
        insertTraces(db, 2, QStringLiteral("NOW(6)"));
        const console::LiveTraffic during = reader.read(db);
        QVERIFY(during.duplicates.isEmpty());
        db::execDirect(late.database(), QStringLiteral("COMMIT"));

        const console::LiveTraffic after = reader.read(db);
        QCOMPARE(asMap(after.duplicates), expectedDuplicates(db, after.windowStartMs));
        QCOMPARE(after.duplicates.size(), 1);
        QCOMPARE(after.duplicates.at(0).count, 1);
        QCOMPARE(asMap(after.callbacksPerSecond), expectedPerSecond(db, after.windowStartMs));
    }
};

PAYOPS_TEST_MAIN_CORE(TestLocalInstances)
#include "tst_localinstances.moc"
