// bench_compensate: compensating 10,000 duplicate groups (5,000 orders with a duplicate
// coupon and duplicate points each) through the compensation engine, with its audit trail,
// against a baseline of the same row changes done as plain batched SQL, on twin databases
// of one private MariaDB in the same run.

#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensation.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/localserver.h"
#include "loadrun.h"
#include "privateserver.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QList>
#include <QTextStream>

#include <algorithm>

#include <unistd.h>

using namespace payops;

namespace {

constexpr int kOrders = 5000;
constexpr int kBatch = 200;
constexpr double kGoal = 1.5;

const QString kSequence = QStringLiteral(
    "(SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS n FROM "
    "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION "
    "ALL SELECT 5 "
    "UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a, "
    "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION "
    "ALL SELECT 5 "
    "UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b, "
    "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION "
    "ALL SELECT 5 "
    "UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c, "
    "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) e) "
    "seq");

// The private server's CPU seconds so far (user and system, from /proc): a second figure
// beside the wall time, which the other work on a shared machine stretches.
double serverCpuSeconds(const QSqlDatabase &db)
{
    QFile pidFile(db::scalar(db, QStringLiteral("SELECT @@pid_file")).toString());
    if (!pidFile.open(QIODevice::ReadOnly))
        qFatal("cannot read the server's pid file");
    QFile stat(
        QStringLiteral("/proc/%1/stat").arg(QString::fromLatin1(pidFile.readAll()).trimmed()));
    if (!stat.open(QIODevice::ReadOnly))
        qFatal("cannot read the server's /proc stat");
    // The fields after the command name, which ends at the last ')': utime and stime are the
    // 14th and 15th of the line, the 12th and 13th after it.
    const QString line = QString::fromLatin1(stat.readAll());
    const QStringList fields =
        line.mid(line.lastIndexOf(QLatin1Char(')')) + 2).split(QLatin1Char(' '));
    const double ticks = fields.value(11).toDouble() + fields.value(12).toDouble();
    return ticks / double(sysconf(_SC_CLK_TCK));
}

struct Timing
{
    double seconds = 0;
    double serverCpu = 0;
};

void prepare(const LocalServer &server, const QString &name)
{
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + name);
    }
    db::Connection connection(server.rootDsn(name), QStringLiteral("setup"));
    const QSqlDatabase db = connection.database();
    db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, false);
    db::execDirect(
        db, QStringLiteral(
                "INSERT INTO users (id, points_balance) SELECT 1 + n, 200 FROM %1 WHERE n < %2")
                .arg(kSequence)
                .arg(kOrders));
    for (int copy = 0; copy < 2; ++copy) {
        db::execDirect(
            db, QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                               "status, face_value_fen) "
                               "SELECT 1 + n, 100000 + n, 1, 'ISSUED', 1000 FROM %1 WHERE n < %2")
                    .arg(kSequence)
                    .arg(kOrders));
        db::execDirect(
            db, QStringLiteral("INSERT INTO point_log (user_id, order_id, point_type, points) "
                               "SELECT 1 + n, 100000 + n, 'PAY_REWARD', 100 FROM %1 WHERE n < %2")
                    .arg(kSequence)
                    .arg(kOrders));
    }
}

// The same row changes as the engine makes, without its per-row checks, compensation rows'
// one-by-one uniqueness or audit entries: one statement per kind of change and batch.
void baseline(const QSqlDatabase &db, const CompensationPlan &plan)
{
    for (qsizetype start = 0; start < plan.actions.size(); start += kBatch) {
        QStringList coupons;
        QStringList points;
        QStringList values;
        for (qsizetype i = start; i < std::min(plan.actions.size(), start + kBatch); ++i) {
            const PlannedAction &a = plan.actions.at(i);
            (a.targetTable == QLatin1String("user_coupon") ? coupons : points)
                << QString::number(a.targetId);
            values << QStringLiteral(
                          "('%1', %2, %3, %4, '%5', %6, %7, 'bench', 'bench', 'bench', USER())")
                          .arg(a.targetTable)
                          .arg(a.targetId)
                          .arg(a.keptId)
                          .arg(a.orderId)
                          .arg(compensationActionName(a.action))
                          .arg(a.amountFen)
                          .arg(a.points);
        }
        db::Transaction transaction(db);
        db::execDirect(
            db, QStringLiteral(
                    "INSERT INTO compensation (target_table, target_id, kept_id, order_id, action, "
                    "amount_fen, points, batch_id, reason, ticket, created_by) VALUES ") +
                    values.join(QLatin1Char(',')));
        if (!coupons.isEmpty())
            db::execDirect(
                db,
                QStringLiteral(
                    "UPDATE user_coupon u JOIN compensation c ON c.target_table = 'user_coupon' "
                    "AND c.target_id = u.id SET u.status = 'FROZEN', u.frozen_at = NOW(3), "
                    "u.superseded_by = c.kept_id WHERE u.id IN (%1)")
                    .arg(coupons.join(QLatin1Char(','))));
        if (!points.isEmpty()) {
            const QString ids = points.join(QLatin1Char(','));
            db::execDirect(
                db, QStringLiteral(
                        "UPDATE point_log p JOIN compensation c ON c.target_table = 'point_log' "
                        "AND c.target_id = p.id SET p.superseded_by = c.kept_id WHERE p.id IN (%1)")
                        .arg(ids));
            db::execDirect(
                db, QStringLiteral(
                        "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no, "
                        "reverses_id) "
                        "SELECT user_id, order_id, point_type, -points, pay_no, id FROM point_log "
                        "WHERE id IN (%1)")
                        .arg(ids));
            db::execDirect(
                db, QStringLiteral(
                        "UPDATE users u JOIN point_log p ON p.user_id = u.id "
                        "SET u.points_balance = u.points_balance - p.points WHERE p.id IN (%1)")
                        .arg(ids));
        }
        transaction.commit();
    }
}

