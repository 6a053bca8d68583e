// bench_gateway: what payops-callbackd in gateway mode costs a team's handler, and what the
// platforms' signatures cost a core.
//
// 1. The same upstream (testkit's CountingUpstream, answering each request after a fixed
//    service time that stands for a handler's own database work) called directly and through
//    `payops-callbackd --upstream URL --threads 32`, at 8 and 32 kept-alive clients, every
//    pay_no new. Afterwards the upstream must have received each pay_no sent through the
//    gateway exactly once, or the benchmark fails.
// 2. On one thread: WeChat Pay notifications verified and decrypted (admitWechatPay), Alipay
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

#include <QCoreApplication>
#include <QDateTime>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QTextStream>

#include <array>
#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <stdexcept>

using namespace payops;

namespace {

// A handler that pays an order reads and writes its database: about this long a request. Against
// an upstream that answers at once, the ratio would measure the gateway's own database work
// against nothing.
constexpr int kServiceMillis = 5;
constexpr int kDefaultRequestsPerRun = 2000;
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
    wechatKeys.appid = platform.wechatAppId;
    wechatKeys.apiV3Key = platform.wechatApiV3Key;
    wechatKeys.platformKeys.insert(platform.wechatSerial, publicKey(wechatPlatform.publicPem));
    AlipayKeys alipayKeys;
    alipayKeys.appId = platform.alipayAppId;
    alipayKeys.publicKey = publicKey(alipayPlatform.publicPem);

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

    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
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
    QStringList summary{QStringLiteral("SUMMARY bench_gateway")};
    bool lost = false;
    {
        test::CountingUpstream upstream(0, {}, kServiceMillis);
        test::CallbackdProcess gateway(dsn, QString(), QStringLiteral("bench-gateway"),
                                       {QStringLiteral("--upstream"), upstream.url(),
                                        QStringLiteral("--threads"), QStringLiteral("32")});
        const bench::SignedPoster direct{upstream.port(), test::testSecret(), "/notify"};
        const bench::SignedPoster through{gateway.port(), test::testSecret()};
        out << "upstream service time " << kServiceMillis << " ms, " << requestsPerRun
            << " callbacks a run\n\n| run | callbacks/s | p50 ms | p99 ms | failed |\n"
               "|---|---|---|---|---|"
            << Qt::endl;
        db::Connection check(dsn, QStringLiteral("check"));
        qint64 nextPayment = 1;
        int sentDirect = 0;
        std::vector<QByteArray> sentThrough;
        for (int clients : concurrency) {
            const bench::RunResult straight =
                bench::drive(clients, newPayments(nextPayment, requestsPerRun), direct);
            sentDirect += requestsPerRun;
            const qint64 firstThrough = nextPayment;
            const bench::RunResult forwarded =
                bench::drive(clients, newPayments(nextPayment, requestsPerRun), through);
            for (qint64 n = firstThrough; n < nextPayment; ++n)
                sentThrough.push_back(payNoOf(n));
            phases << QStringLiteral("%1 clients: ").arg(clients) +
                          gatewayPhases(check.database(), firstThrough, nextPayment);
            out << straight.row(QStringLiteral("%1 clients, direct").arg(clients), 24) << '\n'
                << forwarded.row(QStringLiteral("%1 clients, through").arg(clients), 24)
                << Qt::endl;
            lost = lost || straight.failures > 0 || forwarded.failures > 0;

            const double ratio = forwarded.throughput() / straight.throughput();
            const double added = (forwarded.percentile(0.99) - straight.percentile(0.99)) * 1000;
            ratios << QStringLiteral("| %1 | %2 | %3 |")
                          .arg(clients)
                          .arg(ratio, 0, 'f', 2)
                          .arg(added, 0, 'f', 2);
            summary << QStringLiteral("ratio%1=%2").arg(clients).arg(ratio, 0, 'f', 2)
                    << QStringLiteral("p99added%1_ms=%2").arg(clients).arg(added, 0, 'f', 2);
        }

        // Exactly once: every pay_no sent through the gateway reached the upstream once, and
        // nothing else did (the direct requests carry no X-Payops-Pay-No).
        const QHash<QByteArray, int> forwards = upstream.countByPayNo();
        int once = 0;
        for (const QByteArray &payNo : sentThrough)
            once += forwards.value(payNo) == 1 ? 1 : 0;
        const int received = upstream.count();
        const int recorded =
            db::scalar(check.database(),
                       QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE gateway = 1 "
                                      "AND status = 'FORWARDED' AND forwards = 1"))
                .toInt();
        out << "\nupstream received " << received << " requests: " << sentDirect
            << " sent directly, and of the " << sentThrough.size()
            << " pay_nos sent through the gateway " << once << " exactly once; the gateway "
            << "recorded " << recorded << " as forwarded once" << Qt::endl;
        lost = lost || once != int(sentThrough.size()) || recorded != once ||
               received != sentDirect + once;
        if (gateway.terminate() != 0) {
            out << "payops-callbackd did not stop cleanly:\n" << gateway.output() << Qt::endl;
            lost = true;
        }
    }
    server.stop();

    out << "\n| clients | through / direct (goal >= 0.8) | p99 added ms (goal <= 5) |\n"
           "|---|---|---|\n"
        << ratios.join(QLatin1Char('\n')) << Qt::endl;
    out << "\nInside the gateway, ms p50/p99 (callback_trace):\n"
        << phases.join(QLatin1Char('\n')) << Qt::endl;

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
