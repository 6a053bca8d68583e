#include "bulkdata.h"
#include "callbackfixture.h"
#include "console/activitytally.h"
#include "console/backlog.h"
#include "console/databasesummary.h"
#include "console/instances.h"
#include "console/overview.h"
#include "console/statemachine.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "demodatabase.h"
#include "domain/money/compensation.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <thread>

using namespace payops;

namespace {

// The figures a full GROUP BY ... HAVING over both tables gives, written independently of
// the watch: what it must equal after every step.
struct Figures
{
    qint64 couponGroups = 0, couponExtra = 0, couponFen = 0;
    qint64 pointGroups = 0, pointExtra = 0, pointFen = 0;
    qint64 orders = 0, superseded = 0;

    bool operator==(const Figures &) const = default;
    QString text() const
    {
        return QStringLiteral("coupons %1 groups %2 extra %3 fen; points %4 groups %5 extra %6 "
                              "fen; %7 orders; %8 superseded")
            .arg(couponGroups)
            .arg(couponExtra)
            .arg(couponFen)
            .arg(pointGroups)
            .arg(pointExtra)
            .arg(pointFen)
            .arg(orders)
            .arg(superseded);
    }
};

Figures fullScan(const QSqlDatabase &db, qint64 pointsPerYuan = 100)
{
    const QString coupons = QStringLiteral(
        "SELECT order_id, COUNT(*) AS n, SUM(superseded_by IS NULL) AS live, MAX(face_value_fen) "
        "AS unit "
        "FROM user_coupon GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1");
    const QString points = QStringLiteral("SELECT order_id, COUNT(*) AS n, SUM(superseded_by IS "
                                          "NULL) AS live, MAX(points) * 100 DIV %1 AS unit "
                                          "FROM point_log WHERE reverses_id IS NULL GROUP BY "
                                          "order_id, point_type HAVING COUNT(*) > 1")
                               .arg(pointsPerYuan);
    const auto row = [&db](const QString &groups) {
        QSqlQuery q = db::exec(
            db,
            QStringLiteral(
                "SELECT COALESCE(SUM(live > 1), 0), COALESCE(SUM(IF(live > 1, live - 1, 0)), 0), "
                "COALESCE(SUM(IF(live > 1, (live - 1) * unit, 0)), 0) FROM (%1) g")
                .arg(groups));
        q.next();
        return std::array<qint64, 3>{q.value(0).toLongLong(), q.value(1).toLongLong(),
                                     q.value(2).toLongLong()};
    };
    const auto c = row(coupons);
    const auto p = row(points);
    Figures f{c[0], c[1], c[2], p[0], p[1], p[2]};
    const QString both = QStringLiteral("(%1) UNION ALL (%2)").arg(coupons, points);
    f.orders =
        db::scalar(
            db,
            QStringLiteral("SELECT COUNT(DISTINCT order_id) FROM (%1) g WHERE live > 1").arg(both))
            .toLongLong();
    f.superseded =
        db::scalar(db, QStringLiteral("SELECT COALESCE(SUM(n - live), 0) FROM (%1) g").arg(both))
            .toLongLong();
    return f;
}

Figures ofWatch(const DuplicateWatchFigures &w, qint64 pointsPerYuan = 100)
{
    return {w.groups(CouponBit),      w.extraCopies(CouponBit),  w.couponFen(), w.groups(PointsBit),
            w.extraCopies(PointsBit), w.pointFen(pointsPerYuan), w.openOrders,  w.superseded()};
}

#define COMPARE_WATCH(db, watchFigures)                                                            \
    do {                                                                                           \
        const Figures expected = fullScan(db);                                                     \
        const Figures got = ofWatch(watchFigures);                                                 \
        QVERIFY2(                                                                                  \
            got == expected,                                                                       \
            qPrintable(QStringLiteral("watch: %1\nscan:  %2").arg(got.text(), expected.text())));  \
    } while (false)

void insertSideEffect(const QSqlDatabase &db, QRandomGenerator &rng, qint64 firstOrder, int orders)
{
    const qint64 order = firstOrder + rng.bounded(orders);
    if (rng.bounded(2) == 0) {
        const int tpl = 1 + rng.bounded(2);
        // Now and then a copy worth something else: a group is valued at its dearest copy.
        const int fen = rng.bounded(10) == 0 ? 700 : tpl == 1 ? 1000 : 500;
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, face_value_fen) "
                "VALUES (1, %1, %2, %3)")
                .arg(order)
                .arg(tpl)
                .arg(fen));
    } else {
        // 'pay_reward' is the same group as 'PAY_REWARD' under the column's collation.
        const char *type = rng.bounded(8) == 0   ? "pay_reward"
                           : rng.bounded(3) == 0 ? "BIRTHDAY"
                                                 : "PAY_REWARD";
        db::exec(db, QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points) "
                                    "VALUES (1, %1, '%2', %3)")
                         .arg(order)
                         .arg(QLatin1String(type))
                         .arg(rng.bounded(2) ? 100 : 150));
    }
}

