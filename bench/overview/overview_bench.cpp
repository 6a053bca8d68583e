// bench_overview: what one refresh of the console's overview reads on a large database, once
// the duplicate watch has done its first pass, after 1,000 new side-effect rows (a tenth of
// them duplicates) and 100 compensations; and what that first pass costs against the bare
// GROUP BY ... HAVING over the same tables, in the same run. Rows read are the server's own
// counters (Handler_read%) on the overview's connection: deterministic, unlike the times.
//
//   bench_overview [ORDERS ...]      (default: 1000000 5000000)

#include "bulkdata.h"
#include "console/activitytally.h"
#include "console/databasesummary.h"
#include "console/duplicatescan.h"
#include "console/overview.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/compensation.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "lab/localserver.h"
#include "privateserver.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSqlQuery>
#include <QTextStream>

#include <algorithm>

using namespace payops;

namespace {

constexpr int kNewRows = 1000;
constexpr int kCompensations = 100;
constexpr int kRounds = 3;

// The statements the watch replaces: one GROUP BY ... HAVING per side-effect table, every row.
double bareGroupByMs(const QSqlDatabase &db)
{
    QElapsedTimer clock;
    clock.start();
    qint64 groups = 0;
    for (const char *sql :
         {"SELECT order_id, coupon_template_id, COUNT(*), SUM(superseded_by IS NULL), "
          "MAX(face_value_fen) "
          "FROM user_coupon GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1",
          "SELECT order_id, point_type, COUNT(*), SUM(superseded_by IS NULL), MAX(points) FROM "
          "point_log "
          "WHERE reverses_id IS NULL GROUP BY order_id, point_type HAVING COUNT(*) > 1"}) {
        QSqlQuery query = db::exec(db, QString::fromLatin1(sql));
        while (query.next())
            ++groups;
    }
    if (groups == 0)
        qFatal("the bare GROUP BY found no duplicates");
    return double(clock.nsecsElapsed()) / 1e6;
}

// 300 new orders with their three side effects (900 rows) and 100 copies of existing side
// effects, then 100 compensations through the engine, on a connection of their own.
qint64 addNewRows(const Dsn &dsn, qint64 orders)
{
    db::Connection writer(dsn, QStringLiteral("writer"));
    const QSqlDatabase db = writer.database();
    const qint64 first = orders + 1;
    constexpr int kNewOrders = (kNewRows - kNewRows / 10) / 3;
    QStringList coupons;
    QStringList points;
    QStringList newOrders;
    for (qint64 id = first; id < first + kNewOrders; ++id) {
        newOrders << QStringLiteral("(%1, 1, 9900, 'PAID')").arg(id);
        coupons << QStringLiteral("(1, %1, 1, 1000), (1, %1, 2, 500)").arg(id);
        points << QStringLiteral("(1, %1, 'PAY_REWARD', 100)").arg(id);
    }
    // The duplicates: spread over the whole history, as late resends would be.
    for (int i = 0; i < kNewRows / 10; ++i) {
        const qint64 order = 1 + (qint64(i) * 7919 * 13) % orders;
        if (i % 3 == 2)
            points << QStringLiteral("(1, %1, 'PAY_REWARD', 100)").arg(order);
        else
            coupons << QStringLiteral("(1, %1, %2, %3)")
                           .arg(order)
                           .arg(1 + i % 3)
                           .arg(i % 3 == 0 ? 1000 : 500);
    }
    const QLatin1Char comma(',');
    db::execDirect(db,
                   QStringLiteral("INSERT INTO orders (id, user_id, amount_fen, status) VALUES ") +
                       newOrders.join(comma));
    db::execDirect(db, QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                      "coupon_template_id, face_value_fen) VALUES ") +
                           coupons.join(comma));
    db::execDirect(
        db,
        QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points) VALUES ") +
            points.join(comma));

    // Compensations of the duplicated orders 7, 27, 47 ... (each has three groups): coupons
    // frozen and points reversed.
    QList<qint64> scope;
    for (qint64 order = 7; scope.size() < kCompensations / 3 + 1; order += 20)
        scope << order;
    CompensationPlan plan;
    const CompensationPlan full =
        planCompensation(db, CompensationScope{scope, {}, false}, CompensationSettings{});
    for (const PlannedAction &action : full.actions.mid(0, kCompensations))
        plan.add(action);
    const CompensationOutcome outcome = executeCompensation(
        db, plan, QStringLiteral("bench"), QStringLiteral("bench"), CompensationSettings{});
    if (outcome.done != kCompensations)
        qFatal("compensated %d, not %d", outcome.done, kCompensations);
    // Each points compensation also wrote a reversal row: new rows too.
    return kNewRows + kCompensations + plan.pointsReversed;
}

void resetWatch(const QSqlDatabase &db)
{
    for (const char *table :
         {"duplicate_watch_group", "duplicate_watch_total", "duplicate_watch_gap"})
        db::execDirect(db, QStringLiteral("TRUNCATE TABLE %1").arg(QLatin1String(table)));
    db::execDirect(
        db, QStringLiteral(
                "UPDATE duplicate_watch_state SET scan_state = 'NEW', open_orders = 0, "
                "coupon_seen_id = 0, point_seen_id = 0, compensation_seen_id = 0 WHERE id = 1"));
}

double firstPassMs(const QSqlDatabase &db)
{
    QElapsedTimer clock;
    clock.start();
    const WatchRefresh first = refreshDuplicateWatch(db);
    const double ms = double(clock.nsecsElapsed()) / 1e6;
    if (!first.figures.complete())
        qFatal("the first pass did not finish");
    return ms;
}

