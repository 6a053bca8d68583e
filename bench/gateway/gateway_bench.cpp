// bench_gateway: what payops-callbackd in gateway mode costs a team's handler, and what the
// platforms' signatures cost a core.
//
// 1. The same upstream (testkit's CountingUpstream, answering each request after a fixed
//    service time that stands for a handler's own database work) called directly and through
//    `payops-callbackd --upstream URL --threads 32`, at 8 and 32 kept-alive clients, every
//    pay_no new. Afterwards the upstream must have received each pay_no sent through the
//    gateway exactly once, or the benchmark fails. Each through run also gives the CPU time
//    the gateway's process and the MariaDB server's spent per forward.
// 2. A slow handler (500 ms, as during an incident) at 64 and then 256 clients, directly and
//    through one gateway at its default workers and connections, with the most database
//    connections the gateway held at once; exactly once again.
// 3. On one thread: WeChat Pay notifications verified and decrypted (admitWechatPay), Alipay
//    notifications verified (admitAlipay), and payops's own HMAC (verifySignature), a second.
//    The RSA keys come from the openssl command and the notifications from the lab's
//    notifiers, so the product's verification never checks inputs it made itself.

#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/alipay.h"
#include "domain/callback/signature.h"
#include "domain/callback/wechatpay.h"
#include "lab/localserver.h"
#include "lab/platformnotification.h"
#include "loadrun.h"
#include "privateserver.h"
#include "topology.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QTextStream>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace payops;

namespace {

// A handler that pays an order reads and writes its database: about this long a request. Against
// an upstream that answers at once, the ratio would measure the gateway's own database work
// against nothing.
constexpr int kServiceMillis = 5;
constexpr int kDefaultRequestsPerRun = 2000;
// A handler whose own database struggles answers in half a second: every forward in flight
// then waits on it, which is what a gateway must carry without a connection each.
constexpr int kSlowMillis = 500;
// Deliveries per client in a slow run (SLOW_ROUNDS to change): at 500 ms, 20 rounds are ten
// seconds of the handler's time, so the first round's burst weighs a twentieth.
constexpr int kDefaultSlowRounds = 20;
// The slow upstream's threads: each kept-alive connection holds one, and a direct run's 256
// clients may connect while the gateway's connections of the run before still idle there.
constexpr int kSlowUpstreamThreads = 2 * 256 + 64;
// The gateway's own account, so that its sessions can be told from the benchmark's.
const QString kGatewayAccount = QStringLiteral("bench_gateway");
// Distinct notifications of each format, verified round and round for at least kCheckSeconds.
constexpr int kVectors = 200;
constexpr double kCheckSeconds = 3.0;

QByteArray payNoOf(qint64 n)
{
    return "GWB-" + QByteArray::number(n);
}

// `count` callbacks of payments no earlier run has sent, from payment `next` on.
std::vector<QByteArray> newPayments(qint64 &next, int count)
{
    std::vector<QByteArray> bodies;
    for (int i = 0; i < count; ++i, ++next)
        bodies.push_back(test::callbackBody(payNoOf(next), next, 9900));
    return bodies;
}

// Where the gateway's time went for the payments [first, end), from their callback_trace rows:
// each phase's p50 and p99 in ms. A gateway takes no lock: its trace has no lock times.
QString gatewayPhases(const QSqlDatabase &db, qint64 first, qint64 end)
{
    static const std::array<std::pair<const char *, const char *>, 5> kPhases{
        {{"recorded", "received_at, tx_begin_at"},
         {"claimed and sent", "tx_begin_at, forwarded_at"},
         {"upstream", "forwarded_at, upstream_answered_at"},
         {"answer stored", "upstream_answered_at, committed_at"},
         {"to the answer", "committed_at, responded_at"}}};
    QStringList columns;
    for (const auto &phase : kPhases)
        columns
            << QStringLiteral("TIMESTAMPDIFF(MICROSECOND, %1)").arg(QLatin1String(phase.second));
    QSqlQuery rows = db::exec(db,
                              QStringLiteral("SELECT %1 FROM callback_trace WHERE order_id >= ? "
                                             "AND order_id < ?")
                                  .arg(columns.join(QStringLiteral(", "))),
                              {first, end});
    std::array<bench::RunResult, kPhases.size()> phases;
    while (rows.next())
        for (size_t i = 0; i < kPhases.size(); ++i)
            phases[i].latencies.push_back(rows.value(int(i)).toDouble() / 1e6);
    QStringList parts;
    for (size_t i = 0; i < kPhases.size(); ++i)
        parts << QStringLiteral("%1 %2/%3")
                     .arg(QLatin1String(kPhases[i].first))
                     .arg(phases[i].percentile(0.5) * 1000, 0, 'f', 2)
                     .arg(phases[i].percentile(0.99) * 1000, 0, 'f', 2);
    return parts.join(QStringLiteral(", "));
}

// The most sessions `user` held on the server at once while it was watched: its process list
// read every 50 ms, on a connection of the watch's own (as root, not counted).
class ConnectionWatch final
{
public:
    ConnectionWatch(const Dsn &admin, const QString &user)
        : m_thread([this, admin, user] { watch(admin, user); })
    {
    }
    ~ConnectionWatch() { stop(); }
    ConnectionWatch(const ConnectionWatch &) = delete;
    ConnectionWatch &operator=(const ConnectionWatch &) = delete;

