#pragma once

#include "batchqueue.h"
#include "db/dsn.h"
#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbacktrace.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace payops {

class ServiceMetrics;
struct RecordBatchResult;
struct SwitchObserver;

// RECORD_ONLY's group commit (docs/decisions/0054-group-commit.md): callbacks that arrive
// within a few milliseconds are recorded by one transaction, one multi-row INSERT, on writer
// threads of their own, so a storm is recorded at the speed of the disk's commits rather than
// one commit per callback. Each callback is answered after its batch committed. Bounded as
// the JobQueue is: a full queue refuses at once, a callback that waited past the bound is
// answered 503 without touching the database.
class RecordBatcher final
{
public:
    struct Callback
    {
        CallbackRequest request;
        std::shared_ptr<CallbackTrace> trace;
        // Answers the platform; called once, on a writer thread.
        std::function<void(const CallbackAnswer &)> answer;
        // Hands the callback to the handler's one-at-a-time path instead (the batch read
        // NORMAL, or the callback needs the full path).
        std::function<void()> takeFullPath;
    };
    struct Limits
    {
        int rows = 100;
        std::chrono::milliseconds window{2};
        int depth = 1000;
        std::chrono::milliseconds maxWait{1000};
    };
    // Runs on the writer's connection right after a batch committed (the lost COMMIT reply of
    // payops-callbackd(8), PAYOPS_TEST_LOSE_COMMIT_REPLY).
    using AfterCommit = std::function<void(const QSqlDatabase &, const QList<CallbackRequest> &)>;

    RecordBatcher(Dsn dsn, QString instance, Limits limits, SwitchObserver &switchObserver,
                  ServiceMetrics &metrics, AfterCommit afterCommit);
    RecordBatcher(const RecordBatcher &) = delete;
    RecordBatcher &operator=(const RecordBatcher &) = delete;

    // False when the queue is full or stopped: the caller answers for the callback itself.
    bool submit(Callback callback) { return m_queue.submit(std::move(callback)); }
    // Records every callback already queued, then joins the writers.
    void stop() { m_queue.stop(); }
    int waiting() const { return m_queue.waiting(); }

private:
    using Queue = BatchQueue<Callback>;
    void run(std::vector<Queue::Entry> &batch);
    void record(std::vector<Queue::Entry> &batch, const QSqlDatabase &db);
    QList<CallbackTrace> tracesOf(std::vector<Queue::Entry> &batch,
                                  const QList<CallbackRequest> &requests,
                                  const RecordBatchResult &result) const;

    // Two writers: one batch is filled while the other commits.
    static constexpr int kWriters = 2;
    // Raw bodies and headers of one batch, written as hex (twice their size): well inside the
    // server's max_allowed_packet (16 MiB by default) whatever the row bound.
    static constexpr qsizetype kMaxBatchBytes = 2 * 1024 * 1024;

    const Dsn m_dsn;
    const QString m_instance;
    const std::chrono::milliseconds m_maxWait;
    SwitchObserver &m_switch;
    ServiceMetrics &m_metrics;
    const AfterCommit m_afterCommit;
    Queue m_queue; // last: its writers start once everything above is made
};

} // namespace payops
