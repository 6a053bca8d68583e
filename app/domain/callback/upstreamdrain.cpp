#include "upstreamdrain.h"

#include "callbackhandler.h"
#include "callbacktrace.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"
#include "domain/money/auditlog.h"
#include "gatewayforward.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QList>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace payops {
namespace {

using Clock = std::chrono::steady_clock;

// The rows to forward, the trades' before the later events', each table oldest first.
QList<GatewayKey> rowsToForward(const QSqlDatabase &db, std::optional<WireFormat> channel)
{
    const QString format = channel ? QStringLiteral(" AND wire_format = ?") : QString();
    const QVariantList binds =
        channel ? QVariantList{QString::fromLatin1(wireFormatName(*channel))} : QVariantList{};
    QList<GatewayKey> keys;
    QSqlQuery trades =
        db::exec(db,
                 QStringLiteral("SELECT pay_no FROM pay_callback_log WHERE gateway = 1 AND "
                                "status IN ('RECORDED', 'FORWARDING')") +
                     format + QStringLiteral(" ORDER BY id"),
                 binds);
    while (trades.next())
        keys.append({trades.value(0).toByteArray(), QByteArray()});
    QSqlQuery events = db::exec(db,
                                QStringLiteral("SELECT pay_no, event FROM callback_event WHERE "
                                               "status IN ('RECORDED', 'FORWARDING')") +
                                    format + QStringLiteral(" ORDER BY id"),
                                binds);
    while (events.next())
        keys.append({events.value(0).toByteArray(), events.value(1).toByteArray()});
    return keys;
}

// What the drain's threads share: the rows in order, the pace, the counts.
class Drain
{
public:
    Drain(const UpstreamDrainOptions &options, QList<GatewayKey> keys)
        : m_options(options)
        , m_keys(std::move(keys))
        , m_started(Clock::now())
    {
        m_result.candidates = int(m_keys.size());
    }

    // The next row, once its turn under the rate has come; false when the drain is over.
    bool next(GatewayKey *key)
    {
        Clock::time_point due;
        {
            std::lock_guard lock(m_mutex);
            if (m_options.cancel && m_options.cancel->load())
                m_result.cancelled = true;
            if (m_result.cancelled || m_result.stoppedBySwitch || m_next >= m_keys.size())
                return false;
            *key = m_keys[m_next];
            due = m_options.rate > 0
                      ? m_started + std::chrono::microseconds(m_next * 1000000 / m_options.rate)
                      : m_started;
            ++m_next;
        }
        std::this_thread::sleep_until(due);
        return true;
    }

    void count(ForwardStep step)
    {
        std::lock_guard lock(m_mutex);
        ++(step == ForwardStep::Final ? m_result.forwarded : m_result.failed);
        progress();
    }

    // A row not forwarded: settled or being forwarded by live traffic meanwhile, or the switch
    // turned to RECORD_ONLY (which ends the drain).
    void skip(ClaimStep step)
    {
        std::lock_guard lock(m_mutex);
        if (step == ClaimStep::Recorded) {
            m_result.stoppedBySwitch = true;
            return;
        }
        ++m_result.skipped;
        progress();
    }

private:
    // Under the mutex: the rate so far, and the caller's progress.
    void progress()
    {
        const double seconds = std::chrono::duration<double>(Clock::now() - m_started).count();
        m_result.perSecond =
            seconds > 0 ? double(m_result.forwarded + m_result.failed) / seconds : 0;
        if (m_options.progress)
            m_options.progress(m_result);
    }

public:
    void fail(const db::Error &error)
    {
        std::lock_guard lock(m_mutex);
        if (!m_error)
            m_error = error;
        m_result.cancelled = true;
    }