    // The most seen; -1 when the process list could not be read.
    int stop()
    {
        m_stopping = true;
        if (m_thread.joinable())
            m_thread.join();
        return m_most;
    }

private:
    void watch(const Dsn &admin, const QString &user)
    {
        try {
            db::Connection connection(admin, QStringLiteral("connection-watch"));
            do {
                const int now =
                    db::scalar(connection.database(),
                               QStringLiteral("SELECT COUNT(*) FROM information_schema.processlist "
                                              "WHERE user = ?"),
                               {user})
                        .toInt();
                m_most = std::max(m_most.load(), now);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            } while (!m_stopping);
        } catch (const std::exception &) {
            m_most = -1;
        }
    }

    std::atomic<bool> m_stopping{false};
    std::atomic<int> m_most{0};
    std::thread m_thread; // last: it starts watching once the rest is made
};

// CPU time per forward of each watched process (drive()'s cpuSeconds), in µs.
double cpuMicrosEach(const bench::RunResult &run, size_t process)
{
    return run.cpuSeconds.at(process) / run.requests * 1e6;
}

// Runs against one upstream, directly and through one gateway in front of it, every pay_no new,
// and the check that what went through reached the upstream exactly once.
class Comparison final
{
public:
    struct Runs
    {
        bench::RunResult direct;
        bench::RunResult through; // cpuSeconds: the gateway's, then the server's
        QString phases;           // inside the gateway (gatewayPhases)

        double ratio() const { return through.throughput() / direct.throughput(); }
    };

    Comparison(test::CountingUpstream &upstream, test::CallbackdProcess &gateway, qint64 serverPid,
               const QSqlDatabase &check, qint64 &nextPayment)
        : m_upstream(upstream)
        , m_gateway(gateway)
        , m_direct{upstream.port(), test::testSecret(), "/notify"}
        , m_through{gateway.port(), test::testSecret()}
        , m_watched{gateway.pid(), serverPid}
        , m_check(check)
        , m_nextPayment(nextPayment)
        , m_recordedBefore(forwardedOnceRows())
    {
    }

    // `requests` new payments from `clients` clients directly, then as many through the gateway
    // with its process's and the server's CPU time read from /proc around the run.
    Runs run(int clients, int requests)
    {
        Runs runs;
        runs.direct = bench::drive(clients, newPayments(m_nextPayment, requests), m_direct);
        m_sentDirect += requests;
        const qint64 firstThrough = m_nextPayment;
        runs.through =
            bench::drive(clients, newPayments(m_nextPayment, requests), m_through, m_watched);
        for (qint64 n = firstThrough; n < m_nextPayment; ++n)
            m_sentThrough.push_back(payNoOf(n));
        runs.phases = gatewayPhases(m_check, firstThrough, m_nextPayment);
        m_failed = m_failed || runs.direct.failures > 0 || runs.through.failures > 0;
        return runs;
    }

