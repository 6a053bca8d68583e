#include "dbworker.h"

#include "jobtracker.h"

#include <mutex>

namespace payops::db {
namespace {

// Long enough for a cancelled query to end and its connection to close; short enough that
// a frozen server cannot keep the console alive for more than a moment after its window.
constexpr int ExitWaitMs = 3000;

void waitAtExit()
{
    DbWorker::waitForAll(QDeadlineTimer(ExitWaitMs));
}

} // namespace

DbWorker::DbWorker(Dsn dsn, QObject *parent)
    : QObject(parent)
    , m_dsn(std::move(dsn))
    , m_tracker(std::make_shared<JobTracker>())
    , m_back(DbWorkerBack::launch(m_dsn, m_tracker))
{
    static std::once_flag exitWait;
    std::call_once(exitWait, [] { qAddPostRoutine(waitAtExit); });
    connect(m_back, &DbWorkerBack::done, this, &DbWorker::deliver);
    connect(m_back, &DbWorkerBack::connectionLost, this, &DbWorker::connectionLost);
    connect(m_back, &DbWorkerBack::connectionRestored, this, &DbWorker::connectionRestored);
}

DbWorker::~DbWorker()
{
    stopStandalone(nullptr);
    // Never waits: the back finishes (or is interrupted in) the job it runs, skips the rest
    // and ends by itself. Waiting here held the window for as long as the server took to
    // answer, forever when it was frozen, once for each page on every reconnect.
    if (const auto running = m_tracker->abandon())
        DbWorkerBack::kill(m_dsn, m_tracker, running->jobId);
    m_back->letGo();
}

void DbWorker::enqueue(const QString &key, QObject *receiver, Work work, ErrorHandler onError,
                       std::shared_ptr<std::atomic_bool> stop)
{
    Q_ASSERT(!receiver || receiver->thread() == thread());
    stopStandalone(&key); // superseded by this one
    WorkerJob job{++m_lastJobId, key, m_tracker->nextGeneration(key), std::move(work),
                  stop == nullptr};
    m_pending.insert(job.id,
                     Pending{receiver, key, job.generation, std::move(onError), std::move(stop)});
    QMetaObject::invokeMethod(
        m_back, [back = m_back, job = std::move(job)] { back->run(job); }, Qt::QueuedConnection);
}

void DbWorker::deliver(const WorkerOutcome &outcome)
{
    const Pending pending = m_pending.take(outcome.jobId);
    if (!pending.receiver || !m_tracker->isLatest(pending.key, pending.generation))
        return;
    if (outcome.error)
        pending.onError(*outcome.error);
    else if (outcome.deliver)
        outcome.deliver();
}

void DbWorker::cancel(const QString &key)
{
    stopStandalone(&key);
    if (const auto running = m_tracker->cancel(key))
        DbWorkerBack::kill(m_dsn, m_tracker, running->jobId);
}

void DbWorker::stopStandalone(const QString *key)
{
    for (const Pending &pending : std::as_const(m_pending)) {
        if (pending.stop && (!key || pending.key == *key))
            pending.stop->store(true);
    }
}

qint64 DbWorker::serverConnectionId() const
{
    return m_tracker->connectionId();
}

bool DbWorker::waitForAll(QDeadlineTimer deadline)
{
    return DbWorkerBack::waitForAll(deadline);
}

} // namespace payops::db