void compensateOrder(const QSqlDatabase &db, qint64 order)
{
    const CompensationPlan plan =
        planCompensation(db, CompensationScope{{order}, {}, false}, CompensationSettings{});
    if (!plan.isEmpty())
        executeCompensation(db, plan, QStringLiteral("test"), QStringLiteral("T-1"),
                            CompensationSettings{});
}

// How many of the duplicate watch's gaps of user_coupon hold this id.
int couponGapsAt(const QSqlDatabase &db, qint64 id)
{
    return db::scalar(
               db,
               QStringLiteral(
                   "SELECT COUNT(*) FROM duplicate_watch_gap WHERE source = 1 AND first_id <= ? "
                   "AND last_id >= ?"),
               {id, id})
        .toInt();
}

// A scratch database at level legacy and a connection to it on the test's thread.
class LegacyDatabase final
{
public:
    // PENDING orders 1001 .. 1000 + orders (callbackfixture's), the incident's duplicates on the
    // first `duplicated` of them.
    LegacyDatabase(int orders, int duplicated)
    {
        test::prepareCallbackDatabase(m_scratch.dsn(), QStringLiteral("legacy"), orders);
        m_connection = std::make_unique<db::Connection>(m_scratch.dsn(), QStringLiteral("t"));
        if (duplicated > 0)
            test::insertDuplicateIncident(db(), duplicated);
    }
    // The benchmarks' incident database of `orders` paid orders, ids 1 .. orders.
    explicit LegacyDatabase(qint64 orders)
        : m_connection(std::make_unique<db::Connection>(m_scratch.dsn(), QStringLiteral("t")))
    {
        db::Migrator(*m_connection, checkMigrationRequirement)
            .migrate(db::SchemaLevel::Legacy, true);
        bench::generateIncidentOrders(db(), orders);
    }
    Q_DISABLE_COPY_MOVE(LegacyDatabase)

    const Dsn &dsn() const { return m_scratch.dsn(); }
    const QString &name() const { return m_scratch.name(); }
    QSqlDatabase db() const { return m_connection->database(); }

private:
    test::ScratchDatabase m_scratch;
    std::unique_ptr<db::Connection> m_connection;
};

} // namespace