    // Every pay_no sent through the gateway reached the upstream once, and nothing else did (the
    // direct requests carry no X-Payops-Pay-No); the gateway recorded each as forwarded once,
    // and it stopped cleanly. False, with what went wrong on `out`, when not so or a request
    // failed.
    bool endExactlyOnce(QTextStream &out)
    {
        const QHash<QByteArray, int> forwards = m_upstream.countByPayNo();
        const int once = int(std::count_if(
            m_sentThrough.begin(), m_sentThrough.end(),
            [&forwards](const QByteArray &payNo) { return forwards.value(payNo) == 1; }));
        const int received = m_upstream.count();
        const int recorded = forwardedOnceRows() - m_recordedBefore;
        out << "\nupstream received " << received << " requests: " << m_sentDirect
            << " sent directly, and of the " << m_sentThrough.size()
            << " pay_nos sent through the gateway " << once << " exactly once; the gateway "
            << "recorded " << recorded << " as forwarded once" << Qt::endl;
        bool kept = !m_failed && once == int(m_sentThrough.size()) && recorded == once &&
                    received == m_sentDirect + once;
        if (m_gateway.terminate() != 0) {
            out << "payops-callbackd did not stop cleanly:\n" << m_gateway.output() << Qt::endl;
            kept = false;
        }
        return kept;
    }

private:
    int forwardedOnceRows() const
    {
        return db::scalar(m_check,
                          QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE gateway = 1 "
                                         "AND status = 'FORWARDED' AND forwards = 1"))
            .toInt();
    }

    test::CountingUpstream &m_upstream;
    test::CallbackdProcess &m_gateway;
    const bench::SignedPoster m_direct;
    const bench::SignedPoster m_through;
    const std::vector<qint64> m_watched;
    const QSqlDatabase m_check;
    qint64 &m_nextPayment;
    const int m_recordedBefore;
    int m_sentDirect = 0;
    std::vector<QByteArray> m_sentThrough;
    bool m_failed = false;
};

// The output of the openssl command, fed `input`; throws when it fails.
QByteArray openssl(const QStringList &arguments, const QByteArray &input = {})
{
    QProcess process;
    process.start(QStringLiteral("openssl"), arguments);
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit ||
        process.exitCode() != 0)
        throw std::runtime_error("openssl " + arguments.join(QLatin1Char(' ')).toStdString() +
                                 " failed: " + process.readAllStandardError().toStdString());
    return process.readAllStandardOutput();
}

struct KeyPair
{
    QByteArray privatePem; // PKCS#8, for the lab's notifier
    QByteArray publicPem;  // for the product's RsaPublicKey
};

KeyPair rsa2048()
{
    KeyPair pair;
    pair.privatePem =
        openssl({QStringLiteral("genpkey"), QStringLiteral("-algorithm"), QStringLiteral("RSA"),
                 QStringLiteral("-pkeyopt"), QStringLiteral("rsa_keygen_bits:2048")});
    pair.publicPem = openssl({QStringLiteral("pkey"), QStringLiteral("-pubout")}, pair.privatePem);
    return pair;
}

RsaPublicKey publicKey(const QByteArray &pem)
{
    QString error;
    const auto key = RsaPublicKey::fromPem(pem, &error);
    if (!key)
        throw std::runtime_error("the openssl key does not read: " + error.toStdString());
    return *key;
}

// kVectors deliveries as `notifier` renders them, each of its own payment.
std::vector<PlatformRequest> deliveries(const PlatformNotifier &notifier)
{
    std::vector<PlatformRequest> requests;
    for (int i = 1; i <= kVectors; ++i) {
        const PlatformPayment payment{
            payNoOf(i),        i, 9900, QStringLiteral("CNY"), QDateTime::currentDateTimeUtc(),
            "EV-" + payNoOf(i)};
        requests.push_back(notifier.render(payment, false));
    }
    return requests;
}

HeaderLookup headersOf(const PlatformRequest &request)
{
    return [&request](const char *name) {
        if (qstricmp(name, "Content-Type") == 0)
            return request.contentType;
        for (const auto &[key, value] : request.headers)
            if (qstricmp(key.constData(), name) == 0)
                return value;
        return QByteArray();
    };
}

double threadCpuSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

// Checks a second on this thread: by wall time, and by the thread's own CPU time (what one
// core would do, however busy the machine is). `check` must accept every request.
struct Rate
{
    double perWallSecond = 0;
    double perCpuSecond = 0;
};

