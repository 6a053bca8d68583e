// bench_bleeding: how long it takes to stop the bleeding, measured.
//
// A private MariaDB, a sandbox database at level legacy (the incident's schema), three
// payops-callbackd --handler unsafe-demo instances, and a storm of about 500 callbacks a second
// (every order's two copies at the same instant on two instances). Mid-storm the switch is
// flipped to RECORD_ONLY through the code the console and `payops degrade` use (flipSwitch,
// then waitForAcknowledgement), and the run reports:
//
// - the time from the flip's commit to the last instance's acknowledgement, also as a ratio of
//   the instances' switch poll period (their heartbeat), measured in the same run;
// - the side-effect rows inserted after the last acknowledgement (must be 0). Both times are
//   read from the server's clock, the clock that stamps created_at, so no clock skew enters:
//   a row whose insert began after every instance reported RECORD_ONLY as applied is a
//   callback processed in NORMAL mode past the barrier. Rows inserted between the flip and
//   the acknowledgement are reported too, but allowed: that is the time being measured.
//
// The same run against three safe instances is the control: it shows that the count can be 0,
// so a count above 0 for the unsafe-demo instances is theirs, not the measurement's.

#include "callbackfixture.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/callback/callbackswitch.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/localserver.h"
#include "lab/storm.h"
#include "privateserver.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QTextStream>
#include <QThread>

#include <csignal>
#include <functional>
#include <memory>
#include <thread>

using namespace payops;

namespace {

constexpr double kCallbacksPerSecond = 500;
constexpr int kCopies = 2;
constexpr int kStormSeconds = 9;
constexpr int kFlipAfterMs = 3000;
constexpr int kInstances = 3;

// Mean time between two heartbeats of the same instance: how often an instance reads the
// switch when no callback makes it look.
double heartbeatPeriodMs(const QSqlDatabase &db, int sampleMs)
{
    QHash<QString, QDateTime> last;
    QHash<QString, int> beats;
    QHash<QString, QDateTime> first;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < sampleMs) {
        QSqlQuery rows = db::exec(
            db, QStringLiteral(
                    "SELECT id, last_seen_at FROM callback_instance WHERE stopped_at IS NULL"));
        while (rows.next()) {
            const QString id = rows.value(0).toString();
            const QDateTime seen = rows.value(1).toDateTime();
            if (!last.contains(id)) {
                first.insert(id, seen);
            } else if (last.value(id) != seen) {
                ++beats[id];
            }
            last.insert(id, seen);
        }
        QThread::msleep(10);
    }
    double sum = 0;
    int counted = 0;
    for (auto it = beats.cbegin(); it != beats.cend(); ++it) {
        if (it.value() > 0) {
            sum += double(first.value(it.key()).msecsTo(last.value(it.key()))) / it.value();
            ++counted;
        }
    }
    return counted > 0 ? sum / counted : 0;
}

qint64 rowsSince(const QSqlDatabase &db, const QString &table, const QDateTime &since)
{
    return db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM %1 WHERE created_at > ?").arg(table),
                      {since})
        .toLongLong();
}

QDateTime serverNow(const QSqlDatabase &db)
{
    return db::scalar(db, QStringLiteral("SELECT NOW(3)")).toDateTime();
}

struct Phase
{
    QString handler;
    double heartbeatMs = 0;
    StormCounts counts;
    double stormSeconds = 0;
    qint64 flipCommittedMs = 0;
    qint64 lastAckMs = 0;
    bool allAcked = false;
    qint64 rowsFlipToAck = 0;
    qint64 couponsAfterAck = 0;
    qint64 pointsAfterAck = 0;
    qint64 callbacksAfterAck = 0;
    qint64 recordedAfterAck = 0;
    qint64 duplicateGroups = 0;

    qint64 rowsAfterAck() const { return couponsAfterAck + pointsAfterAck; }
};

