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
#include "log/application.h"
#include "log/logging.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTextStream>

using namespace payops;

namespace {

constexpr int kRounds = 3;
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

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    setApplicationIdentity();
    setupLogging(QStringLiteral("bench"), 4);
    const qint64 orders = argc > 1 ? QByteArray(argv[1]).toLongLong() : 1000000;
    QTemporaryDir dir(QStringLiteral("/tmp/payops-bench-XXXXXX"));
    LocalServer server(dir.path());
    server.start();
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

    // First passes, alternating which goes first, on emptied watches; the median ratio.
    QList<double> firstRatios;
    QStringList rounds;
    Cost ownFirst, mappedFirst;
    for (int round = 0; round < kRounds; ++round) {
        resetWatches(db);
        const auto runOwn = [&] { ownFirst = measure(db, [&] { refreshDuplicateWatch(db); }); };
        const auto runMapped = [&] {
            mappedFirst = measure(db, [&] { mapping::refreshMappedWatch(db, mapping); });
        };
        if (round % 2) {
            runMapped();
            runOwn();
        } else {
            runOwn();
            runMapped();
        }
        firstRatios << mappedFirst.ms / ownFirst.ms;
        rounds << QStringLiteral("%1/%2").arg(qRound(ownFirst.ms)).arg(qRound(mappedFirst.ms));
    }
    const DuplicateWatchFigures ownFigures = readDuplicateWatch(db);
    const mapping::MappedWatchFigures mappedFigures = mapping::readMappedWatch(db, mapping);
    if (!mappedFigures.complete() ||
        mappedFigures.groups() != ownFigures.groups(CouponBit) + ownFigures.groups(PointsBit))
        qFatal("the mapped watch counts %lld groups, the own %lld",
               static_cast<long long>(mappedFigures.groups()),
               static_cast<long long>(ownFigures.groups(CouponBit) + ownFigures.groups(PointsBit)));

    // Refreshes after new rows, three rounds of new orders, alternating which goes first: the
    // median ratio of the times, the rows and statements of the last round; then one refresh
    // with nothing new, as a timer runs it.
    QList<double> refreshRatios;
    QStringList refreshRounds;
    Cost ownRefresh, mappedRefresh;
    for (int round = 0; round < kRounds; ++round) {
        addNewRows(db, own, orders + round * kNewOrders);
        const auto runOwn = [&] { ownRefresh = measure(db, [&] { refreshDuplicateWatch(db); }); };
        const auto runMapped = [&] {
            mappedRefresh = measure(db, [&] { mapping::refreshMappedWatch(db, mapping); });
        };
        if (round % 2) {
            runMapped();
            runOwn();
        } else {
            runOwn();
            runMapped();
        }
        refreshRatios << mappedRefresh.ms / ownRefresh.ms;
        refreshRounds << QStringLiteral("%1/%2")
                             .arg(ownRefresh.ms, 0, 'f', 1)
                             .arg(mappedRefresh.ms, 0, 'f', 1);
    }
    const qint64 newRows = 3 * (kNewOrders + kNewOrders / 10);
    if (mapping::readMappedWatch(db, mapping).groups() !=
        mappedFigures.groups() + kRounds * kNewOrders / 10 * 3)
        qFatal("the refresh missed new duplicates");
    const Cost ownIdle = measure(db, [&] { refreshDuplicateWatch(db); });
    const Cost mappedIdle = measure(db, [&] { mapping::refreshMappedWatch(db, mapping); });

    QTextStream out(stdout);
    out << "| | own tables | mapped tables | mapped / own |\n|---|---|---|---|\n"
        << "| first pass ms, rounds own/mapped " << rounds.join(QStringLiteral(", ")) << " | "
        << qRound(ownFirst.ms) << " | " << qRound(mappedFirst.ms) << " | "
        << QString::number(bench::median(firstRatios), 'f', 2) << " (median) |\n"
        << "| first pass rows read | " << ownFirst.rows << " | " << mappedFirst.rows << " | "
        << ratio(mappedFirst.rows, ownFirst.rows) << " |\n"
        << "| refresh after " << newRows << " new rows, ms, rounds own/mapped "
        << refreshRounds.join(QStringLiteral(", ")) << " | "
        << QString::number(ownRefresh.ms, 'f', 1) << " | "
        << QString::number(mappedRefresh.ms, 'f', 1) << " | "
        << QString::number(bench::median(refreshRatios), 'f', 2) << " (median) |\n"
        << "| refresh rows read | " << ownRefresh.rows << " | " << mappedRefresh.rows << " | "
        << ratio(mappedRefresh.rows, ownRefresh.rows) << " |\n"
        << "| refresh statements | " << ownRefresh.statements << " | " << mappedRefresh.statements
        << " | " << ratio(mappedRefresh.statements, ownRefresh.statements) << " |\n"
        << "| idle refresh: ms, rows read, statements | "
        << QStringLiteral("%1, %2, %3")
               .arg(ownIdle.ms, 0, 'f', 1)
               .arg(ownIdle.rows)
               .arg(ownIdle.statements)
        << " | "
        << QStringLiteral("%1, %2, %3")
               .arg(mappedIdle.ms, 0, 'f', 1)
               .arg(mappedIdle.rows)
               .arg(mappedIdle.statements)
        << " | rows " << ratio(mappedIdle.rows, ownIdle.rows) << " |" << Qt::endl;
    out << "\nSUMMARY bench_mapping orders=" << orders
        << " first_pass_ratio=" << QString::number(bench::median(firstRatios), 'f', 2)
        << " first_pass_rows_ratio=" << ratio(mappedFirst.rows, ownFirst.rows)
        << " refresh_ms_ratio=" << QString::number(bench::median(refreshRatios), 'f', 2)
        << " refresh_rows_ratio=" << ratio(mappedRefresh.rows, ownRefresh.rows)
        << " refresh_statements_ratio=" << ratio(mappedRefresh.statements, ownRefresh.statements)
        << " idle_rows_ratio=" << ratio(mappedIdle.rows, ownIdle.rows) << " new_rows=" << newRows
        << Qt::endl;
    server.stop();
    return 0;
}