Rate measureRate(const std::vector<PlatformRequest> &requests,
                 const std::function<bool(const PlatformRequest &)> &check)
{
    const double cpuStarted = threadCpuSeconds();
    const auto started = std::chrono::steady_clock::now();
    double elapsed = 0;
    qint64 checked = 0;
    do {
        for (const PlatformRequest &request : requests)
            if (!check(request))
                throw std::runtime_error("a notification was refused: " +
                                         request.path.toStdString());
        checked += qint64(requests.size());
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    } while (elapsed < kCheckSeconds);
    return {double(checked) / elapsed, double(checked) / (threadCpuSeconds() - cpuStarted)};
}

bool admitted(const Admission &admission)
{
    return std::holds_alternative<CallbackRequest>(admission);
}

struct Rates
{
    Rate wechatPay, alipay, hmac;
};

Rates measureChecks()
{
    const KeyPair wechatPlatform = rsa2048();
    const KeyPair alipayPlatform = rsa2048();
    PlatformKeys platform;
    platform.wechatMchId = "1900000001";
    platform.wechatAppId = "wx0000000000000001";
    platform.wechatSerial = "BENCH_PUB_KEY_0001";
    for (int i = 0; i < 32; ++i)
        platform.wechatApiV3Key += char('a' + QRandomGenerator::global()->bounded(26));
    platform.wechatPrivateKeyPem = wechatPlatform.privatePem;
    platform.alipayAppId = "2021000000000001";
    platform.alipayPrivateKeyPem = alipayPlatform.privatePem;
    const QByteArray secret = test::testSecret();

    WechatPayKeys wechatKeys;
    wechatKeys.mchid = platform.wechatMchId;
    wechatKeys.appids = {platform.wechatAppId};
    wechatKeys.apiV3Key = platform.wechatApiV3Key;
    wechatKeys.platformKeys.insert(platform.wechatSerial, publicKey(wechatPlatform.publicPem));
    AlipayKeys alipayKeys;
    alipayKeys.apps.insert(platform.alipayAppId, publicKey(alipayPlatform.publicPem));

    const auto wechat = deliveries(*PlatformNotifier::wechatPay(platform));
    const auto alipay = deliveries(*PlatformNotifier::alipay(platform));
    const auto hmac = deliveries(*PlatformNotifier::payops(secret));
    Rates rates;
    rates.wechatPay = measureRate(wechat, [&wechatKeys](const PlatformRequest &request) {
        return admitted(admitWechatPay(wechatKeys, headersOf(request), request.body,
                                       QDateTime::currentSecsSinceEpoch()));
    });
    rates.alipay = measureRate(alipay, [&alipayKeys](const PlatformRequest &request) {
        return admitted(admitAlipay(alipayKeys, headersOf(request), request.body));
    });
    rates.hmac = measureRate(hmac, [&secret](const PlatformRequest &request) {
        const HeaderLookup header = headersOf(request);
        return verifySignature(secret, header("X-Payops-Timestamp"), header("X-Payops-Signature"),
                               request.body,
                               QDateTime::currentSecsSinceEpoch()) == SignatureCheck::Valid;
    });
    return rates;
}

