#include "recordbatcher.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/recordbatch.h"
#include "servicemetrics.h"

#include <spdlog/spdlog.h>

namespace payops {
namespace {

CallbackAnswer unavailable(const char *why)
{
    return CallbackAnswer::failure(503, Outcome::Unavailable, QString::fromLatin1(why));
}

} // namespace

RecordBatcher::RecordBatcher(Dsn dsn, QString instance, Limits limits,
                             SwitchObserver &switchObserver, ServiceMetrics &metrics,
                             AfterCommit afterCommit)
    : m_dsn(std::move(dsn))
    , m_instance(std::move(instance))
    , m_maxWait(limits.maxWait)
    , m_switch(switchObserver)
    , m_metrics(metrics)
    , m_afterCommit(std::move(afterCommit))
    , m_queue(kWriters, limits.depth,
              {limits.rows, limits.window,
               [](const Callback &callback) {
                   return callback.request.rawBody.size() + callback.request.rawHeaders.size();
               },
               kMaxBatchBytes},
              [this](std::vector<Queue::Entry> &batch) { run(batch); })
{
}

void RecordBatcher::run(std::vector<Queue::Entry> &batch)
{
    // Qt allows a connection only on the thread that opened it: each writer keeps its own,
    // made on first use and dropped after a connection failure.
    thread_local std::unique_ptr<db::Connection> connection;
    const auto now = std::chrono::steady_clock::now();
    std::vector<Queue::Entry> fresh;
    fresh.reserve(batch.size());
    for (Queue::Entry &entry : batch) {
        if (now - entry.queuedAt > m_maxWait)
            entry.item.answer(unavailable("the endpoint is overloaded; retry later"));
        else
            fresh.push_back(std::move(entry));
    }
    if (fresh.empty())
        return;
    try {
        if (!connection)
            connection = std::make_unique<db::Connection>(m_dsn, QStringLiteral("record"));
        record(fresh, connection->database());
    } catch (const db::Error &error) {
        spdlog::warn("record-only batch of {} not confirmed: {}", fresh.size(), error.what());
        if (!error.isConnectionFailure()) { // no connection to be had (e.g. access denied)
            for (Queue::Entry &entry : fresh)
                entry.item.answer(unavailable("database unavailable; retry later"));
            return;
        }
        // The connection went, perhaps with only COMMIT's reply: the handler's path looks
        // each pay_no up on a connection of its own (docs/decisions/0045), as it does for
        // one callback.
        connection.reset();
        for (Queue::Entry &entry : fresh)
            entry.item.takeFullPath();
    }
}

// The traces of a batch's answered callbacks (those taking the handler's path write their own).
QList<CallbackTrace> RecordBatcher::tracesOf(std::vector<Queue::Entry> &batch,
                                             const QList<CallbackRequest> &requests,
                                             const RecordBatchResult &result) const
{
    QList<CallbackTrace> traces;
    for (size_t i = 0; i < batch.size(); ++i) {
        const std::optional<CallbackAnswer> &answer = result.answers.at(qsizetype(i));
        if (!answer)
            continue;
        CallbackTrace &trace = *batch[i].item.trace;
        trace.payNo = requests.at(qsizetype(i)).payNo;
        trace.orderId = requests.at(qsizetype(i)).orderId;
        trace.instance = m_instance;
        trace.handler = QStringLiteral("safe");
        if (answer->outcome == Outcome::Recorded) {
            trace.txBegin = result.txBegin;
            trace.committed = result.committed;
        }
        trace.responded = nowMicros();
        trace.outcome = QString::fromLatin1(outcomeLabel(answer->outcome));
        trace.httpStatus = answer->httpStatus;
        traces << trace;
    }
    return traces;
}

void RecordBatcher::record(std::vector<Queue::Entry> &batch, const QSqlDatabase &db)
{
    QList<CallbackRequest> requests;
    requests.reserve(qsizetype(batch.size()));
    for (const Queue::Entry &entry : batch)
        requests << entry.item.request;

    RecordBatchResult result;
    bool traced = false;
    try {
        // The traces go in the batch's own transaction: one commit (one flush of the log, on a
        // server that syncs each) a batch, not two.
        result =
            recordBatch(db, requests, m_instance, m_switch, [&](const RecordBatchResult &recorded) {
                const QList<CallbackTrace> traces = tracesOf(batch, requests, recorded);
                return traces.isEmpty() ? QStringList() : QStringList{tracesStatement(db, traces)};
            });
        traced = result.committed > 0;
        if (result.committed > 0) {
            m_metrics.recordBatch(result.inserted);
            if (m_afterCommit)
                m_afterCommit(db, requests);
        }
    } catch (const db::Error &error) {
        if (error.isConnectionFailure())
            throw;
        // One transaction: nothing of the batch stays, and each of its callbacks hears so.
        spdlog::warn("record-only batch of {} not recorded: {}", batch.size(), error.what());
        result.answers.fill(unavailable("database unavailable; retry later"),
                            qsizetype(batch.size()));
        traced = false;
    }

    // Otherwise (a batch that failed or wrote nothing) the traces in one statement of their
    // own, before the answers, as one callback's trace is.
    if (!traced) {
        try {
            writeTraces(db, tracesOf(batch, requests, result));
        } catch (const db::Error &error) {
            spdlog::warn("traces of a record-only batch of {} not written: {}", batch.size(),
                         error.what());
        }
    }
    for (size_t i = 0; i < batch.size(); ++i) {
        const std::optional<CallbackAnswer> &answer = result.answers.at(qsizetype(i));
        if (answer)
            batch[i].item.answer(*answer);
        else
            batch[i].item.takeFullPath();
    }
}

} // namespace payops