// One storm at kInstances instances with `handler` on a fresh sandbox database, the switch
// flipped kFlipAfterMs into it.
Phase runPhase(LocalServer &server, const QString &handler)
{
    Phase phase;
    phase.handler = handler;
    const QString name = QStringLiteral("bleeding_") + QString(handler).remove(QLatin1Char('-'));
    const Dsn dsn = server.rootDsn(name);
    {
        db::Connection admin(server.rootDsn(QString()), QStringLiteral("admin"));
        db::execDirect(admin.database(), QStringLiteral("CREATE DATABASE ") + name);
    }
    // Legacy level, a sandbox, two coupon templates, a point rule and fifty users.
    test::prepareCallbackDatabase(dsn, QStringLiteral("legacy"), 0);

    db::Connection operatorConnection(dsn, QStringLiteral("operator"));
    const QSqlDatabase db = operatorConnection.database();
    const int orderCount = int(kCallbacksPerSecond / kCopies * kStormSeconds);
    const QList<qint64> orders = createStormOrders(db, orderCount);

    std::vector<std::unique_ptr<test::CallbackdProcess>> instances;
    StormPlan plan;
    for (int i = 0; i < kInstances; ++i) {
        instances.push_back(std::make_unique<test::CallbackdProcess>(
            dsn, handler, QStringLiteral("%1-%2").arg(handler).arg(i + 1),
            QStringList{QStringLiteral("--threads"), QStringLiteral("24"),
                        QStringLiteral("--log-level"), QStringLiteral("error")}));
        plan.targets << QStringLiteral("http://127.0.0.1:%1").arg(instances.back()->port());
    }
    plan.secret = test::testSecret();
    plan.orders = orderCount;
    plan.copies = kCopies;
    plan.pattern = StormPattern::Concurrent;
    plan.ratePerSecond = kCallbacksPerSecond / kCopies;
    phase.heartbeatMs = heartbeatPeriodMs(db, 3000);

    const std::atomic<bool> stop{false};
    QElapsedTimer stormClock;
    stormClock.start();
    std::thread storm([&] { phase.counts = runStorm(plan, orders, {}, stop); });

    QThread::msleep(kFlipAfterMs);
    QElapsedTimer flipClock;
    flipClock.start();
    const FlipResult flip =
        flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("bench: stop the bleeding"));
    phase.flipCommittedMs = flipClock.elapsed();
    const QDateTime flippedAt = serverNow(db);
    const QList<InstanceAck> acks =
        waitForAcknowledgement(db, flip.after.version, 10000,
                               [&](const InstanceAck &) { phase.lastAckMs = flipClock.elapsed(); });
    const QDateTime ackedAt = serverNow(db);
    phase.allAcked = std::all_of(acks.cbegin(), acks.cend(),
                                 [](const InstanceAck &ack) { return ack.acknowledged; });

    storm.join();
    phase.stormSeconds = double(stormClock.elapsed()) / 1000.0;
    instances.clear(); // SIGTERM: each finishes and writes what it had in flight

    phase.couponsAfterAck = rowsSince(db, QStringLiteral("user_coupon"), ackedAt);
    phase.pointsAfterAck = rowsSince(db, QStringLiteral("point_log"), ackedAt);
    phase.rowsFlipToAck = rowsSince(db, QStringLiteral("user_coupon"), flippedAt) +
                          rowsSince(db, QStringLiteral("point_log"), flippedAt) -
                          phase.rowsAfterAck();
    phase.recordedAfterAck =
        db::scalar(db,
                   QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED' "
                                  "AND created_at > ?"),
                   {ackedAt})
            .toLongLong();
    phase.callbacksAfterAck =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE received_at > ?"),
                   {ackedAt})
            .toLongLong();
    const LiveDuplicateCount duplicates = countLiveDuplicates(db);
    phase.duplicateGroups = duplicates.couponGroups + duplicates.pointGroups;
    return phase;
}

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);

    bench::PrivateServer privateServer;
    LocalServer &server = privateServer.server();
    out << kInstances << " instances per run; storm of "
        << int(kCallbacksPerSecond / kCopies * kStormSeconds) << " orders x " << kCopies
        << " copies (concurrent) at " << kCallbacksPerSecond << " callbacks/s; flip after "
        << kFlipAfterMs << " ms" << Qt::endl;
    // The safe handler is the control: the same storm and flip, where the barrier is known to
    // hold, shows that the count can be 0.
    const QList<Phase> phases{runPhase(server, QStringLiteral("unsafe-demo")),
                              runPhase(server, QStringLiteral("safe"))};
    server.stop();

    out << "\n| figure |";
    for (const Phase &phase : phases)
        out << ' ' << phase.handler << " |";
    out << "\n|---|---|---|\n";
    auto row = [&](const char *name, const std::function<QString(const Phase &)> &value) {
        out << "| " << name << " |";
        for (const Phase &phase : phases)
            out << ' ' << value(phase) << " |";
        out << '\n';
    };
    row("callbacks sent / achieved rate", [](const Phase &p) {
        return QStringLiteral("%1 in %2 s (%3/s)")
            .arg(p.counts.sent)
            .arg(p.stormSeconds, 0, 'f', 1)
            .arg(double(p.counts.sent) / p.stormSeconds, 0, 'f', 0);
    });
    row("answers 2xx / 5xx / none", [](const Phase &p) {
        return QStringLiteral("%1 / %2 / %3")
            .arg(p.counts.answered2xx)
            .arg(p.counts.answered5xx)
            .arg(p.counts.noAnswer);
    });
    row("heartbeat (switch poll) period",
        [](const Phase &p) { return QStringLiteral("%1 ms").arg(p.heartbeatMs, 0, 'f', 0); });
    row("flipSwitch committed in",
        [](const Phase &p) { return QStringLiteral("%1 ms").arg(p.flipCommittedMs); });
    row("flip to the last acknowledgement (goal <= 1000 ms)", [](const Phase &p) {
        return QStringLiteral("%1 ms%2")
            .arg(p.lastAckMs)
            .arg(p.allAcked ? QString() : QStringLiteral(" (NOT all)"));
    });
    row("acknowledgement / heartbeat period", [](const Phase &p) {
        return QString::number(double(p.lastAckMs) / p.heartbeatMs, 'f', 2);
    });
    row("side-effect rows between flip and acknowledgement",
        [](const Phase &p) { return QString::number(p.rowsFlipToAck); });
    row("side-effect rows after the acknowledgement (must be 0)", [](const Phase &p) {
        return QStringLiteral("%1 (coupons %2, points %3)")
            .arg(p.rowsAfterAck())
            .arg(p.couponsAfterAck)
            .arg(p.pointsAfterAck);
    });
    row("callbacks received after the acknowledgement",
        [](const Phase &p) { return QString::number(p.callbacksAfterAck); });
    row("of them RECORDED for the drain",
        [](const Phase &p) { return QString::number(p.recordedAfterAck); });
    row("duplicate groups over the run",
        [](const Phase &p) { return QString::number(p.duplicateGroups); });

    const bool held = std::all_of(phases.cbegin(), phases.cend(), [](const Phase &p) {
        return p.allAcked && p.rowsAfterAck() == 0;
    });
    QStringList summary{QStringLiteral("SUMMARY bench_bleeding")};
    for (const Phase &p : phases) {
        const QString handler = QString(p.handler).remove(QLatin1Char('-'));
        summary << QStringLiteral("%1_ack_ms=%2").arg(handler).arg(p.lastAckMs)
                << QStringLiteral("%1_all_acked=%2").arg(handler).arg(p.allAcked ? 1 : 0)
                << QStringLiteral("%1_rows_after_ack=%2").arg(handler).arg(p.rowsAfterAck());
    }
    summary << QStringLiteral("held=%1").arg(held ? 1 : 0);
    out << '\n' << summary.join(QLatin1Char(' ')) << Qt::endl;
    return held ? 0 : 1;
}
