// bench_drain: the backlog of record-only mode (20,000 orders' recorded callbacks, and a
// second payment for one order in twenty) drained by drainBacklog with its defaults, against
// a baseline of the same payment transactions, one callback each, sent by bare SQL clients
// over as many connections: applyPayment and the row marked, no claim, no batches, no
// traces, no audit. Twin databases of one private MariaDB at the sandbox's schema level, in
// the same run.

#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/paymentapplier.h"
#include "lab/localserver.h"
#include "loadrun.h"
#include "privateserver.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QList>
#include <QTextStream>

#include <algorithm>
#include <thread>
#include <vector>

using namespace payops;

namespace {

constexpr int kSecondPaymentEvery = 20;

// What a run may change from the environment, for a shorter run or another shape of drain.
int setting(const char *name, int byDefault)
{
    const int value = qEnvironmentVariableIntValue(name);
    return value > 0 ? value : byDefault;
}
const int kOrders = setting("ORDERS", 20000);
const int kCallbacks = kOrders + (kOrders + kSecondPaymentEvery - 1) / kSecondPaymentEvery;
const int kConnections = setting("CONNECTIONS", DrainOptions::kDefaultConnections);
const int kBatch = setting("BATCH", DrainOptions::kDefaultBatch);

// The sandbox's schema level with the callbacks' reference data, 10,000 users with two
// orders each, and the recorded backlog: each order's payment, and for one in twenty a
// second payment right after it, as the endpoint records them in record-only mode.
void prepare(const LocalServer &server, const QString &name)
{
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + name);
    }
    const Dsn dsn = server.rootDsn(name);
    test::prepareCallbackDatabase(dsn, QStringLiteral("legacy"), 0);
    db::Connection connection(dsn, QStringLiteral("setup"));
    const QSqlDatabase db = connection.database();
    db::execDirect(db, QStringLiteral("INSERT INTO users (id, nickname) SELECT 1000 + seq, "
                                      "CONCAT('u', seq) FROM seq_0_to_%1")
                           .arg(kOrders / 2 - 1));
    db::execDirect(db, QStringLiteral("INSERT INTO orders (id, user_id, amount_fen, currency, "
                                      "status) SELECT 1 + seq, 1000 + MOD(seq, %1), 9900, 'CNY', "
                                      "'PENDING' FROM seq_0_to_%2")
                           .arg(kOrders / 2)
                           .arg(kOrders - 1));
    db::execDirect(
        db, QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, body_sha256, "
                           "amount_fen, currency, channel, trade_status, status, response_code) "
                           "SELECT pay_no, order_id, 'recorded', SHA2(pay_no, 256), 9900, 'CNY', "
                           "'wechat', 'SUCCESS', 'RECORDED', 200 FROM ("
                           "SELECT CONCAT('B-', seq) pay_no, 1 + seq order_id, 0 k FROM "
                           "seq_0_to_%1 UNION ALL SELECT CONCAT('R-', seq), 1 + seq, 1 FROM "
                           "seq_0_to_%1 WHERE MOD(seq, %2) = 0) c ORDER BY order_id, k")
                .arg(kOrders - 1)
                .arg(kSecondPaymentEvery));
}

// Side effects issued twice, by a GROUP BY of their own (legacy level: no keys refuse them).
qint64 duplicates(const QSqlDatabase &db)
{
    return db::scalar(db, QStringLiteral("SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM user_coupon "
                                         "GROUP BY order_id, coupon_template_id HAVING COUNT(*) > "
                                         "1) c) + (SELECT COUNT(*) FROM (SELECT 1 FROM point_log "
                                         "GROUP BY order_id, point_type HAVING COUNT(*) > 1) p)"))
        .toLongLong();
}

struct Run
{
    double perSecond = 0;
    qint64 duplicates = 0;
};

// Each order paid once and every second payment refused, or the run measured something else.
Run finish(const Dsn &dsn, double seconds, const char *who)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    const QSqlDatabase db = connection.database();
    const qint64 paid =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
            .toLongLong();
    const qint64 left =
        db::scalar(
            db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'"))
            .toLongLong();
    if (paid != kOrders || left != 0)
        qFatal("%s paid %lld orders of %d and left %lld callbacks", who,
               static_cast<long long>(paid), kOrders, static_cast<long long>(left));
    return {kCallbacks / seconds, duplicates(db)};
}