class TestDuplicateWatch final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Inserts, duplicates or not, and compensations in a seeded random order: after each, one
    // refresh, and the watch says what a full scan says.
    void equalsAFullScanAfterEveryStep()
    {
        const LegacyDatabase scratch(40, 6); // history for the first pass to find
        const QSqlDatabase db = scratch.db();
        COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);
        QRandomGenerator rng(20261204);
        for (int step = 0; step < 150; ++step) {
            const int what = rng.bounded(10);
            if (what < 7) {
                insertSideEffect(db, rng, 1001, 40);
            } else if (what < 9) {
                db::Transaction transaction(db); // several rows, one commit
                for (int i = 0; i < 3; ++i)
                    insertSideEffect(db, rng, 1001, 40);
                transaction.commit();
            } else {
                compensateOrder(db, 1001 + rng.bounded(40));
            }
            const WatchRefresh refresh = refreshDuplicateWatch(db);
            QVERIFY(refresh.refreshed);
            COMPARE_WATCH(db, refresh.figures);
        }
        QVERIFY(fullScan(db).superseded > 0);
        // The valuation follows the points' cash value as the duplicates page does.
        const Figures seven = fullScan(db, 7);
        QCOMPARE(readDuplicateWatch(db).pointFen(7), seven.pointFen);
    }

    // Two writers with connections of their own insert while the refresher runs; one of them
    // keeps its transaction open over a commit of a higher id.
    void catchesConcurrentAndLateRows()
    {
        const LegacyDatabase scratch(30, 0);
        const QSqlDatabase db = scratch.db();
        refreshDuplicateWatch(db);

        {
            db::Connection late(scratch.dsn(), QStringLiteral("late"));
            db::Transaction open(late.database());
            db::exec(
                late.database(),
                QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                               "face_value_fen) VALUES (1, 1001, 1, 1000), (1, 1001, 1, 1000)"));
            const qint64 lowId =
                db::scalar(late.database(), QStringLiteral("SELECT LAST_INSERT_ID()")).toLongLong();
            db::exec(db, QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                        "coupon_template_id, face_value_fen) "
                                        "VALUES (1, 1002, 1, 1000)"));
            COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);
            // The watermark passed the open transaction's ids, which wait as a gap.
            QVERIFY(
                db::scalar(db, QStringLiteral("SELECT coupon_seen_id FROM duplicate_watch_state"))
                    .toLongLong() > lowId + 1);
            QCOMPARE(couponGapsAt(db, lowId), 1);
            // Past the margin a settled gap needs, the open transaction still holds it open.
            std::this_thread::sleep_for(std::chrono::milliseconds(1200));
            QVERIFY(refreshDuplicateWatch(db).refreshed);
            QCOMPARE(couponGapsAt(db, lowId), 1);
            open.commit(); // the lower id commits after the higher one was seen
        }
        QVERIFY(fullScan(db).couponGroups == 1);
        COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);

        std::atomic<int> running{2};
        std::atomic<int> failures{0};
        const auto writer = [&scratch, &running, &failures](quint32 seed) {
            try {
                db::Connection own(scratch.dsn(), QStringLiteral("writer"));
                QRandomGenerator rng(seed);
                for (int i = 0; i < 150; ++i) {
                    db::Transaction transaction(own.database());
                    insertSideEffect(own.database(), rng, 1001, 30);
                    if (rng.bounded(4) == 0) // commits out of the order the ids were taken in
                        std::this_thread::sleep_for(std::chrono::milliseconds(rng.bounded(20)));
                    transaction.commit();
                }
            } catch (const db::Error &) {
                ++failures;
            }
            --running;
        };
        std::thread a(writer, 1u);
        std::thread b(writer, 2u);
        int refreshes = 0;
        int skipped = 0;
        while (running.load() > 0) {
            skipped += refreshDuplicateWatch(db).refreshed ? 0 : 1;
            ++refreshes;
        }
        a.join();
        b.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(skipped, 0);
        QVERIFY(refreshes > 1);
        COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);
    }

    // A gap no transaction can fill any more (a rollback's id here; INSERT ... SELECT leaves
    // such ids on every busy table) is read once more and dropped as soon as the server shows
    // that the transactions open when it was seen have ended. That takes the PROCESS privilege,
    // which root has; the operator's account, without it, keeps the gap kWatchLateSeconds.
    void settledGapsAreDroppedWithinSeconds()
    {
        const LegacyDatabase scratch(30, 0);
        const QSqlDatabase db = scratch.db();
        refreshDuplicateWatch(db);
        qint64 rolledBack = 0;
        {
            db::Connection writer(scratch.dsn(), QStringLiteral("writer"));
            db::Transaction open(writer.database());
            db::exec(
                writer.database(),
                QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                               "face_value_fen) VALUES (1, 1001, 1, 1000)"));
            rolledBack = db::scalar(writer.database(), QStringLiteral("SELECT LAST_INSERT_ID()"))
                             .toLongLong();
            db::exec(db, QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                        "coupon_template_id, face_value_fen) "
                                        "VALUES (1, 1002, 1, 1000)"));
            QVERIFY(refreshDuplicateWatch(db).refreshed);
            QCOMPARE(couponGapsAt(db, rolledBack), 1);
            open.rollback();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));

        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        QVERIFY(refreshDuplicateWatch(asOperator.database()).refreshed);
        QCOMPARE(couponGapsAt(db, rolledBack), 1);

        // Other tests share the server and may have a transaction open for a moment.
        QElapsedTimer waited;
        waited.start();
        while (couponGapsAt(db, rolledBack) > 0 && waited.elapsed() < 30000) {
            QVERIFY(refreshDuplicateWatch(db).refreshed);
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        QCOMPARE(couponGapsAt(db, rolledBack), 0);
        COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);
    }

    // The named lock serialises refreshers: two at once, from the first pass on, with rows
    // arriving, count each row once.
    void twoRefreshersDoNotCountTwice()
    {
        const LegacyDatabase scratch(30, 10);
        const QSqlDatabase db = scratch.db();
        std::atomic<int> skipped{0};
        const auto refresher = [&scratch, &skipped] {
            try {
                db::Connection own(scratch.dsn(), QStringLiteral("refresher"));
                for (int i = 0; i < 25; ++i)
                    skipped += refreshDuplicateWatch(own.database()).refreshed ? 0 : 1;
            } catch (const db::Error &) {
                skipped += 100;
            }
        };
        std::thread a(refresher);
        std::thread b(refresher);
        QRandomGenerator rng(7);
        for (int i = 0; i < 100; ++i)
            insertSideEffect(db, rng, 1001, 30);
        a.join();
        b.join();
        QCOMPARE(skipped.load(), 0); // they waited for each other, none gave up
        COMPARE_WATCH(db, refreshDuplicateWatch(db).figures);
    }

    // Cancelled midway, the first pass keeps its cursor, counts rows added meanwhile, and
    // goes on from where it stopped to the totals of a full scan.
    void firstPassCancelsAndResumes()
    {
        const LegacyDatabase scratch(qint64(5000));
        const QSqlDatabase db = scratch.db();

        std::atomic<bool> cancel{false};
        WatchRefreshOptions options;
        options.firstPassChunk = 200;
        options.cancel = &cancel;
        options.progress = [&cancel](const DuplicateWatchFigures &) { cancel.store(true); };
        const WatchRefresh stopped = refreshDuplicateWatch(db, options);
        QVERIFY(stopped.cancelled);
        QVERIFY(!stopped.figures.complete());
        const qint64 cursor = stopped.figures.scanCursor;
        QVERIFY(cursor > stopped.figures.scanStart && cursor < stopped.figures.scanEnd);
        QVERIFY(stopped.figures.percentScanned() < 100);

        // Meanwhile: a third copy below the cursor, a new duplicate above it.
        db::exec(db, QStringLiteral(
                         "INSERT INTO point_log (user_id, order_id, point_type, points) VALUES "
                         "(1, 7, 'PAY_REWARD', 100), (1, 4000, 'PAY_REWARD', 100)"));
        cancel.store(false);
        QList<qint64> reached;
        QList<int> percents;
        options.progress = [&](const DuplicateWatchFigures &f) {
            reached << f.scanCursor;
            percents << f.percentScanned();
        };
        const WatchRefresh resumed = refreshDuplicateWatch(db, options);
        QVERIFY(!resumed.cancelled && resumed.figures.complete());
        QVERIFY(!reached.isEmpty() && reached.first() > cursor);
        QVERIFY(std::is_sorted(percents.cbegin(), percents.cend()) && percents.last() == 100);
        COMPARE_WATCH(db, resumed.figures);
        QCOMPARE(resumed.figures.groups(PointsBit), qint64(5000 / 20 + 1));
    }

    // On 200,000 orders, a refresh reads what is new and a constant, by the server's own
    // counters on the refresher's connection; so do the console's other timer-driven reads.
    void refreshReadsWhatIsNew()
    {
        const LegacyDatabase scratch(qint64(200000));
        const QSqlDatabase db = scratch.db();
        QVERIFY(refreshDuplicateWatch(db).figures.complete());

        db::Connection writer(scratch.dsn(), QStringLiteral("writer"));
        QRandomGenerator rng(11);
        for (int n : {10, 300, 1000}) {
            for (int i = 0; i < n;
                 ++i) // one in ten a duplicate of an old order, the rest new orders
                insertSideEffect(writer.database(), rng, i % 10 == 0 ? 1 : 300000 + i,
                                 i % 10 == 0 ? 200000 : 1);
            const qint64 before = bench::sessionRowsRead(db);
            const WatchRefresh refresh = refreshDuplicateWatch(db);
            const qint64 read = bench::sessionRowsRead(db) - before;
            QVERIFY2(read <= 10 * n + 1000,
                     qPrintable(QStringLiteral("%1 rows read after %2 new ones").arg(read).arg(n)));
            QCOMPARE(refresh.rowsRead, qint64(n));
            COMPARE_WATCH(db, refresh.figures);
        }

        const auto bounded = [&db](const char *what, qint64 allowance,
                                   const std::function<void()> &read) {
            const qint64 before = bench::sessionRowsRead(db);
            read();
            const qint64 used = bench::sessionRowsRead(db) - before;
            QVERIFY2(
                used <= 1000 + allowance,
                qPrintable(QStringLiteral("%1 read %2 rows").arg(QLatin1String(what)).arg(used)));
        };
        // The overview's and the state machine's counts of the last hour: read once, then what is
        // new.
        console::ActivityTally overviewTally(console::kRecentActivitySeconds);
        console::ActivityTally machineTally(3600);
        QVERIFY(overviewTally.advance(db).ordersCreated > 0);
        console::loadStateMachine(db, machineTally);
        bounded("the watch with nothing new", 0, [&db] { refreshDuplicateWatch(db); });
        console::OverviewTallies overviewTallies;
        bounded("the overview", 0, [&db, &overviewTally, &overviewTallies] {
            console::loadDatabaseSummary(db);
            console::loadOverview(db, overviewTallies, 100);
            overviewTally.advance(db);
        });
        console::BacklogTally backlogTally;
        bounded("the backlog summary", 0,
                [&db, &backlogTally] { console::loadBacklogSummary(db, backlogTally); });
        bounded("the instances", 0, [&db] { console::loadInstances(db); });
        bounded("the state machine", 0,
                [&db, &machineTally] { console::loadStateMachine(db, machineTally); });
    }

    // The last hour's counts kept in memory equal plain SQL over the window after every step:
    // new transitions, one whose transaction commits after a later one, orders whose ids do
    // not grow with time, and rows older than the window; a refresh reads what is new.
    void activityTallyEqualsPlainSql()
    {
        const LegacyDatabase scratch(20, 0);
        const QSqlDatabase db = scratch.db();
        const auto logRows = [&db](const QString &values) {
            db::exec(db, QStringLiteral("INSERT INTO order_state_log (order_id, from_state, "
                                        "to_state, accepted, reason, "
                                        "created_at) VALUES ") +
                             values);
        };
        logRows(QStringLiteral(
            "(1001, 'PENDING', 'PAID', 1, '', UTC_TIMESTAMP(3) - INTERVAL 2 HOUR), "
            "(1002, 'PENDING', 'PAID', 1, '', UTC_TIMESTAMP(3) - INTERVAL 20 MINUTE), "
            "(1002, 'PAID', 'PAID', 0, 'order_already_paid', UTC_TIMESTAMP(3) - INTERVAL 20 "
            "MINUTE)"));
        db::exec(db,
                 QStringLiteral("INSERT INTO orders (id, user_id, amount_fen, created_at) VALUES "
                                "(7, 1, 100, UTC_TIMESTAMP(3) - INTERVAL 3 HOUR)"));
        const auto expected = [&scratch] {
            return QStringList{
                QString::number(test::count(
                    scratch.dsn(), QStringLiteral("SELECT COUNT(*) FROM orders WHERE created_at >= "
                                                  "UTC_TIMESTAMP(3) - INTERVAL 1 HOUR"))),
                QString::number(test::count(
                    scratch.dsn(),
                    QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE accepted = 1 AND "
                                   "to_state = 'PAID' "
                                   "AND created_at >= UTC_TIMESTAMP(3) - INTERVAL 1 HOUR"))),
                QString::number(test::count(
                    scratch.dsn(),
                    QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE accepted = 0 AND "
                                   "from_state = 'PAID' AND to_state = 'PAID' "
                                   "AND created_at >= UTC_TIMESTAMP(3) - INTERVAL 1 HOUR")))};
        };
        const auto got = [](const console::RecentActivity &a) {
            return QStringList{
                QString::number(a.ordersCreated),
                QString::number(a.entered(QStringLiteral("PAID"))),
                QString::number(a.refused(QStringLiteral("PAID"), QStringLiteral("PAID")))};
        };
        console::ActivityTally tally(3600);
        QCOMPARE(got(tally.advance(db)), expected());
        QCOMPARE(expected().at(0), QStringLiteral("20"));

        {
            // A transition whose transaction takes its id first and commits last.
            db::Connection late(scratch.dsn(), QStringLiteral("late"));
            db::Transaction open(late.database());
            db::exec(late.database(),
                     QStringLiteral(
                         "INSERT INTO order_state_log (order_id, from_state, to_state, accepted, "
                         "reason) VALUES (1003, 'PAID', 'PAID', 0, 'order_already_paid')"));
            logRows(QStringLiteral("(1003, 'PENDING', 'PAID', 1, '', UTC_TIMESTAMP(3))"));
            // An order with a lower id than every other, created now.
            db::exec(db, QStringLiteral(
                             "INSERT INTO orders (id, user_id, amount_fen) VALUES (5, 1, 100)"));
            QCOMPARE(got(tally.advance(db)), expected());
            open.commit();
        }
        QCOMPARE(got(tally.advance(db)), expected());
        QCOMPARE(expected(),
                 (QStringList{QStringLiteral("21"), QStringLiteral("2"), QStringLiteral("2")}));

        const int n = 500;
        QStringList values;
        for (int i = 0; i < n; ++i)
            values << QStringLiteral("(%1, 'PENDING', 'PAID', %2, '', UTC_TIMESTAMP(3))")
                          .arg(1001 + i % 20)
                          .arg(i % 2);
        logRows(values.join(QLatin1Char(',')));
        const qint64 before = bench::sessionRowsRead(db);
        const console::RecentActivity after = tally.advance(db);
        const qint64 read = bench::sessionRowsRead(db) - before;
        QCOMPARE(got(after), expected());
        QVERIFY2(after.rowsRead <= n + 30, qPrintable(QString::number(after.rowsRead)));
        QVERIFY2(read <= 10 * n + 1000,
                 qPrintable(QStringLiteral("%1 rows read after %2 new ones").arg(read).arg(n)));
    }

    // inspect --json: the watch's figures equal plain SQL; 0 clean, 1 findings, 2 error; the
    // finance account runs it too.
    void inspectJsonAndExitCodes()
    {
        const LegacyDatabase scratch(20, 5);
        const QSqlDatabase db = scratch.db();
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, amount_fen, "
                     "status) VALUES "
                     "('R1', 1010, '{}', 9900, 'RECORDED'), ('U1', 1011, '{}', 9900, 'UNMATCHED'), "
                     "('U2', 99999, '{}', 500, 'UNMATCHED')"));
        const auto inspect = [](const Dsn &dsn) {
            return test::runCli({QStringLiteral("inspect"), QStringLiteral("--json"),
                                 QStringLiteral("--db"), dsn.toString(true)});
        };
        const test::CliRun first = inspect(scratch.dsn());
        QVERIFY2(first.exitCode == 1, qPrintable(first.err));
        QVERIFY2(first.err.contains(QStringLiteral("first count of duplicates: 100 %")),
                 qPrintable(first.err));
        const QJsonObject json = QJsonDocument::fromJson(first.out.toUtf8()).object();
        const QJsonObject duplicates = json.value(QStringLiteral("duplicates")).toObject();
        const Figures expected = fullScan(db);
        QCOMPARE(duplicates.value(QStringLiteral("groups")).toInteger(),
                 expected.couponGroups + expected.pointGroups);
        QCOMPARE(duplicates.value(QStringLiteral("extra_copies")).toInteger(),
                 expected.couponExtra + expected.pointExtra);
        QCOMPARE(duplicates.value(QStringLiteral("orders")).toInteger(), expected.orders);
        QCOMPARE(duplicates.value(QStringLiteral("money_at_risk_fen")).toInteger(),
                 expected.couponFen + expected.pointFen);
        QCOMPARE(expected.orders, qint64(5));
        QCOMPARE(
            json.value(QStringLiteral("backlog")).toInteger(),
            test::count(
                scratch.dsn(),
                QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")));
        QCOMPARE(json.value(QStringLiteral("unmatched")).toInteger(), qint64(2));
        QCOMPARE(json.value(QStringLiteral("unmatched_with_order")).toInteger(), qint64(1));
        const QJsonObject sw = json.value(QStringLiteral("switch")).toObject();
        QCOMPARE(sw.value(QStringLiteral("mode")).toString(), QStringLiteral("NORMAL"));
        QCOMPARE(sw.value(QStringLiteral("version")).toInteger(),
                 test::count(scratch.dsn(), QStringLiteral("SELECT version FROM callback_switch")));

        // Finance reads and reconciles, and keeps the watch going; it changes no business table.
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, face_value_fen) "
                "VALUES (1, 1015, 2, 500), (1, 1015, 2, 500)"));
        const test::CliRun asFinance = inspect(finance.dsnFor(scratch.name()));
        QVERIFY2(asFinance.exitCode == 1, qPrintable(asFinance.err));
        QCOMPARE(QJsonDocument::fromJson(asFinance.out.toUtf8())
                     .object()
                     .value(QStringLiteral("duplicates"))
                     .toObject()
                     .value(QStringLiteral("orders"))
                     .toInteger(),
                 qint64(6));

        executeCompensation(db,
                            planCompensation(db, CompensationScope::all(), CompensationSettings{}),
                            QStringLiteral("test"), QStringLiteral("T-2"), CompensationSettings{});
        db::exec(
            db, QStringLiteral("UPDATE pay_callback_log SET order_id = 99998 WHERE pay_no = 'U1'"));
        const test::CliRun clean = inspect(scratch.dsn());
        QVERIFY2(clean.exitCode == 0, qPrintable(clean.out + clean.err));
        QCOMPARE(QJsonDocument::fromJson(clean.out.toUtf8())
                     .object()
                     .value(QStringLiteral("duplicates"))
                     .toObject()
                     .value(QStringLiteral("groups"))
                     .toInteger(),
                 qint64(0));

        test::ScratchDatabase bare; // never migrated: no watch to read
        const test::CliRun error = inspect(bare.dsn());
        QCOMPARE(error.exitCode, 2);
        QVERIFY2(error.err.contains(QStringLiteral("payops migrate")), qPrintable(error.err));
    }
};

PAYOPS_TEST_MAIN_CORE(TestDuplicateWatch)
#include "tst_duplicatewatch.moc"