struct Figures
{
    qint64 orders = 0;
    QStringList rounds; // GROUP BY ms / first pass ms
    double firstPassRatio = 0;
    qint64 newRows = 0;
    qint64 refreshRows = 0;
    double refreshMs = 0;
    qint64 idleRows = 0;
};

Figures measure(const LocalServer &server, qint64 orders)
{
    Figures f;
    f.orders = orders;
    const QString name = QStringLiteral("overview_%1").arg(orders);
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + name);
    }
    const Dsn dsn = server.rootDsn(name);
    db::Connection connection(dsn, QStringLiteral("overview"));
    const QSqlDatabase db = connection.database();
    db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
    QTextStream(stderr) << "generating " << orders << " orders ..." << Qt::endl;
    bench::generateIncidentOrders(db, orders);

    // Rounds, the order alternating, each first pass on an emptied watch; the median round is
    // the figure, the machine being shared.
    bareGroupByMs(db); // warms the buffer pool for both sides alike
    QList<double> ratios;
    for (int round = 0; round < kRounds; ++round) {
        resetWatch(db);
        const double before = round % 2 ? bareGroupByMs(db) : 0;
        const double pass = firstPassMs(db);
        const double after = round % 2 ? before : bareGroupByMs(db);
        ratios << pass / after;
        f.rounds << QStringLiteral("%1/%2").arg(qRound(after)).arg(qRound(pass));
    }
    std::sort(ratios.begin(), ratios.end());
    f.firstPassRatio = ratios.at(kRounds / 2);
    QElapsedTimer clock;
    // The page's counts of the last hour and minute and of the backlog, read once when it opens.
    console::ActivityTally activity(console::kRecentActivitySeconds);
    console::OverviewTallies tallies;
    activity.advance(db);
    console::loadOverview(db, tallies, 100);

    f.newRows = addNewRows(dsn, orders);
    // One refresh as the overview page runs it: the database summary, the figures and the
    // last hour's counts.
    const qint64 before = bench::sessionRowsRead(db);
    clock.start();
    console::loadDatabaseSummary(db);
    const console::OverviewFigures overview = console::loadOverview(db, tallies, 100);
    activity.advance(db);
    f.refreshMs = double(clock.nsecsElapsed()) / 1e6;
    f.refreshRows = bench::sessionRowsRead(db) - before;
    const qint64 idle = bench::sessionRowsRead(db);
    console::loadDatabaseSummary(db);
    console::loadOverview(db, tallies, 100);
    activity.advance(db);
    f.idleRows = bench::sessionRowsRead(db) - idle;

    // The watch must say what a full scan says, or its cost means nothing.
    const console::DuplicateTotals full =
        console::loadDuplicateTotals(db, console::DuplicateFilter{});
    const console::DuplicateTotals &watch = overview.duplicates;
    if (full.couponGroups != watch.couponGroups || full.pointGroups != watch.pointGroups ||
        full.extraRows() != watch.extraRows() || full.atRiskFen() != watch.atRiskFen() ||
        full.orders != watch.orders)
        qFatal(
            "the watch (%lld groups, %lld fen) differs from the full scan (%lld groups, %lld fen)",
            static_cast<long long>(watch.couponGroups + watch.pointGroups),
            static_cast<long long>(watch.atRiskFen()),
            static_cast<long long>(full.couponGroups + full.pointGroups),
            static_cast<long long>(full.atRiskFen()));
    return f;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QList<qint64> sizes;
    for (int i = 1; i < argc; ++i)
        sizes << QByteArray(argv[i]).toLongLong();
    if (sizes.isEmpty())
        sizes = {1000000, 5000000};
    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
    {
        // Room for the largest database, so that both sides read from memory.
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(),
                       QStringLiteral("SET GLOBAL innodb_buffer_pool_size = 4294967296"));
    }
    QTextStream out(stdout);
    out << "| orders | rounds: GROUP BY ms / first pass ms | first pass / GROUP BY, median (goal "
           "<= 1.3) | new rows | "
           "refresh rows read | goal 10 x new + 1,000 | refresh ms | refresh with nothing new, "
           "rows |\n"
           "|---|---|---|---|---|---|---|---|"
        << Qt::endl;
    QList<Figures> all;
    for (qint64 orders : sizes) {
        const Figures f = measure(server, orders);
        all << f;
        out << "| " << f.orders << " | " << f.rounds.join(QStringLiteral(", ")) << " | "
            << QString::number(f.firstPassRatio, 'f', 2) << " | " << f.newRows << " | "
            << f.refreshRows << " | " << 10 * f.newRows + 1000 << " | "
            << QString::number(f.refreshMs, 'f', 1) << " | " << f.idleRows << " |" << Qt::endl;
    }
    QStringList summary{QStringLiteral("SUMMARY bench_overview")};
    for (const Figures &f : all)
        summary << QStringLiteral("first_pass_ratio_%1=%2")
                       .arg(f.orders)
                       .arg(f.firstPassRatio, 0, 'f', 2)
                << QStringLiteral("refresh_rows_%1=%2").arg(f.orders).arg(f.refreshRows)
                << QStringLiteral("new_rows_%1=%2").arg(f.orders).arg(f.newRows);
    if (all.size() > 1) {
        const double growth = double(all.last().refreshRows) / double(all.first().refreshRows);
        out << "\nrefresh rows read, largest / smallest database: "
            << QString::number(growth, 'f', 2) << " (goal <= 1.2)" << Qt::endl;
        summary << QStringLiteral("refresh_rows_largest_smallest=%1").arg(growth, 0, 'f', 2);
    }
    out << '\n' << summary.join(QLatin1Char(' ')) << Qt::endl;
    server.stop();
    return 0;
}
