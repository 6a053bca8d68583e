// bench_callbacks: the callback endpoint against the same SQL sent straight to the server.
//
// For 1, 8 and 32 concurrent clients, with 30 % of deliveries being duplicates of an earlier
// one, it measures payops-callbackd over HTTP (NORMAL and RECORD_ONLY) and a baseline: the
// safe pipeline's own statements run in-process by plain threads with their own connections
// (no HTTP, no JSON, no signature). Both run against one private MariaDB in the same run;
// the report gives ratios, because absolute times on a shared machine mean little. A last
// pair of runs at 8 clients measures NORMAL with and without an attacker holding 500 idle and
// 50 slowly dripping connections open; then five alternating pairs measure it without and with
// a console open on the overview and the state machine, refreshing every second (the
// duplicate watch's refresh included, on a connection of its own).

#include "bulkdata.h"
#include "console/backlog.h"
#include "console/databasesummary.h"
#include "console/instances.h"
#include "console/overview.h"
#include "console/statemachine.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "domain/callback/paymentapplier.h"
#include "domain/callback/safehandler.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "lab/localserver.h"
#include "loadrun.h"
#include "log/application.h"
#include "log/logging.h"
#include "rawhttp.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

using namespace payops;

namespace {

constexpr int kUniquePerRun = 1500;
// The console's runs are three times as long, so that each holds several refreshes.
constexpr int kUniquePerConsoleRun = 3 * kUniquePerRun;
const QByteArray kSecret = "bench-secret-5b8e0c1d2f";

QByteArray body(qint64 order)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("pay_no"), QStringLiteral("B-%1").arg(order)},
                                     {QStringLiteral("order_id"), order},
                                     {QStringLiteral("amount_fen"), 9900},
                                     {QStringLiteral("currency"), QStringLiteral("CNY")},
                                     {QStringLiteral("channel"), QStringLiteral("wechat")},
                                     {QStringLiteral("trade_status"), QStringLiteral("SUCCESS")}})
        .toJson(QJsonDocument::Compact);
}

// One run's deliveries: `unique` orders no earlier run has paid, and after every tenth-of-three
// a resend of a recent one: 30 % duplicates, arriving close to their originals.
struct Workload
{
    qint64 first = 0;
    int unique = 0;
    std::vector<QByteArray> bodies;
};

