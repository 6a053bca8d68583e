// bench_callbacks: record-only mode against the disk, and the endpoint against its own SQL.
//
// On one private MariaDB with the sandbox's settings, and then on a second one with
// production's durability (every commit flushed to disk, binary log on and synced), it
// measures over HTTP keep-alive, every callback a new pay_no:
//
// - RECORD_ONLY at 8, 32 and 256 clients against a raw insert baseline in the same run: as
//   many connections as clients, each inserting rows of pay_callback_log's shape (the same
//   columns the endpoint writes), one autocommit INSERT a row, no HTTP;
// - NORMAL at 32 clients against its own SQL (the safe pipeline's statements run in-process
//   by plain threads), three pairs alternating which goes first; the median is the figure.
//
// On the first server it then offers RECORD_ONLY a storm of three times what it absorbed, on
// a schedule that does not wait for answers, for ten seconds: every request must be answered
// (2xx or 503), every 2xx's pay_no must be in pay_callback_log, and the endpoint's resident
// memory is read before, during and after. Before all that, on the same server, two runs at 8
// clients measure NORMAL with and without an attacker holding 500 idle and 50 slowly dripping
// connections open, and five alternating pairs measure it without and with a console open on
// the overview and the state machine, refreshing every second (the duplicate watch's refresh
// included).
//
// It ends with one SUMMARY line (bench/README.md names its keys). It stops at once when a run's
// callbacks were not all handled as expected, and exits 1 when the storm left a request
// unanswered, answered otherwise than 2xx or 503, or a 2xx unrecorded.

#include "bulkdata.h"
#include "callbackfixture.h"
#include "console/backlog.h"
#include "console/databasesummary.h"
#include "console/instances.h"
#include "console/overview.h"
#include "console/statemachine.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "domain/callback/channel.h"
#include "domain/callback/paymentapplier.h"
#include "domain/callback/safehandler.h"
#include "domain/callback/signature.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "lab/localserver.h"
#include "loadrun.h"
#include "log/application.h"
#include "log/logging.h"
#include "rawhttp.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QSet>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <thread>

using namespace payops;

namespace {

// Callbacks a measured run sends unless REQUESTS says otherwise (bench::requestsPerRun).
constexpr int kDefaultRequests = 3000;
const QList<int> kConcurrency{8, 32, 256};
constexpr int kPairs = 3;         // NORMAL and its SQL at 32 clients, alternating
constexpr int kStormSeconds = 10; // the storm's length
// Each connection carries one request at a time, so the connections bound what can be offered:
// rate x the endpoint's latency under the storm. 512 offered about 7,000 a second at 74 ms.
constexpr int kStormConnections = 2048;
constexpr int kStormTimeoutSeconds = 10; // no answer within it: a hang
constexpr int kConsolePairs = 5;         // NORMAL at 8 clients without and with a console
// The endpoint's database workers, as the earlier figures ran it.
const QString kThreads = QStringLiteral("32");

// One run's deliveries of orders no earlier run has handled: `unique` callbacks, and with
// resends after every tenth-of-three a resend of a recent one (30 % duplicates, arriving close
// to their originals, as the attack and console runs have always measured).
struct Workload
{
    qint64 first = 0;
    int unique = 0;
    std::vector<QByteArray> bodies;
};

Workload workload(qint64 &nextOrder, int unique, bool resends = false)
{
    Workload run{nextOrder, unique, {}};
    const auto body = [](qint64 order) {
        return test::callbackBody("B-" + QByteArray::number(order), order, 9900);
    };
    for (int i = 0; i < unique; ++i) {
        run.bodies.push_back(body(run.first + i));
        if (resends && i % 10 < 3)
            run.bodies.push_back(body(run.first + std::max(0, i - 2)));
    }
    nextOrder += unique;
    return run;
}

// PENDING orders for a run that pays them, spread over 1,000 users so that one hot balance
// row does not serialise the run.
void addOrders(const QSqlDatabase &db, const Workload &run)
{
    for (int start = 0; start < run.unique; start += 1000)
        db::exec(db,
                 QStringLiteral("INSERT INTO orders (id, user_id, amount_fen) SELECT ? + seq.n, "
                                "1 + MOD(? + seq.n, 1000), 9900 FROM "
                                "(SELECT a.d + 10 * b.d + 100 * c.d AS n FROM "
                                "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL "
                                "SELECT 3 UNION ALL SELECT 4 "
                                "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 "
                                "UNION ALL SELECT 8 UNION ALL SELECT 9) a, "
                                "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL "
                                "SELECT 3 UNION ALL SELECT 4 "
                                "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 "
                                "UNION ALL SELECT 8 UNION ALL SELECT 9) b, "
                                "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL "
                                "SELECT 3 UNION ALL SELECT 4 "
                                "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 "
                                "UNION ALL SELECT 8 UNION ALL SELECT 9) c) seq WHERE seq.n < ?"),
                 {run.first + start, start, std::min(1000, run.unique - start)});
}

// The bench's database on a fresh server: the schema, two coupon templates, a points rule and
// 1,000 users; orders come with the runs that pay them.
void prepareDatabase(const LocalServer &server, const Dsn &dsn)
{
    db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
    db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE %1").arg(dsn.database));
    db::Connection connection(dsn, QStringLiteral("setup"));
    const QSqlDatabase db = connection.database();
    db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
    db::execDirect(db, QStringLiteral("INSERT INTO coupon_template (id, face_value_fen, "
                                      "active) VALUES (1, 1000, 1), (2, 500, 1)"));
    db::execDirect(
        db,
        QStringLiteral("INSERT INTO point_rule (point_type, points) VALUES ('PAY_REWARD', 100)"));
    db::execDirect(
        db, QStringLiteral("INSERT INTO users (id) SELECT 1 + a.d + 10 * b.d + 100 * c.d FROM "
                           "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT "
                           "3 UNION ALL SELECT 4 "
                           "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL "
                           "SELECT 8 UNION ALL SELECT 9) a, "
                           "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT "
                           "3 UNION ALL SELECT 4 "
                           "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL "
                           "SELECT 8 UNION ALL SELECT 9) b, "
                           "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT "
                           "3 UNION ALL SELECT 4 "
                           "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL "
                           "SELECT 8 UNION ALL SELECT 9) c"));
}

// A run whose orders were not all handled as `status` measured something else (a resend of
// paid orders is answered without a transaction, several times faster): the benchmark stops.
void expectHandled(const QSqlDatabase &db, const Workload &run, const QString &status)
{
    const qint64 handled =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE order_id >= ? AND "
                                  "order_id < ? AND status = ?"),
                   {run.first, run.first + run.unique, status})
            .toLongLong();
    if (handled != run.unique)
        qFatal("a run handled %lld of its %d orders as %s", static_cast<long long>(handled),
               run.unique, qPrintable(status));
}