// One bare client per connection, each with its share of the callbacks (by id), one
// transaction a callback: the payment's statements and the row marked, nothing else.
Run runBaseline(const Dsn &dsn)
{
    QList<StoredCallback> callbacks;
    QString fromState;
    {
        db::Connection connection(dsn, QStringLiteral("load"));
        fromState = paymentFromState(connection.database());
        QSqlQuery rows = db::exec(connection.database(),
                                  QStringLiteral("SELECT %1 FROM pay_callback_log ORDER BY id")
                                      .arg(storedCallbackColumns()));
        while (rows.next())
            callbacks.append(storedCallback(rows));
    }
    const int clients = kConnections;
    QElapsedTimer timer;
    timer.start();
    std::vector<std::thread> threads;
    for (int client = 0; client < clients; ++client)
        threads.emplace_back([&, client] {
            try {
                db::Connection connection(dsn, QStringLiteral("baseline"));
                const QSqlDatabase db = connection.database();
                for (qsizetype i = client; i < callbacks.size(); i += clients) {
                    const StoredCallback &stored = callbacks.at(i);
                    db::Transaction transaction(db);
                    const PaymentVerdict verdict = verdictFor(
                        applyPayment(db, stored.content, fromState, QStringLiteral("baseline")));
                    finishCallback(db, stored.id, verdict.status, verdict.reason,
                                   QStringLiteral("baseline"), verdict.answer);
                    transaction.commit();
                }
            } catch (const db::Error &error) {
                qFatal("the baseline failed: %s", error.what());
            }
        });
    for (std::thread &thread : threads)
        thread.join();
    return finish(dsn, double(timer.nsecsElapsed()) / 1e9, "the baseline");
}

Run runDrain(const Dsn &dsn)
{
    DrainOptions options;
    options.worker = QStringLiteral("bench");
    options.connections = kConnections;
    options.batch = kBatch;
    QElapsedTimer timer;
    timer.start();
    const DrainResult result = drainBacklog(dsn, options);
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    if (result.handled() != kCallbacks)
        qFatal("the drain handled %d of %d callbacks", result.handled(), kCallbacks);
    return finish(dsn, seconds, "the drain");
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);
    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();

    // Rounds on fresh twin databases, the order alternating, so that neither side always runs
    // on a warmer server; the median is the figure, the machine being shared.
    const int kRounds = setting("ROUNDS", 3);
    QList<double> rates;
    QList<double> baselineRates;
    qint64 duplicateGroups = 0;
    out << "| round | baseline callbacks/s | drain callbacks/s | drain / baseline |\n"
           "|---|---|---|---|\n";
    for (int round = 1; round <= kRounds; ++round) {
        const QString plain = QStringLiteral("plain%1").arg(round);
        const QString drain = QStringLiteral("drain%1").arg(round);
        prepare(server, plain);
        prepare(server, drain);
        Run baseline;
        Run drained;
        if (round % 2) {
            baseline = runBaseline(server.rootDsn(plain));
            drained = runDrain(server.rootDsn(drain));
        } else {
            drained = runDrain(server.rootDsn(drain));
            baseline = runBaseline(server.rootDsn(plain));
        }
        rates << drained.perSecond;
        baselineRates << baseline.perSecond;
        duplicateGroups += drained.duplicates + baseline.duplicates;
        out << "| " << round << " | " << QString::number(baseline.perSecond, 'f', 0) << " | "
            << QString::number(drained.perSecond, 'f', 0) << " | "
            << QString::number(drained.perSecond / baseline.perSecond, 'f', 2) << " |" << Qt::endl;
    }
    const double rate = bench::median(rates);
    const double baselineRate = bench::median(baselineRates);
    out << "\n"
        << kCallbacks << " callbacks, " << kConnections << " connections, batches of " << kBatch
        << "; goals: at least 2000 callbacks/s and 0.5 x the baseline, 0 duplicates\n";
    out << "SUMMARY bench_drain rate=" << QString::number(rate, 'f', 0)
        << " baseline_rate=" << QString::number(baselineRate, 'f', 0)
        << " ratio=" << QString::number(rate / baselineRate, 'f', 2)
        << " duplicates=" << duplicateGroups << Qt::endl;
    server.stop();
    return duplicateGroups == 0 ? 0 : 1;
}