Workload workload(qint64 &nextOrder, int unique = kUniquePerRun)
{
    Workload run{nextOrder, unique, {}};
    for (int i = 0; i < unique; ++i) {
        run.bodies.push_back(body(run.first + i));
        if (i % 10 < 3)
            run.bodies.push_back(body(run.first + std::max(0, i - 2)));
    }
    nextOrder += unique;
    return run;
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

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    setApplicationIdentity();
    setupLogging(QStringLiteral("bench"), 4 /* error */);
    QTextStream out(stdout);

    QTemporaryDir dir(QStringLiteral("/tmp/payops-bench-XXXXXX"));
    LocalServer server(dir.path());
    out << "starting a private MariaDB in " << dir.path() << Qt::endl;
    server.start();
    const Dsn dsn = server.rootDsn(QStringLiteral("bench"));
    const QList<int> concurrency{1, 8, 32};
    const int runsPerLevel = 3; // baseline, NORMAL, RECORD_ONLY
    const int attackRuns = 2;   // NORMAL at 8 clients without and with the attacker
    const int consolePairs = 5; // NORMAL at 8 clients without and with a console, alternating
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE bench"));
        db::Connection connection(dsn, QStringLiteral("setup"));
        const QSqlDatabase db = connection.database();
        db::Migrator(connection, checkMigrationRequirement)
            .migrate(db::SchemaLevel::Current, false);
        db::execDirect(db, QStringLiteral("INSERT INTO coupon_template (id, face_value_fen, "
                                          "active) VALUES (1, 1000, 1), (2, 500, 1)"));
        db::execDirect(
            db, QStringLiteral(
                    "INSERT INTO point_rule (point_type, points) VALUES ('PAY_REWARD', 100)"));
        // Orders spread over 1,000 users, so that one hot balance row does not serialise the run.
        db::execDirect(
            db, QStringLiteral("INSERT INTO users (id) SELECT DISTINCT 1 + MOD(seq, 1000) FROM "
                               "(SELECT a.d + 10 * b.d + 100 * c.d AS seq FROM "
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
                               "SELECT 8 UNION ALL SELECT 9) c) s"));
        const int orders = kUniquePerRun * (runsPerLevel * int(concurrency.size()) + attackRuns) +
                           kUniquePerConsoleRun * 2 * consolePairs;
        for (int start = 0; start < orders; start += 1000)
            db::exec(db,
                     QStringLiteral("INSERT INTO orders (id, user_id, amount_fen) SELECT ? + "
                                    "seq.n, 1 + seq.n, 9900 FROM "
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
                                    "UNION ALL SELECT 8 UNION ALL SELECT 9) c) seq"),
                     {1000000 + start});
    }

    const QString secretPath = dir.path() + QStringLiteral("/secret");
    {
        QFile secret(secretPath);
        if (!secret.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
            secret.write(kSecret) < 0)
            return 1;
    }
    QProcess service;
    service.start(QStringLiteral(PAYOPS_CALLBACKD_PATH),
                  {QStringLiteral("--db"), dsn.toString(), QStringLiteral("--listen"),
                   QStringLiteral("127.0.0.1:0"), QStringLiteral("--secret-file"), secretPath,
                   QStringLiteral("--threads"), QStringLiteral("32"), QStringLiteral("--log-level"),
                   QStringLiteral("error")});
    int port = 0;
    while (port == 0 && service.waitForReadyRead(30000)) {
        const auto match = QRegularExpression(QStringLiteral("listening on [^:]+:(\\d+)"))
                               .match(QString::fromUtf8(service.readLine()));
        if (match.hasMatch())
            port = match.captured(1).toInt();
    }
    if (port == 0) {
        out << "payops-callbackd did not start" << Qt::endl;
        return 1;
    }

    db::Connection operatorConnection(dsn, QStringLiteral("operator"));
    SwitchObserver baselineSwitch;
    DirectSender direct{dsn, paymentFromState(operatorConnection.database()), &baselineSwitch};
    const bench::SignedPoster http{port, kSecret};

    out << "\n| run | callbacks/s | p50 ms | p99 ms | failed |\n|---|---|---|---|---|\n";
    QStringList summary;
    qint64 nextOrder = 1000000;
    const QString processed = QStringLiteral("PROCESSED");
    const auto measure = [&](int clients, const Workload &run, const auto &send,
                             const QString &status) {
        const bench::RunResult result = bench::drive(clients, run.bodies, send);
        expectHandled(operatorConnection.database(), run, status);
        return result;
    };
    for (int clients : concurrency) {
        const bench::RunResult baseline = measure(clients, workload(nextOrder), direct, processed);
        const bench::RunResult normal = measure(clients, workload(nextOrder), http, processed);
        const qint64 version = flipSwitch(operatorConnection.database(), CallbackMode::RecordOnly,
                                          QStringLiteral("bench"))
                                   .after.version;
        waitForAcknowledgement(operatorConnection.database(), version, 5000);
        const bench::RunResult recordOnly =
            measure(clients, workload(nextOrder), http, QStringLiteral("RECORDED"));
        flipSwitch(operatorConnection.database(), CallbackMode::Normal, QStringLiteral("bench"));

        out << baseline.row(QStringLiteral("%1 clients, baseline SQL").arg(clients), 28) << '\n'
            << normal.row(QStringLiteral("%1 clients, service NORMAL").arg(clients), 28) << '\n'
            << recordOnly.row(QStringLiteral("%1 clients, service RECORD_ONLY").arg(clients), 28)
            << Qt::endl;
        summary << QStringLiteral("| %1 | %2 | %3 |")
                       .arg(clients)
                       .arg(normal.throughput() / baseline.throughput(), 0, 'f', 2)
                       .arg(recordOnly.throughput() / normal.throughput(), 0, 'f', 2);
    }
    const bench::RunResult quiet = measure(8, workload(nextOrder), http, processed);
    bench::RunResult attacked;
    {
        const test::Crowd crowd(port, 500, 50);
        out << "attacker holds " << crowd.connected() << " connections" << Qt::endl;
        attacked = measure(8, workload(nextOrder), http, processed);
    }
    out << quiet.row(QStringLiteral("8 clients, NORMAL, quiet"), 28) << '\n'
        << attacked.row(QStringLiteral("8 clients, NORMAL, 500 idle + 50 slow"), 28) << Qt::endl;
    // The watch's first pass over what the runs above wrote, so that the pairs below measure a
    // console as it runs day to day: reading what is new.
    refreshDuplicateWatch(operatorConnection.database());
    std::vector<double> consoleRatios;
    {
        RefreshingConsole console(dsn);
        for (int pair = 0; pair < consolePairs; ++pair) {
            const bench::RunResult alone =
                measure(8, workload(nextOrder, kUniquePerConsoleRun), http, processed);
            console.start();
            const bench::RunResult watched =
                measure(8, workload(nextOrder, kUniquePerConsoleRun), http, processed);
            console.stop();
            out << alone.row(QStringLiteral("8 clients, NORMAL, no console"), 28) << '\n'
                << watched.row(
                       QStringLiteral("8 clients, NORMAL, console (%1)").arg(console.report()), 28)
                << Qt::endl;
            consoleRatios.push_back(watched.throughput() / alone.throughput());
        }
    }
    out << "\n| clients | NORMAL / baseline (goal >= 0.9 at 8 and 32) | RECORD_ONLY / NORMAL (goal "
           ">= 2) |\n|---|---|---|\n"
        << summary.join(QLatin1Char('\n')) << Qt::endl;
    out << "\nNORMAL under attack / quiet at 8 clients (goal >= 0.8): "
        << QString::number(attacked.throughput() / quiet.throughput(), 'f', 2) << Qt::endl;
    out << "NORMAL with a console refreshing every second / without, at 8 clients (goal >= 0.95):";
    for (double ratio : consoleRatios)
        out << ' ' << QString::number(ratio, 'f', 2);
    std::sort(consoleRatios.begin(), consoleRatios.end());
    out << "; median "
        << QString::number((consoleRatios[(consoleRatios.size() - 1) / 2] +
                            consoleRatios[consoleRatios.size() / 2]) /
                               2,
                           'f', 2)
        << Qt::endl;

    ::kill(static_cast<pid_t>(service.processId()), SIGTERM);
    service.waitForFinished(30000);
    server.stop();
    return 0;
}