// Flips the switch and waits until the endpoint says it applies it.
void setMode(const QSqlDatabase &db, CallbackMode mode)
{
    const qint64 version = flipSwitch(db, mode, QStringLiteral("bench")).after.version;
    waitForAcknowledgement(db, version, 5000);
}

// The raw insert baseline: what the disk and the server allow for recording callbacks. Each
// client is one connection inserting one row per callback, in autocommit, with the columns
// the endpoint's record-only insert writes (its signed headers too), through a statement
// prepared once: one round trip and one commit a row, and nothing else.
struct RawInserter
{
    Dsn dsn;
    QByteArray secret;
    struct Client
    {
        std::unique_ptr<db::Connection> connection;
        std::unique_ptr<QSqlQuery> insert;
    };
    Client makeClient() const
    {
        Client client;
        client.connection = std::make_unique<db::Connection>(dsn, QStringLiteral("raw-insert"));
        client.insert = std::make_unique<QSqlQuery>(client.connection->database());
        if (!client.insert->prepare(QStringLiteral(
                "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, raw_headers, "
                "wire_format, body_sha256, amount_fen, currency, channel, trade_status, status, "
                "response_code, response_body, instance, platform_paid_at, gateway) VALUES "
                "(?, ?, ?, ?, 'payops', ?, ?, ?, ?, ?, 'RECORDED', ?, ?, 'raw-insert', ?, 0)")))
            qFatal("cannot prepare the raw insert");
        return client;
    }
    bool operator()(Client &client, const QByteArray &payload) const
    {
        QString error;
        const auto request = CallbackRequest::parse(payload, &error);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        const QByteArray headers =
            joinHeaders({{"Content-Type", "application/json"},
                         {"X-Payops-Timestamp", QByteArray::number(now)},
                         {"X-Payops-Signature", signatureHeader(secret, now, payload)}});
        const CallbackAnswer answer = CallbackAnswer::success(Outcome::Recorded);
        QSqlQuery &insert = *client.insert;
        const QVariantList values{
            request->payNo,
            request->orderId,
            request->rawBody,
            QString::fromUtf8(headers),
            QString::fromLatin1(
                QCryptographicHash::hash(request->rawBody, QCryptographicHash::Sha256).toHex()),
            request->amountFen,
            request->currency,
            request->channel,
            request->tradeStatus,
            answer.httpStatus,
            QString::fromUtf8(answer.body),
            platformPaidAt(request->paidAt)};
        for (int i = 0; i < values.size(); ++i)
            insert.bindValue(i, values[i]);
        return insert.exec();
    }
};