QString rateRow(const QString &name, const Rate &rate)
{
    return QStringLiteral("| %1 | %2 | %3 | %4 |")
        .arg(name, -40)
        .arg(rate.perWallSecond, 9, 'f', 0)
        .arg(rate.perCpuSecond, 9, 'f', 0)
        .arg(1e6 / rate.perCpuSecond, 7, 'f', 1);
}

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);
    const int requestsPerRun = bench::requestsPerRun(kDefaultRequestsPerRun);
    bool roundsSet = false;
    const int slowRounds = qEnvironmentVariableIntValue("SLOW_ROUNDS", &roundsSet);
    const int roundsPerClient = roundsSet && slowRounds > 0 ? slowRounds : kDefaultSlowRounds;

    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
    const qint64 serverPid = server.status().pid;
    const Dsn dsn = server.rootDsn(QStringLiteral("gateway"));
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE gateway"));
    }
    // The gateway pays nothing: its database needs the schema, not orders.
    test::prepareCallbackDatabase(dsn, QStringLiteral("current"), 0);

    const QList<int> concurrency{8, 32};
    QStringList ratios;
    QStringList phases; // inside the gateway, per concurrency
    QStringList cpu;    // per forward, per concurrency
    QStringList summary{QStringLiteral("SUMMARY bench_gateway")};
    bool lost = false;
    auto check = std::make_unique<db::Connection>(dsn, QStringLiteral("check"));
    qint64 nextPayment = 1;
    const auto cpuRow = [&cpu](int handlerMillis, int clients, const bench::RunResult &through) {
        cpu << QStringLiteral("| %1 ms handler, %2 clients | %3 | %4 |")
                   .arg(QString::number(handlerMillis), QString::number(clients),
                        QString::number(cpuMicrosEach(through, 0), 'f', 0),
                        QString::number(cpuMicrosEach(through, 1), 'f', 0));
    };
    const auto cpuSummary = [&summary](const QString &prefix, int clients,
                                       const bench::RunResult &through) {
        summary << QStringLiteral("%1gateway_cpu_us%2=%3")
                       .arg(prefix, QString::number(clients),
                            QString::number(cpuMicrosEach(through, 0), 'f', 0))
                << QStringLiteral("%1mariadb_cpu_us%2=%3")
                       .arg(prefix, QString::number(clients),
                            QString::number(cpuMicrosEach(through, 1), 'f', 0));
    };
    {
        test::CountingUpstream upstream(0, {}, kServiceMillis);
        test::CallbackdProcess gateway(dsn, QString(), QStringLiteral("bench-gateway"),
                                       {QStringLiteral("--upstream"), upstream.url(),
                                        QStringLiteral("--threads"), QStringLiteral("32")});
        Comparison comparison(upstream, gateway, serverPid, check->database(), nextPayment);
        out << "upstream service time " << kServiceMillis << " ms, " << requestsPerRun
            << " callbacks a run\n\n| run | callbacks/s | p50 ms | p99 ms | failed |\n"
               "|---|---|---|---|---|"
            << Qt::endl;
        for (int clients : concurrency) {
            const Comparison::Runs runs = comparison.run(clients, requestsPerRun);
            phases << QStringLiteral("%1 clients: ").arg(clients) + runs.phases;
            out << runs.direct.row(QStringLiteral("%1 clients, direct").arg(clients), 24) << '\n'
                << runs.through.row(QStringLiteral("%1 clients, through").arg(clients), 24)
                << Qt::endl;
            const double added =
                (runs.through.percentile(0.99) - runs.direct.percentile(0.99)) * 1000;
            ratios << QStringLiteral("| %1 | %2 | %3 |")
                          .arg(clients)
                          .arg(runs.ratio(), 0, 'f', 2)
                          .arg(added, 0, 'f', 2);
            cpuRow(kServiceMillis, clients, runs.through);
            summary << QStringLiteral("ratio%1=%2").arg(clients).arg(runs.ratio(), 0, 'f', 2)
                    << QStringLiteral("p99added%1_ms=%2").arg(clients).arg(added, 0, 'f', 2);
            cpuSummary(QString(), clients, runs.through);
        }
        lost = !comparison.endExactlyOnce(out) || lost;
    }
    out << "\n| clients | through / direct (goal >= 0.8) | p99 added ms (goal <= 5) |\n"
           "|---|---|---|\n"
        << ratios.join(QLatin1Char('\n')) << Qt::endl;
    out << "\nInside the gateway, ms p50/p99 (callback_trace):\n"
        << phases.join(QLatin1Char('\n')) << Qt::endl;

    // The slow handler, through one gateway as it starts by default: its database workers and
    // its connections to the handler are payops-callbackd's own defaults. The clients all come
    // from 127.0.0.1, as through nginx: the package's --max-connections-per-ip 0. The gateway
    // runs as an account of its own holding only payops_endpoint, as in production, so that its
    // sessions can be counted.
    const QList<int> slowConcurrency{64, 256};
    QStringList slowRows;
    QStringList slowPhases;
    {
        const Dsn gatewayAccount = testkit::roleAccount(server.rootDsn(QString()), kGatewayAccount,
                                                        QStringLiteral("payops_endpoint"));
        test::CountingUpstream upstream(0, {}, kSlowMillis, {}, kSlowUpstreamThreads);
        test::CallbackdProcess gateway(
            testkit::asAccount(dsn, gatewayAccount), QString(), QStringLiteral("bench-slow"),
            {QStringLiteral("--upstream"), upstream.url(),
             QStringLiteral("--max-connections-per-ip"), QStringLiteral("0")});
        Comparison comparison(upstream, gateway, serverPid, check->database(), nextPayment);
        out << "\nupstream service time " << kSlowMillis << " ms, " << roundsPerClient
            << " callbacks a client a run; one gateway at its defaults\n\n"
               "| run | callbacks/s | p50 ms | p99 ms | failed |\n|---|---|---|---|---|"
            << Qt::endl;
        for (int clients : slowConcurrency) {
            ConnectionWatch connections(server.rootDsn(QString()), kGatewayAccount);
            const Comparison::Runs runs = comparison.run(clients, clients * roundsPerClient);
            const int mostConnections = connections.stop();
            slowPhases << QStringLiteral("%1 clients: ").arg(clients) + runs.phases;
            out << runs.direct.row(QStringLiteral("%1 clients, direct").arg(clients), 24) << '\n'
                << runs.through.row(QStringLiteral("%1 clients, through").arg(clients), 24)
                << Qt::endl;
            const double directP99 = runs.direct.percentile(0.99) * 1000;
            const double throughP99 = runs.through.percentile(0.99) * 1000;
            slowRows << QStringLiteral("| %1 | %2 | %3 | %4 | %5 |")
                            .arg(clients)
                            .arg(runs.ratio(), 0, 'f', 2)
                            .arg(directP99, 0, 'f', 1)
                            .arg(throughP99, 0, 'f', 1)
                            .arg(mostConnections);
            cpuRow(kSlowMillis, clients, runs.through);
            summary
                << QStringLiteral("slow_ratio%1=%2").arg(clients).arg(runs.ratio(), 0, 'f', 2)
                << QStringLiteral("slow_p99_direct%1_ms=%2").arg(clients).arg(directP99, 0, 'f', 1)
                << QStringLiteral("slow_p99_through%1_ms=%2")
                       .arg(clients)
                       .arg(throughP99, 0, 'f', 1)
                << QStringLiteral("slow_db_connections%1=%2").arg(clients).arg(mostConnections);
            cpuSummary(QStringLiteral("slow_"), clients, runs.through);
        }
        lost = !comparison.endExactlyOnce(out) || lost;
    }
    check.reset();
    server.stop();

    out << "\n| clients, " << kSlowMillis
        << " ms handler | through / direct (goal >= 0.9) | p99 direct ms | p99 through ms | "
           "gateway's database connections, most (goal <= 16) |\n|---|---|---|---|---|\n"
        << slowRows.join(QLatin1Char('\n')) << Qt::endl;
    out << "\nInside the slow gateway, ms p50/p99 (callback_trace):\n"
        << slowPhases.join(QLatin1Char('\n')) << Qt::endl;
    out << "\n| CPU per forward, µs | payops-callbackd | mariadbd |\n|---|---|---|\n"
        << cpu.join(QLatin1Char('\n')) << Qt::endl;

    const Rates rates = measureChecks();
    out << "\n| on one thread | per second | per CPU second | µs each (CPU) |\n"
           "|---|---|---|---|\n"
        << rateRow(QStringLiteral("WeChat Pay: RSA verify + AES-GCM decrypt"), rates.wechatPay)
        << '\n'
        << rateRow(QStringLiteral("Alipay: RSA verify"), rates.alipay) << '\n'
        << rateRow(QStringLiteral("payops: HMAC-SHA256"), rates.hmac) << Qt::endl;
    summary << QStringLiteral("wechatpay_per_cpu_s=%1").arg(rates.wechatPay.perCpuSecond, 0, 'f', 0)
            << QStringLiteral("alipay_per_cpu_s=%1").arg(rates.alipay.perCpuSecond, 0, 'f', 0)
            << QStringLiteral("hmac_per_cpu_s=%1").arg(rates.hmac.perCpuSecond, 0, 'f', 0)
            << QStringLiteral("lost=%1").arg(lost ? 1 : 0);
    out << '\n' << summary.join(QLatin1Char(' ')) << Qt::endl;
    if (lost)
        out << "FAILED: a callback was lost, failed or forwarded more than once" << Qt::endl;
    return lost ? 1 : 0;
}
