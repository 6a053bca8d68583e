// bench_mapping: the duplicate watch on a team's own tables (through a mapping file) against
// the watch on payops's own tables, in one run on the same server and the same data: the
// incident database of the other benchmarks (testkit's bulkdata: 1 M orders, two coupons and
// a points row each, 5 % issued twice), and a copy of it in the team shop's schema
// (tests/data/teamshop/schema.sql: coupons in yuan keyed by a template code, points in a flow
// table). For each: the first pass, then refreshes after a few hundred new rows and one with
// nothing new (rows read by the server's own Handler_read counters, statements by its
// Questions counter, and the time). Reported as mapped / own.
//
//   bench_mapping [ORDERS]      (default: 1000000)

#include "bulkdata.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "db/sqlscript.h"
#include "domain/mapping/mappedwatch.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "lab/localserver.h"
#include "loadrun.h"
#include "privateserver.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTextStream>

using namespace payops;

namespace {

constexpr int kRounds = 3;
constexpr int kIdleRounds = 9;     // a refresh with nothing new takes a few ms: more rounds
constexpr qint64 kNewOrders = 100; // three rows each, and a tenth of them issued twice

const QString kBusiness = QStringLiteral("bench_shop");

// The team shop's coupons and points, without the gift cards the incident data has no
// counterpart of.
mapping::Mapping shopMapping()
{
    const QByteArray toml = QStringLiteral(R"([business]
database = "%1"

[orders]
table = "t_order"
id = "order_no"
user = "uid"
amount = "total"
amount_unit = "yuan"
status = "state"
created_at = "gmt_create"
[orders.states]
PENDING = 0
PAID = 1

[[side_effects]]
name = "coupon"
table = "t_coupon_grant"
id = "id"
order = "order_no"
user = "uid"
key = ["tpl_code"]
created_at = "gmt_create"
live = "status <> 'VOID'"
value = "face"
value_unit = "yuan"
compensate = "freeze"
freeze = "status = 'VOID'"

[[side_effects]]
name = "points"
table = "t_point_flow"
id = "id"
order = "biz_no"
user = "uid"
key = ["biz_type"]
created_at = "gmt_create"
live = "delta > 0"
value = "delta"
value_unit = "points"
compensate = "reverse"
reverse_set = { remark = "'payops reversal'" }
)")
                                .arg(kBusiness)
                                .toUtf8();
    return mapping::parseMapping(toml, QStringLiteral("bench"));
}

// The team's schema beside payops's database, filled from payops's tables row for row (ids
// kept), so that both watches count the same duplicates.
void copyToTeamSchema(const QSqlDatabase &db, const QString &own)
{
    QFile file(QStringLiteral(PAYOPS_SOURCE_DIR "/tests/data/teamshop/schema.sql"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    db::execDirect(db, QStringLiteral("CREATE DATABASE %1 CHARACTER SET utf8mb4").arg(kBusiness));
    db::execDirect(db, QStringLiteral("USE %1").arg(kBusiness));
    for (const QString &statement : db::splitSqlScript(QString::fromUtf8(file.readAll())))
        db::execDirect(db, statement);
    for (const QString &statement : {
             QStringLiteral("INSERT INTO t_order (order_no, uid, total, state, gmt_create, "
                            "pay_time) SELECT id, user_id, amount_fen / 100, 1, created_at, "
                            "paid_at FROM %1.orders"),
             QStringLiteral("INSERT INTO t_coupon_grant (id, order_no, uid, tpl_code, face, "
                            "status, gmt_create) SELECT id, order_id, user_id, CONCAT('T', "
                            "coupon_template_id), face_value_fen / 100, 'ISSUED', created_at "
                            "FROM %1.user_coupon"),
             QStringLiteral("INSERT INTO t_point_flow (id, biz_no, uid, biz_type, delta, "
                            "gmt_create) SELECT id, order_id, user_id, point_type, points, "
                            "created_at FROM %1.point_log"),
             QStringLiteral("ANALYZE TABLE t_order, t_coupon_grant, t_point_flow"),
         })
        db::execDirect(db, statement.arg(own));
    db::execDirect(db, QStringLiteral("USE %1").arg(own));
}

// New orders past the last, three rows each on both schemas, and a second copy of every tenth.
void addNewRows(const QSqlDatabase &db, const QString &own, qint64 orders)
{
    QStringList coupons, points, grants, flows;
    for (qint64 id = orders + 1; id <= orders + kNewOrders; ++id) {
        const int copies = id % 10 == 0 ? 2 : 1;
        for (int copy = 0; copy < copies; ++copy) {
            coupons << QStringLiteral("(1, %1, 1, 1000), (1, %1, 2, 500)").arg(id);
            points << QStringLiteral("(1, %1, 'PAY_REWARD', 100)").arg(id);
            grants << QStringLiteral("(%1, 1, 'T1', 10.00, 'ISSUED', NOW()), (%1, 1, 'T2', 5.00, "
                                     "'ISSUED', NOW())")
                          .arg(id);
            flows << QStringLiteral("(%1, 1, 'PAY_REWARD', 100, NOW())").arg(id);
        }
    }
    const QList<QPair<QString, QStringList>> inserts{
        {QStringLiteral("%1.user_coupon (user_id, order_id, coupon_template_id, face_value_fen)")
             .arg(own),
         coupons},
        {QStringLiteral("%1.point_log (user_id, order_id, point_type, points)").arg(own), points},
        {QStringLiteral("%1.t_coupon_grant (order_no, uid, tpl_code, face, status, gmt_create)")
             .arg(kBusiness),
         grants},
        {QStringLiteral("%1.t_point_flow (biz_no, uid, biz_type, delta, gmt_create)")
             .arg(kBusiness),
         flows},
    };
    for (const auto &[table, rows] : inserts)
        db::execDirect(
            db, QStringLiteral("INSERT INTO %1 VALUES %2").arg(table, rows.join(QLatin1Char(','))));
}

void resetWatches(const QSqlDatabase &db)
{
    for (const char *table :
         {"duplicate_watch_group", "duplicate_watch_total", "duplicate_watch_gap",
          "mapped_watch_group", "mapped_watch_total", "mapped_watch_gap", "mapped_watch_state"})
        db::execDirect(db, QStringLiteral("TRUNCATE TABLE %1").arg(QLatin1String(table)));
    db::execDirect(
        db, QStringLiteral(
                "UPDATE duplicate_watch_state SET scan_state = 'NEW', open_orders = 0, "
                "coupon_seen_id = 0, point_seen_id = 0, compensation_seen_id = 0 WHERE id = 1"));
    db::execDirect(db, QStringLiteral("UPDATE mapped_watch_summary SET open_orders = 0"));
}

struct Cost
{
    double ms = 0;
    qint64 rows = 0;
    qint64 statements = 0;
};

// Statements the server ran for this session (its Questions counter): the round trips a
// refresh costs, which weigh in its time on a loaded server as much as the rows it reads.
qint64 sessionStatements(const QSqlDatabase &db)
{
    return db::scalar(db, QStringLiteral("SELECT VARIABLE_VALUE FROM "
                                         "information_schema.SESSION_STATUS WHERE "
                                         "VARIABLE_NAME = 'QUESTIONS'"))
        .toLongLong();
}

QString ratio(qint64 mapped, qint64 own)
{
    return QString::number(double(mapped) / double(own), 'f', 2);
}

template <typename Refresh> Cost measure(const QSqlDatabase &db, Refresh refresh)
{
    const qint64 statementsBefore = sessionStatements(db);
    const qint64 before = bench::sessionRowsRead(db);
    QElapsedTimer clock;
    clock.start();
    refresh();
    Cost cost;
    cost.ms = double(clock.nsecsElapsed()) / 1e6;
    cost.rows = bench::sessionRowsRead(db) - before;
    // Less the two statements of the counters themselves.
    cost.statements = sessionStatements(db) - statementsBefore - 2;
    return cost;
}

// Both watches' refreshes, `rounds` times, alternating which goes first, each round after
// `prepare(round)`: the median ratio of the times, the times of every round, and the costs of
// the last.
struct Comparison
{
    Cost own;
    Cost mapped;
    double medianRatio = 0;
    QString rounds; // "own/mapped, ..." in ms
};

template <typename Prepare>
Comparison compare(const QSqlDatabase &db, const mapping::Mapping &mapping, int rounds,
                   Prepare prepare)
{
    Comparison comparison;
    QList<double> ratios;
    QStringList times;
    for (int round = 0; round < rounds; ++round) {
        prepare(round);
        const auto runOwn = [&] {
            comparison.own = measure(db, [&] { refreshDuplicateWatch(db); });
        };
        const auto runMapped = [&] {
            comparison.mapped = measure(db, [&] { mapping::refreshMappedWatch(db, mapping); });
        };
        if (round % 2) {
            runMapped();
            runOwn();
        } else {
            runOwn();
            runMapped();
        }
        ratios << comparison.mapped.ms / comparison.own.ms;
        times << QStringLiteral("%1/%2")
                     .arg(comparison.own.ms, 0, 'f', 1)
                     .arg(comparison.mapped.ms, 0, 'f', 1);
    }
    comparison.medianRatio = bench::median(ratios);
    comparison.rounds = times.join(QStringLiteral(", "));
    return comparison;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const qint64 orders = argc > 1 ? QByteArray(argv[1]).toLongLong() : 1000000;
    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
    const QString own = QStringLiteral("bench_payops");
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(),
                       QStringLiteral("SET GLOBAL innodb_buffer_pool_size = 2147483648"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + own);
    }
    db::Connection connection(server.rootDsn(own), QStringLiteral("bench"));
    const QSqlDatabase db = connection.database();
    db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
    QTextStream(stderr) << "generating " << orders << " orders, twice ..." << Qt::endl;
    bench::generateIncidentOrders(db, orders);
    copyToTeamSchema(db, own);
    const mapping::Mapping mapping = shopMapping();

    // First passes on emptied watches.
    const Comparison first = compare(db, mapping, kRounds, [&](int) { resetWatches(db); });
    const DuplicateWatchFigures ownFigures = readDuplicateWatch(db);
    const mapping::MappedWatchFigures mappedFigures = mapping::readMappedWatch(db, mapping);
    if (!mappedFigures.complete() ||
        mappedFigures.groups() != ownFigures.groups(CouponBit) + ownFigures.groups(PointsBit))
        qFatal("the mapped watch counts %lld groups, the own %lld",
               static_cast<long long>(mappedFigures.groups()),
               static_cast<long long>(ownFigures.groups(CouponBit) + ownFigures.groups(PointsBit)));

    // Refreshes after new orders, then refreshes with nothing new, as a timer runs them.
    const Comparison refresh = compare(
        db, mapping, kRounds, [&](int round) { addNewRows(db, own, orders + round * kNewOrders); });
    const qint64 newRows = 3 * (kNewOrders + kNewOrders / 10);
    if (mapping::readMappedWatch(db, mapping).groups() !=
        mappedFigures.groups() + kRounds * kNewOrders / 10 * 3)
        qFatal("the refresh missed new duplicates");
    const Comparison idle = compare(db, mapping, kIdleRounds, [](int) {});

    QTextStream out(stdout);
    out << "| | own tables | mapped tables | mapped / own |\n|---|---|---|---|\n"
        << "| first pass ms, rounds own/mapped " << first.rounds << " | " << qRound(first.own.ms)
        << " | " << qRound(first.mapped.ms) << " | " << QString::number(first.medianRatio, 'f', 2)
        << " (median) |\n"
        << "| first pass rows read | " << first.own.rows << " | " << first.mapped.rows << " | "
        << ratio(first.mapped.rows, first.own.rows) << " |\n"
        << "| refresh after " << newRows << " new rows, ms, rounds own/mapped " << refresh.rounds
        << " | " << QString::number(refresh.own.ms, 'f', 1) << " | "
        << QString::number(refresh.mapped.ms, 'f', 1) << " | "
        << QString::number(refresh.medianRatio, 'f', 2) << " (median) |\n"
        << "| refresh rows read | " << refresh.own.rows << " | " << refresh.mapped.rows << " | "
        << ratio(refresh.mapped.rows, refresh.own.rows) << " |\n"
        << "| refresh statements | " << refresh.own.statements << " | " << refresh.mapped.statements
        << " | " << ratio(refresh.mapped.statements, refresh.own.statements) << " |\n"
        << "| idle refresh ms, rounds own/mapped " << idle.rounds << " | "
        << QString::number(idle.own.ms, 'f', 1) << " | " << QString::number(idle.mapped.ms, 'f', 1)
        << " | " << QString::number(idle.medianRatio, 'f', 2) << " (median) |\n"
        << "| idle refresh rows read, statements | " << idle.own.rows << ", " << idle.own.statements
        << " | " << idle.mapped.rows << ", " << idle.mapped.statements << " | "
        << ratio(idle.mapped.rows, idle.own.rows) << " |" << Qt::endl;
    out << "\nSUMMARY bench_mapping orders=" << orders
        << " first_pass_ratio=" << QString::number(first.medianRatio, 'f', 2)
        << " first_pass_rows_ratio=" << ratio(first.mapped.rows, first.own.rows)
        << " refresh_ms_ratio=" << QString::number(refresh.medianRatio, 'f', 2)
        << " refresh_rows_ratio=" << ratio(refresh.mapped.rows, refresh.own.rows)
        << " refresh_statements_ratio=" << ratio(refresh.mapped.statements, refresh.own.statements)
        << " idle_ms_ratio=" << QString::number(idle.medianRatio, 'f', 2)
        << " idle_rows_ratio=" << ratio(idle.mapped.rows, idle.own.rows) << " new_rows=" << newRows
        << Qt::endl;
    server.stop();
    return 0;
}