// The baseline: the same statements the service's safe pipeline sends (handler + trace),
// straight from a plain client thread.
struct DirectSender
{
    Dsn dsn;
    QString fromState;
    SwitchObserver *switchObserver;
    struct Client
    {
        std::unique_ptr<db::Connection> connection;
        std::unique_ptr<SafeHandler> handler;
    };
    Client makeClient() const
    {
        Client client;
        client.connection = std::make_unique<db::Connection>(dsn, QStringLiteral("baseline"));
        client.handler = std::make_unique<SafeHandler>(QStringLiteral("baseline"), fromState,
                                                       *switchObserver, 5);
        return client;
    }
    bool operator()(Client &client, const QByteArray &payload) const
    {
        QString error;
        const auto request = CallbackRequest::parse(payload, &error);
        CallbackTrace trace;
        trace.payNo = request->payNo;
        trace.orderId = request->orderId;
        trace.received = nowMicros();
        const QSqlDatabase db = client.connection->database();
        const CallbackAnswer answer = client.handler->handle(db, *request, trace);
        trace.responded = nowMicros();
        writeTrace(db, trace);
        return answer.httpStatus == 200;
    }
};

// A console left open on the overview and the state machine with a refresh period of one
// second: the reads its timers run, on a connection and a thread of their own. It opens (and
// reads its windows for the first time) once; it refreshes while active, and counts the rows
// each kind of read costs by the server's Handler_read% counters.
class RefreshingConsole
{
public:
    explicit RefreshingConsole(const Dsn &dsn)
        : m_thread([this, dsn] { run(dsn); })
    {
        while (!m_opened.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ~RefreshingConsole()
    {
        m_stop.store(true);
        m_thread.join();
    }
    // Refreshing every second from now on. The first refresh reads what was written while the
    // console was stopped; it is waited for and not counted, so that what is measured is a
    // console that has been open all along, reading only what each second adds.
    void start()
    {
        m_refreshes.store(0);
        m_busyMicros.store(0);
        for (auto &rows : m_rows)
            rows.store(0);
        m_caughtUp.store(false);
        m_active.store(true);
        while (!m_caughtUp.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    void stop() { m_active.store(false); }
    QString report() const
    {
        const int n = std::max(1, m_refreshes.load());
        QStringList parts;
        for (size_t i = 0; i < kSteps.size(); ++i)
            parts
                << QStringLiteral("%1 %2").arg(QLatin1String(kSteps[i])).arg(m_rows[i].load() / n);
        return QStringLiteral("%1 refreshes, rows each: %2; %3 ms each")
            .arg(m_refreshes.load())
            .arg(parts.join(QStringLiteral(", ")))
            .arg(double(m_busyMicros.load()) / 1000.0 / n, 0, 'f', 1);
    }

private:
    static constexpr std::array<const char *, 5> kSteps{"overview", "last hour", "backlog",
                                                        "instances", "state machine"};

    void run(const Dsn &dsn)
    {
        try {
            refreshLoop(dsn);
        } catch (const db::Error &error) {
            qFatal("the console's refresh failed: %s", error.what());
        }
    }

    void refreshLoop(const Dsn &dsn)
    {
        db::Connection connection(dsn, QStringLiteral("console"));
        const QSqlDatabase db = connection.database();
        console::ActivityTally lastHour(console::kRecentActivitySeconds);
        console::ActivityTally stateMachine(3600);
        console::OverviewTallies overview;
        console::BacklogTally backlog;
        const std::array<std::function<void()>, 5> steps{
            [&db, &overview] {
                console::loadDatabaseSummary(db);
                console::loadOverview(db, overview, 100);
            },
            [&db, &lastHour] { lastHour.advance(db); },
            [&db, &backlog] { console::loadBacklogSummary(db, backlog); },
            [&db] { console::loadInstances(db); },
            [&db, &stateMachine] { console::loadStateMachine(db, stateMachine); }};
        for (const auto &step : steps)
            step();
        m_opened.store(true);
        while (!m_stop.load()) {
            const auto started = std::chrono::steady_clock::now();
            if (m_active.load() && !m_caughtUp.load()) {
                for (const auto &step : steps)
                    step();
                m_caughtUp.store(true);
            } else if (m_active.load()) {
                for (size_t i = 0; i < steps.size(); ++i) {
                    const qint64 before = bench::sessionRowsRead(db);
                    steps[i]();
                    m_rows[i] += bench::sessionRowsRead(db) - before;
                }
                m_busyMicros += std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - started)
                                    .count();
                ++m_refreshes;
            }
            while (!m_stop.load() &&
                   std::chrono::steady_clock::now() < started + std::chrono::seconds(1))
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_opened{false};
    std::atomic<bool> m_active{false};
    std::atomic<bool> m_caughtUp{false};
    std::atomic<int> m_refreshes{0};
    std::array<std::atomic<qint64>, 5> m_rows{};
    std::atomic<qint64> m_busyMicros{0};
    std::thread m_thread;
};

// One private MariaDB with the bench's database, and payops-callbackd on it. Every client of
// the bench comes from 127.0.0.1, so the endpoint's per-address share (250 of its 4,000
// connections by default) is lifted, as behind a proxy; its other limits are the defaults.
class BenchServer
{
public:
    BenchServer(const QStringList &serverOptions, QTextStream &out)
        : m_dir(QStringLiteral("/tmp/payops-bench-XXXXXX"))
        , m_server(m_dir.path())
    {
        out << "starting a private MariaDB in " << m_dir.path() << Qt::endl;
        m_server.start(0, {}, serverOptions);
        m_dsn = m_server.rootDsn(QStringLiteral("bench"));
        prepareDatabase(m_server, m_dsn);
        m_operator = std::make_unique<db::Connection>(m_dsn, QStringLiteral("operator"));
        QSqlQuery settings =
            db::exec(db(), QStringLiteral("SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog, "
                                          "@@log_bin, @@max_connections"));
        settings.next();
        out << "server: innodb_flush_log_at_trx_commit=" << settings.value(0).toInt()
            << " sync_binlog=" << settings.value(1).toInt()
            << " log_bin=" << settings.value(2).toInt()
            << " max_connections=" << settings.value(3).toInt() << Qt::endl;
        m_endpoint = std::make_unique<test::CallbackdProcess>(
            m_dsn, QStringLiteral("safe"), QString(),
            QStringList{QStringLiteral("--threads"), kThreads,
                        QStringLiteral("--max-connections-per-ip"), QStringLiteral("0"),
                        QStringLiteral("--log-level"), QStringLiteral("error")});
        m_direct = std::make_unique<DirectSender>(
            DirectSender{m_dsn, paymentFromState(db()), &m_baselineSwitch});
    }
    ~BenchServer()
    {
        m_endpoint.reset();
        m_operator.reset();
        m_server.stop();
    }

    const Dsn &dsn() const { return m_dsn; }
    QSqlDatabase db() const { return m_operator->database(); }
    const test::CallbackdProcess &endpoint() const { return *m_endpoint; }
    bench::SignedPoster http() const { return {m_endpoint->port(), test::testSecret()}; }
    RawInserter raw() const { return {m_dsn, test::testSecret()}; }
    const DirectSender &direct() const { return *m_direct; }
    Workload next(int unique, bool resends = false)
    {
        return workload(m_nextOrder, unique, resends);
    }

    // Sends the run's callbacks from `clients` threads and checks that each was handled as
    // `status`.
    template <typename Send>
    bench::RunResult measure(int clients, const Workload &run, const Send &send,
                             const QString &status) const
    {
        const bench::RunResult result = bench::drive(
            clients, run.bodies, send,
            {QCoreApplication::applicationPid(), m_endpoint->pid(), m_server.status().pid});
        expectHandled(db(), run, status);
        return result;
    }

private:
    QTemporaryDir m_dir;
    LocalServer m_server;
    Dsn m_dsn;
    std::unique_ptr<db::Connection> m_operator;
    std::unique_ptr<test::CallbackdProcess> m_endpoint;
    SwitchObserver m_baselineSwitch;
    std::unique_ptr<DirectSender> m_direct;
    qint64 m_nextOrder = 1000000;
};

const QString kRecorded = QStringLiteral("RECORDED");
const QString kProcessed = QStringLiteral("PROCESSED");
constexpr int kNameWidth = 36;

// What one server's runs measured, and the ratios the goals are about.
struct Figures
{
    std::map<int, bench::RunResult> raw, recordOnly; // by clients
    std::vector<double> normal32, sqlRatios32;       // per pair at 32 clients

    double roOverRaw(int clients) const
    {
        return recordOnly.at(clients).throughput() / raw.at(clients).throughput();
    }
    double normalMedian() const { return bench::median(normal32); }
    double roOverNormal() const { return recordOnly.at(32).throughput() / normalMedian(); }
    double roP99Ms() const { return recordOnly.at(32).percentile(0.99) * 1000; }
    double absorbed() const
    {
        double most = 0;
        for (const auto &[clients, result] : recordOnly)
            most = std::max(most, result.throughput());
        return most;
    }
    QStringList summary(const QString &prefix) const
    {
        QStringList keys;
        for (int clients : kConcurrency)
            keys << QStringLiteral("%1ro_raw%2=%3")
                        .arg(prefix)
                        .arg(clients)
                        .arg(roOverRaw(clients), 0, 'f', 2);
        keys << QStringLiteral("%1ro_normal32=%2").arg(prefix).arg(roOverNormal(), 0, 'f', 2)
             << QStringLiteral("%1ro_p99_32_ms=%2").arg(prefix).arg(roP99Ms(), 0, 'f', 1)
             << QStringLiteral("%1normal_sql32_median=%2")
                    .arg(prefix)
                    .arg(bench::median(sqlRatios32), 0, 'f', 2)
             << QStringLiteral("%1raw32_per_s=%2")
                    .arg(prefix)
                    .arg(raw.at(32).throughput(), 0, 'f', 0)
             << QStringLiteral("%1ro32_per_s=%2")
                    .arg(prefix)
                    .arg(recordOnly.at(32).throughput(), 0, 'f', 0)
             << QStringLiteral("%1normal32_per_s=%2").arg(prefix).arg(normalMedian(), 0, 'f', 0);
        return keys;
    }
};

// "a / b / c = total" in microseconds per request, of the run's watched processes.
QString cpuPerCallback(const bench::RunResult &run)
{
    QStringList parts;
    double total = 0;
    for (double seconds : run.cpuSeconds) {
        parts << QString::number(seconds * 1e6 / run.requests, 'f', 0);
        total += seconds;
    }
    return parts.join(QStringLiteral(" / ")) + QStringLiteral(" = ") +
           QString::number(total * 1e6 / run.requests, 'f', 0);
}

// RECORD_ONLY against the raw insert at each concurrency, the raw insert first.
void measureRecordOnly(BenchServer &server, int requests, Figures &figures, QTextStream &out)
{
    setMode(server.db(), CallbackMode::RecordOnly);
    for (int clients : kConcurrency) {
        figures.raw[clients] =
            server.measure(clients, server.next(requests), server.raw(), kRecorded);
        figures.recordOnly[clients] =
            server.measure(clients, server.next(requests), server.http(), kRecorded);
        out << figures.raw[clients].row(QStringLiteral("%1 clients, raw insert").arg(clients),
                                        kNameWidth)
            << '\n'
            << figures.recordOnly[clients].row(
                   QStringLiteral("%1 clients, service RECORD_ONLY").arg(clients), kNameWidth)
            << Qt::endl;
    }
    // Where the two cores went: what a callback cost the clients (this process), the endpoint
    // and the server, in CPU time, against what a raw insert cost the same three.
    out << "\nCPU per callback, µs: clients (this process) / endpoint / server = total\n";
    for (int clients : kConcurrency)
        out << QStringLiteral("%1 clients: raw insert %2, RECORD_ONLY %3\n")
                   .arg(clients)
                   .arg(cpuPerCallback(figures.raw[clients]),
                        cpuPerCallback(figures.recordOnly[clients]));
    out << Qt::endl;
}

// NORMAL against its own SQL at 32 clients, kPairs pairs, each other pair NORMAL first.
void measureNormal(BenchServer &server, int requests, Figures &figures, QTextStream &out)
{
    setMode(server.db(), CallbackMode::Normal);
    for (int pair = 0; pair < kPairs; ++pair) {
        const Workload sqlRun = server.next(requests);
        const Workload normalRun = server.next(requests);
        addOrders(server.db(), sqlRun);
        addOrders(server.db(), normalRun);
        bench::RunResult sql, normal;
        if (pair % 2 == 0) {
            sql = server.measure(32, sqlRun, server.direct(), kProcessed);
            normal = server.measure(32, normalRun, server.http(), kProcessed);
        } else {
            normal = server.measure(32, normalRun, server.http(), kProcessed);
            sql = server.measure(32, sqlRun, server.direct(), kProcessed);
        }
        out << sql.row(QStringLiteral("32 clients, its SQL (pair %1)").arg(pair + 1), kNameWidth)
            << '\n'
            << normal.row(QStringLiteral("32 clients, service NORMAL (pair %1)").arg(pair + 1),
                          kNameWidth)
            << Qt::endl;
        figures.normal32.push_back(normal.throughput());
        figures.sqlRatios32.push_back(normal.throughput() / sql.throughput());
    }
}

// The storm: three times what RECORD_ONLY absorbed, offered on a schedule for kStormSeconds.
struct StormFigures
{
    double absorbed = 0;
    bench::OfferResult offered;
    int answered2xx = 0, answered503 = 0, other = 0, unanswered = 0, lost = 0;
    double rssBeforeMb = 0, rssPeakMb = 0, rssAfterMb = 0, hwmMb = 0;

    bool failed() const { return other > 0 || unanswered > 0 || lost > 0; }
};

StormFigures measureStorm(BenchServer &server, double absorbed, QTextStream &out)
{
    setMode(server.db(), CallbackMode::RecordOnly);
    StormFigures storm;
    storm.absorbed = absorbed;
    const double rate = 3 * absorbed;
    const Workload run = server.next(int(rate * kStormSeconds));
    const qint64 pid = server.endpoint().pid();
    const auto mb = [](qint64 kib) { return double(kib) / 1024; };
    storm.rssBeforeMb = mb(test::residentKiB(pid));
    std::atomic<bool> stop{false};
    std::atomic<qint64> peak{test::residentKiB(pid)};
    std::thread sampler([&] {
        while (!stop.load()) {
            peak.store(std::max(peak.load(), test::residentKiB(pid)));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    bench::SignedPoster poster = server.http();
    poster.timeoutSeconds = kStormTimeoutSeconds;
    storm.offered = bench::offer(poster, run.bodies, rate, kStormConnections);
    // What the endpoint holds once the storm has passed, not while it still lets go of it.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop.store(true);
    sampler.join();
    storm.rssPeakMb = mb(peak.load());
    storm.rssAfterMb = mb(test::residentKiB(pid));
    storm.hwmMb = mb(test::peakResidentKiB(pid));

    storm.answered2xx = storm.offered.count(200, 299);
    storm.answered503 = storm.offered.count(503, 503);
    storm.unanswered = storm.offered.count(0, 0);
    storm.other = int(run.bodies.size()) - storm.answered2xx - storm.answered503 - storm.unanswered;
    QSet<qint64> recorded;
    QSqlQuery rows =
        db::exec(server.db(),
                 QStringLiteral(
                     "SELECT order_id FROM pay_callback_log WHERE order_id >= ? AND order_id < ?"),
                 {run.first, run.first + run.unique});
    while (rows.next())
        recorded.insert(rows.value(0).toLongLong());
    for (size_t i = 0; i < run.bodies.size(); ++i) {
        const int status = storm.offered.statuses[i];
        if (status >= 200 && status < 300 && !recorded.contains(run.first + qint64(i)))
            ++storm.lost;
    }
    const bench::OfferResult &o = storm.offered;
    std::vector<double> latencies = o.latencies;
    std::sort(latencies.begin(), latencies.end());
    out << "\nstorm: RECORD_ONLY absorbed " << QString::number(absorbed, 'f', 0)
        << " callbacks/s closed-loop; offered " << QString::number(rate, 'f', 0) << "/s for "
        << kStormSeconds << " s on " << kStormConnections << " connections: " << run.bodies.size()
        << " sent in " << QString::number(o.sendSeconds, 'f', 1) << " s ("
        << QString::number(double(run.bodies.size()) / o.sendSeconds, 'f', 0) << "/s, " << o.late
        << " more than 100 ms late), last answer at " << QString::number(o.seconds, 'f', 1)
        << " s\n  answers: 2xx " << storm.answered2xx << ", 503 " << storm.answered503 << ", other "
        << storm.other << ", none within " << kStormTimeoutSeconds << " s " << storm.unanswered
        << "; p50 " << QString::number(latencies[latencies.size() / 2] * 1000, 'f', 1)
        << " ms, p99 "
        << QString::number(latencies[size_t(double(latencies.size()) * 0.99)] * 1000, 'f', 1)
        << " ms, max " << QString::number(latencies.back() * 1000, 'f', 1)
        << " ms\n  2xx answers whose pay_no is not in pay_callback_log: " << storm.lost
        << "\n  payops-callbackd resident MiB: before "
        << QString::number(storm.rssBeforeMb, 'f', 1) << ", peak "
        << QString::number(storm.rssPeakMb, 'f', 1) << ", 2 s after "
        << QString::number(storm.rssAfterMb, 'f', 1) << " (VmHWM since start "
        << QString::number(storm.hwmMb, 'f', 1) << ")" << Qt::endl;
    return storm;
}

// NORMAL at 8 clients without and with an attacker, then kConsolePairs pairs without and with a
// console refreshing every second. They run first on their server, on a database that holds
// what a day of NORMAL traffic leaves, as they always have: the record-only runs' backlog
// would have the console count it again every minute (console::BacklogTally).
struct NeighbourFigures
{
    double attackRatio = 0;
    std::vector<double> consoleRatios;
};

NeighbourFigures measureNeighbours(BenchServer &server, int requests, QTextStream &out)
{
    NeighbourFigures figures;
    // The attack and console runs keep the resends they have always been measured with.
    const auto paid = [&server](int unique) {
        Workload run = server.next(unique, true);
        addOrders(server.db(), run);
        return run;
    };
    const bench::RunResult quiet = server.measure(8, paid(requests / 2), server.http(), kProcessed);
    bench::RunResult attacked;
    {
        const test::Crowd crowd(server.endpoint().port(), 500, 50);
        out << "attacker holds " << crowd.connected() << " connections" << Qt::endl;
        attacked = server.measure(8, paid(requests / 2), server.http(), kProcessed);
    }
    out << quiet.row(QStringLiteral("8 clients, NORMAL, quiet"), kNameWidth) << '\n'
        << attacked.row(QStringLiteral("8 clients, NORMAL, 500 idle + 50 slow"), kNameWidth)
        << Qt::endl;
    figures.attackRatio = attacked.throughput() / quiet.throughput();
    // The watch's first pass over what the runs above wrote, so that the pairs below
    // measure a console as it runs day to day: reading what is new.
    refreshDuplicateWatch(server.db());
    RefreshingConsole console(server.dsn());
    for (int pair = 0; pair < kConsolePairs; ++pair) {
        const bench::RunResult alone =
            server.measure(8, paid(3 * requests / 2), server.http(), kProcessed);
        console.start();
        const bench::RunResult watched =
            server.measure(8, paid(3 * requests / 2), server.http(), kProcessed);
        console.stop();
        out << alone.row(QStringLiteral("8 clients, NORMAL, no console"), kNameWidth) << '\n'
            << watched.row(QStringLiteral("8 clients, NORMAL, console (%1)").arg(console.report()),
                           kNameWidth)
            << Qt::endl;
        figures.consoleRatios.push_back(watched.throughput() / alone.throughput());
    }
    return figures;
}

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    setApplicationIdentity();
    setupLogging(QStringLiteral("bench"), 4 /* error */);
    QTextStream out(stdout);
    const int requests = bench::requestsPerRun(kDefaultRequests);
    const QString tableHead =
        QStringLiteral("\n| run | callbacks/s | p50 ms | p99 ms | failed |\n|---|---|---|---|---|");
    out << requests << " callbacks a run, every one a new pay_no; payops-callbackd --threads "
        << kThreads << Qt::endl;

    Figures sandbox, production;
    StormFigures storm;
    NeighbourFigures neighbours;
    {
        out << "\n## The sandbox's server settings" << Qt::endl;
        BenchServer server({}, out);
        out << tableHead << Qt::endl;
        neighbours = measureNeighbours(server, requests, out);
        out << tableHead << Qt::endl;
        measureRecordOnly(server, requests, sandbox, out);
        storm = measureStorm(server, sandbox.absorbed(), out);
        out << tableHead << Qt::endl;
        measureNormal(server, requests, sandbox, out);
    }
    {
        out << "\n## Production's durability: every commit flushed, binary log on and synced"
            << Qt::endl;
        BenchServer server({QStringLiteral("--innodb-flush-log-at-trx-commit=1"),
                            QStringLiteral("--log-bin=binlog"), QStringLiteral("--server-id=1"),
                            QStringLiteral("--sync-binlog=1")},
                           out);
        out << tableHead << Qt::endl;
        measureRecordOnly(server, requests, production, out);
        out << tableHead << Qt::endl;
        measureNormal(server, requests, production, out);
    }

    const auto pair = [](double sandboxValue, double productionValue, int decimals) {
        return QStringLiteral("%1 | %2 |")
            .arg(sandboxValue, 0, 'f', decimals)
            .arg(productionValue, 0, 'f', decimals);
    };
    out << "\n| figure | sandbox settings | production settings |\n|---|---|---|" << Qt::endl;
    for (int clients : kConcurrency)
        out << "| raw insert, " << clients << " clients, callbacks/s | "
            << pair(sandbox.raw.at(clients).throughput(), production.raw.at(clients).throughput(),
                    0)
            << '\n'
            << "| RECORD_ONLY, " << clients << " clients, callbacks/s | "
            << pair(sandbox.recordOnly.at(clients).throughput(),
                    production.recordOnly.at(clients).throughput(), 0)
            << '\n';
    out << "| NORMAL, 32 clients, callbacks/s (median of " << kPairs << ") | "
        << pair(sandbox.normalMedian(), production.normalMedian(), 0) << '\n';
    for (int clients : kConcurrency)
        out << "| RECORD_ONLY / raw insert, " << clients << " clients (goal >= 1.0) | "
            << pair(sandbox.roOverRaw(clients), production.roOverRaw(clients), 2) << '\n';
    out << "| RECORD_ONLY / NORMAL, 32 clients (goal >= 5) | "
        << pair(sandbox.roOverNormal(), production.roOverNormal(), 2) << '\n'
        << "| RECORD_ONLY p99 ms, 32 clients (goal <= 50) | "
        << pair(sandbox.roP99Ms(), production.roP99Ms(), 1) << '\n'
        << "| NORMAL / its SQL, 32 clients, median (goal >= 0.9) | "
        << pair(bench::median(sandbox.sqlRatios32), bench::median(production.sqlRatios32), 2)
        << Qt::endl;
    const auto ratios = [](const std::vector<double> &values) {
        QStringList texts;
        for (double value : values)
            texts << QString::number(value, 'f', 2);
        return texts.join(QStringLiteral(", "));
    };
    out << "\nNORMAL / its SQL at 32 clients, pair by pair: sandbox " << ratios(sandbox.sqlRatios32)
        << "; production " << ratios(production.sqlRatios32) << Qt::endl;
    out << "NORMAL under attack / quiet at 8 clients (goal >= 0.8): "
        << QString::number(neighbours.attackRatio, 'f', 2) << Qt::endl;
    out << "NORMAL with a console refreshing every second / without, at 8 clients (goal >= "
           "0.95): "
        << ratios(neighbours.consoleRatios) << "; median "
        << QString::number(bench::median(neighbours.consoleRatios), 'f', 2) << Qt::endl;

    QStringList summary{QStringLiteral("SUMMARY bench_callbacks")};
    summary << sandbox.summary(QString())
            << QStringLiteral("storm_offered_per_s=%1").arg(storm.offered.rate, 0, 'f', 0)
            << QStringLiteral("storm_sent_per_s=%1")
                   .arg(double(storm.offered.statuses.size()) / storm.offered.sendSeconds, 0, 'f',
                        0)
            << QStringLiteral("storm_2xx=%1").arg(storm.answered2xx)
            << QStringLiteral("storm_503=%1").arg(storm.answered503)
            << QStringLiteral("storm_other=%1").arg(storm.other)
            << QStringLiteral("storm_unanswered=%1").arg(storm.unanswered)
            << QStringLiteral("storm_lost=%1").arg(storm.lost)
            << QStringLiteral("storm_rss_before_mb=%1").arg(storm.rssBeforeMb, 0, 'f', 1)
            << QStringLiteral("storm_rss_peak_mb=%1").arg(storm.rssPeakMb, 0, 'f', 1)
            << QStringLiteral("storm_rss_after_mb=%1").arg(storm.rssAfterMb, 0, 'f', 1)
            << QStringLiteral("attack8=%1").arg(neighbours.attackRatio, 0, 'f', 2)
            << QStringLiteral("console8_median=%1")
                   .arg(bench::median(neighbours.consoleRatios), 0, 'f', 2)
            << production.summary(QStringLiteral("prod_"))
            << QStringLiteral("failed=%1").arg(storm.failed() ? 1 : 0);
    out << '\n' << summary.join(QLatin1Char(' ')) << Qt::endl;
    if (storm.failed())
        out << "FAILED: the storm left a request unanswered, answered otherwise than 2xx or 503, "
               "or answered 2xx without recording it"
            << Qt::endl;
    return storm.failed() ? 1 : 0;
}
