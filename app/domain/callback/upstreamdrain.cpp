#include "upstreamdrain.h"

#include "callbackhandler.h"
#include "callbacktrace.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/namedlock.h"
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

QList<QByteArray> rowsToForward(const QSqlDatabase &db)
{
    QSqlQuery query = db::exec(db, QStringLiteral("SELECT pay_no FROM pay_callback_log "
                                                  "WHERE gateway = 1 AND status IN "
                                                  "('RECORDED', 'FORWARDING') ORDER BY id"));
    QList<QByteArray> payNos;
    while (query.next())
        payNos.append(query.value(0).toByteArray());
    return payNos;
}

// What the drain's threads share: the rows in order, the pace, the counts.
class Drain
{
public:
    Drain(const UpstreamDrainOptions &options, QList<QByteArray> payNos)
        : m_options(options)
        , m_payNos(std::move(payNos))
        , m_started(Clock::now())
    {
        m_result.candidates = int(m_payNos.size());
    }

    // The next pay_no, once its turn under the rate has come; false when the drain is over.
    bool next(QByteArray *payNo)
    {
        Clock::time_point due;
        {
            std::lock_guard lock(m_mutex);
            if (m_options.cancel && m_options.cancel->load())
                m_result.cancelled = true;
            if (m_result.cancelled || m_result.stoppedBySwitch || m_next >= m_payNos.size())
                return false;
            *payNo = m_payNos[m_next];
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
        switch (step) {
        case ForwardStep::Final:
            ++m_result.forwarded;
            break;
        case ForwardStep::NotFinal:
            ++m_result.failed;
            break;
        case ForwardStep::Recorded:
            m_result.stoppedBySwitch = true;
            return;
        case ForwardStep::Settled:
        case ForwardStep::Missing:
        case ForwardStep::Busy:
            ++m_result.skipped;
            break;
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - m_started).count();
        m_result.perSecond =
            seconds > 0 ? double(m_result.forwarded + m_result.failed) / seconds : 0;
        if (m_options.progress)
            m_options.progress(m_result);
    }

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
    const QList<QByteArray> m_payNos;
    const Clock::time_point m_started;
    mutable std::mutex m_mutex;
    qsizetype m_next = 0;
    UpstreamDrainResult m_result;
    std::optional<db::Error> m_error;
};

// One thread of the drain, with its own database connection and upstream connection.
void forwardRows(const Dsn &dsn, const UpstreamDrainOptions &options, Drain &drain)
{
    try {
        db::Connection connection(dsn, QStringLiteral("drain-upstream"));
        const QSqlDatabase db = connection.database();
        UpstreamClient client(options.upstream);
        // The drain is no instance: what it reads of the switch acknowledges nothing.
        SwitchObserver switchObserver;
        QByteArray payNo;
        while (drain.next(&payNo)) {
            CallbackTrace trace;
            trace.received = nowMicros();
            db::NamedLock lock(db, db::payNoLockName(payNo));
            if (!lock.acquire(0)) {
                drain.count(ForwardStep::Settled); // live traffic is forwarding it now
                continue;
            }
            trace.lockAcquired = nowMicros();
            const Forward forward =
                forwardRow(db, client, payNo, options.worker, switchObserver, trace);
            lock.release();
            trace.lockReleased = nowMicros();
            if (forward.step == ForwardStep::Final || forward.step == ForwardStep::NotFinal) {
                trace.payNo = payNo;
                trace.orderId = forward.row.content.orderId;
                trace.instance = options.worker;
                trace.handler = QStringLiteral("drain");
                trace.responded = nowMicros();
                trace.outcome = forward.step == ForwardStep::Final ? QStringLiteral("processed")
                                                                   : QStringLiteral("unavailable");
                trace.httpStatus = forward.upstream.status;
                writeTrace(db, trace);
            }
            drain.count(forward.step);
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
    Drain drain(options, rowsToForward(connection.database()));
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, options.concurrency); ++i)
        threads.emplace_back([&] { forwardRows(dsn, options, drain); });
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