    UpstreamDrainResult result() const
    {
        std::lock_guard lock(m_mutex);
        return m_result;
    }
    const std::optional<db::Error> &error() const { return m_error; }

private:
    const UpstreamDrainOptions &m_options;
    const QList<GatewayKey> m_keys;
    const Clock::time_point m_started;
    mutable std::mutex m_mutex;
    qsizetype m_next = 0;
    UpstreamDrainResult m_result;
    std::optional<db::Error> m_error;
};

// One row forwarded by the drain. The claim is committed first; the forward and its outcome
// then run in a transaction that reads the switch under its shared lock again, so that a flip
// to RECORD_ONLY waits for a drain's forward in flight (the drain is no instance and
// acknowledges nothing). A flip that came between the two finds the row still unforwarded.
ClaimStep forwardOne(const QSqlDatabase &db, UpstreamClient &client, const GatewayKey &key,
                     const QString &worker, CallbackTrace &trace, ForwardStep *step)
{
    SwitchObserver switchObserver; // the drain is no instance: its readings acknowledge nothing
    ForwardClaim forward;
    {
        SwitchReading reading(switchObserver, db);
        const Claim claim = claimForward(db, key, worker, reading, client.options().boundSeconds);
        if (claim.step != ClaimStep::Claimed)
            return claim.step;
        forward = claim.forward;
    }
    trace.orderId = forward.orderId;
    SwitchReading reading(switchObserver, db);
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    if (reading.read().mode == CallbackMode::RecordOnly) {
        transaction.rollback();
        releaseClaim(db, forward);
        return ClaimStep::Recorded;
    }
    const UpstreamAnswer answer = client.postAndWait(forwardRequest(forward));
    trace.forwarded = answer.sentMicros;
    if (answer.answered()) {
        trace.upstreamAnswered = answer.answeredMicros;
        trace.upstreamStatus = answer.status;
    }
    trace.httpStatus = answer.status;
    *step = storeForward(db, forward, answer, worker);
    transaction.commit();
    trace.committed = nowMicros();
    return ClaimStep::Claimed;
}

// One thread of the drain, with its own database connection.
void forwardRows(const Dsn &dsn, const UpstreamDrainOptions &options, UpstreamClient &client,
                 Drain &drain)
{
    try {
        db::Connection connection(dsn, QStringLiteral("drain-upstream"));
        const QSqlDatabase db = connection.database();
        GatewayKey key;
        while (drain.next(&key)) {
            CallbackTrace trace;
            trace.received = nowMicros();
            ForwardStep step = ForwardStep::NotFinal;
            const ClaimStep claimed = forwardOne(db, client, key, options.worker, trace, &step);
            if (claimed == ClaimStep::Claimed) {
                trace.payNo = key.payNo;
                trace.event = key.event;
                trace.instance = options.worker;
                trace.handler = QStringLiteral("drain");
                trace.responded = nowMicros();
                trace.outcome = step == ForwardStep::Final ? QStringLiteral("processed")
                                                           : QStringLiteral("unavailable");
                writeTrace(db, trace);
                drain.count(step);
            } else {
                drain.skip(claimed);
            }
        }
    } catch (const db::Error &error) {
        drain.fail(error);
    }
}

void auditDrain(const QSqlDatabase &db, const UpstreamDrainOptions &options,
                const UpstreamDrainResult &result, const QString &stop)
{
    if (result.forwarded + result.failed == 0)
        return;
    const QJsonObject after{
        {QStringLiteral("forwarded"), result.forwarded},
        {QStringLiteral("failed"), result.failed},
        {QStringLiteral("skipped"), result.skipped},
        {QStringLiteral("upstream"), upstreamWithoutCredentials(options.upstream.url)},
        {QStringLiteral("worker"), options.worker},
        {QStringLiteral("channel"),
         options.channel ? QString::fromLatin1(wireFormatName(*options.channel)) : QString()},
        {QStringLiteral("stopped"), stop}};
    runAudited([&] {
        appendAudit(db, QStringLiteral("backlog.drain_upstream"),
                    QStringLiteral("pay_callback_log"), QString(), QString(), QString(),
                    QString::fromUtf8(QJsonDocument(after).toJson(QJsonDocument::Compact)));
    });
}

} // namespace

UpstreamDrainResult drainToUpstream(const Dsn &dsn, const UpstreamDrainOptions &options)
{
    db::Connection connection(dsn, QStringLiteral("drain-upstream"));
    Drain drain(options, rowsToForward(connection.database(), options.channel));
    // The drain's forwards end by its timeout: no platform waits for them.
    UpstreamOptions upstream = options.upstream;
    upstream.boundSeconds = upstream.timeoutSeconds;
    upstream.connections = std::max(1, options.concurrency);
    UpstreamClient client(upstream);
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, options.concurrency); ++i)
        threads.emplace_back([&] { forwardRows(dsn, options, client, drain); });
    for (std::thread &thread : threads)
        thread.join();

    const UpstreamDrainResult result = drain.result();
    const QString stop = drain.error()            ? QStringLiteral("error")
                         : result.stoppedBySwitch ? QStringLiteral("switch")
                         : result.cancelled       ? QStringLiteral("cancelled")
                                                  : QString();
    auditDrain(connection.database(), options, result, stop);
    if (drain.error())
        throw *drain.error();
    return result;
}

} // namespace payops