Timing runBaseline(const LocalServer &server, const QString &name,
                   const CompensationSettings &settings)
{
    db::Connection connection(server.rootDsn(name), QStringLiteral("plain"));
    // The baseline finds its targets with the same GROUP BY ... HAVING queries.
    const double cpu = serverCpuSeconds(connection.database());
    QElapsedTimer timer;
    timer.start();
    const CompensationPlan plan =
        planCompensation(connection.database(), CompensationScope::all(), settings);
    baseline(connection.database(), plan);
    const Timing timing{double(timer.nsecsElapsed()) / 1e9,
                        serverCpuSeconds(connection.database()) - cpu};
    if (!countLiveDuplicates(connection.database()).isEmpty() || plan.actions.size() != 2 * kOrders)
        qFatal("the baseline left duplicates");
    return timing;
}

Timing runEngine(const LocalServer &server, const QString &name,
                 const CompensationSettings &settings)
{
    db::Connection connection(server.rootDsn(name), QStringLiteral("engine"));
    const double cpu = serverCpuSeconds(connection.database());
    QElapsedTimer timer;
    timer.start();
    const CompensationPlan plan =
        planCompensation(connection.database(), CompensationScope::all(), settings);
    const CompensationOutcome outcome = executeCompensation(
        connection.database(), plan, QStringLiteral("bench"), QStringLiteral("bench"), settings);
    const Timing timing{double(timer.nsecsElapsed()) / 1e9,
                        serverCpuSeconds(connection.database()) - cpu};
    if (!countLiveDuplicates(connection.database()).isEmpty() || outcome.done != 2 * kOrders)
        qFatal("the engine left duplicates");
    if (!verifyAuditChain(connection.database()).intact)
        qFatal("the engine's audit chain does not verify");
    return timing;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);
    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
    CompensationSettings settings;
    settings.batchSize = kBatch;

    // Rounds on fresh twin databases, the order alternating, so that neither side always
    // runs on a warmer server; the median round is the figure, the machine being shared.
    constexpr int kRounds = 5;
    QList<double> ratios;
    QList<double> cpuRatios;
    QList<double> baselineSeconds;
    QList<double> engineSeconds;
    out << "| round | baseline s | engine s | engine / baseline | server CPU s, baseline / engine "
           "| server CPU, engine / baseline |\n|---|---|---|---|---|---|\n";
    for (int round = 1; round <= kRounds; ++round) {
        const QString plain = QStringLiteral("plain%1").arg(round);
        const QString engine = QStringLiteral("engine%1").arg(round);
        prepare(server, plain);
        prepare(server, engine);
        Timing base;
        Timing eng;
        if (round % 2) {
            base = runBaseline(server, plain, settings);
            eng = runEngine(server, engine, settings);
        } else {
            eng = runEngine(server, engine, settings);
            base = runBaseline(server, plain, settings);
        }
        baselineSeconds << base.seconds;
        engineSeconds << eng.seconds;
        ratios << eng.seconds / base.seconds;
        cpuRatios << eng.serverCpu / base.serverCpu;
        out << "| " << round << " | " << QString::number(base.seconds, 'f', 2) << " | "
            << QString::number(eng.seconds, 'f', 2) << " | "
            << QString::number(ratios.last(), 'f', 2) << " | "
            << QString::number(base.serverCpu, 'f', 2) << " / "
            << QString::number(eng.serverCpu, 'f', 2) << " | "
            << QString::number(cpuRatios.last(), 'f', 2) << " |" << Qt::endl;
    }
    const double ratio = bench::median(ratios);
    out << "\nengine / baseline, median of " << kRounds
        << " rounds: " << QString::number(ratio, 'f', 2) << " (goal <= " << kGoal
        << "); server CPU, engine / baseline, median: "
        << QString::number(bench::median(cpuRatios), 'f', 2) << Qt::endl;
    out << "SUMMARY bench_compensate ratio=" << QString::number(ratio, 'f', 2)
        << " cpu_ratio=" << QString::number(bench::median(cpuRatios), 'f', 2)
        << " baseline_s=" << QString::number(bench::median(baselineSeconds), 'f', 2)
        << " engine_s=" << QString::number(bench::median(engineSeconds), 'f', 2)
        << " goal=" << kGoal << " met=" << (ratio <= kGoal ? 1 : 0) << Qt::endl;
    server.stop();
    return 0;
}
