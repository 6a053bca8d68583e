#include "dbworkerback.h"

#include "connection.h"
#include "jobtracker.h"

#include <QList>
#include <QMutex>
#include <QThread>
#include <QThreadPool>

#include <exception>

namespace payops::db {
namespace {

QMutex g_threadsMutex;

// Every let-go back's thread until it is deleted. Leaked on purpose, as is the pool below:
// a thread stuck on a frozen server at exit must never be destroyed while it runs.
QList<QThread *> &liveThreads()
{
    static auto *threads = new QList<QThread *>;
    return *threads;
}

// The global pool would not do: QCoreApplication's destructor waits for it without a bound.
QThreadPool &killers()
{
    static auto *pool = new QThreadPool;
    return *pool;
}

// A back's thread; once its front has let go, waitForAll() knows it until it is deleted.
class BackThread final : public QThread
{
public:
    BackThread() { setObjectName(QStringLiteral("db-worker")); }
    ~BackThread() override
    {
        QMutexLocker lock(&g_threadsMutex);
        liveThreads().removeOne(this);
    }
    Q_DISABLE_COPY_MOVE(BackThread)
};

// Whatever a job or a connection throws reaches onError as one type.
Error asError(const std::exception_ptr &failure)
{
    try {
        std::rethrow_exception(failure);
    } catch (const Error &error) {
        return error;
    } catch (const std::exception &error) {
        return Error(QString::fromUtf8(error.what()));
    } catch (...) {
        return Error(Error::tr("the database job failed with an unknown error"));
    }
}

} // namespace

DbWorkerBack *DbWorkerBack::launch(Dsn dsn, std::shared_ptr<JobTracker> tracker)
{
    auto *thread = new BackThread;
    auto *back = new DbWorkerBack(std::move(dsn), std::move(tracker));
    back->m_thread = thread;
    back->moveToThread(thread);
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
    return back;
}

DbWorkerBack::DbWorkerBack(Dsn dsn, std::shared_ptr<JobTracker> tracker)
    : m_dsn(std::move(dsn))
    , m_tracker(std::move(tracker))
{
}

DbWorkerBack::~DbWorkerBack() = default;

void DbWorkerBack::run(const WorkerJob &job)
{
    Q_ASSERT(QThread::currentThread() == thread());
    WorkerOutcome outcome;
    outcome.jobId = job.id;
    // Superseded before it started: spare the server the work.
    if (!m_tracker->isLatest(job.key, job.generation)) {
        Q_EMIT done(outcome);
        return;
    }
    if (job.onConnection && !m_connection) {
        try {
            m_connection = std::make_unique<Connection>(m_dsn, QStringLiteral("worker"));
            m_tracker->setConnectionId(m_connection->serverConnectionId());
        } catch (...) {
            outcome.error = asError(std::current_exception());
            noteOutcome(&*outcome.error);
            Q_EMIT done(outcome);
            return;
        }
    }
    if (!m_tracker->start(job.id, job.key, job.generation, job.onConnection)) {
        Q_EMIT done(outcome);
        return;
    }
    try {
        outcome.deliver = job.work(job.onConnection ? m_connection->database() : QSqlDatabase());
    } catch (...) {
        outcome.error = asError(std::current_exception());
    }
    m_tracker->finish(job.id);
    // A standalone job's failure says nothing of the worker's own connection.
    if (job.onConnection)
        noteOutcome(outcome.error ? &*outcome.error : nullptr);
    Q_EMIT done(outcome);
}

void DbWorkerBack::letGo()
{
    {
        QMutexLocker lock(&g_threadsMutex);
        liveThreads().append(m_thread);
    }
    QMetaObject::invokeMethod(this, &DbWorkerBack::end, Qt::QueuedConnection);
}

void DbWorkerBack::end()
{
    Q_ASSERT(QThread::currentThread() == thread());
    // Qt allows a connection to be closed only on the thread that opened it.
    m_connection.reset();
    m_tracker->setConnectionId(0);
    deleteLater(); // as the thread finishes, on it
    thread()->quit();
}

void DbWorkerBack::noteOutcome(const Error *error)
{
    if (error && error->isConnectionFailure()) {
        // The next job opens a fresh connection; an old one may hold nothing we rely on.
        m_connection.reset();
        m_tracker->setConnectionId(0);
        if (!m_lost) {
            m_lost = true;
            Q_EMIT connectionLost(userMessage(*error));
        }
        return;
    }
    if (m_connection && m_lost) {
        m_lost = false;
        Q_EMIT connectionRestored();
    }
}

void DbWorkerBack::kill(const Dsn &dsn, std::shared_ptr<JobTracker> tracker, quint64 jobId)
{
    killers().start([dsn, tracker = std::move(tracker), jobId] {
        try {
            Connection killer(dsn, QStringLiteral("cancel"));
            tracker->killIfRunning(killer.database(), jobId);
        } catch (...) {
            // Nothing to do: the query ends on its own, or the server is gone anyway.
        }
    });
}

bool DbWorkerBack::waitForAll(QDeadlineTimer deadline)
{
    QList<QThread *> threads;
    {
        QMutexLocker lock(&g_threadsMutex);
        threads = liveThreads();
    }
    bool allEnded = true;
    for (QThread *thread : std::as_const(threads)) {
        // A finished thread's deleteLater() may never run once the event loop is over.
        if (thread->wait(deadline))
            delete thread;
        else
            allEnded = false;
    }
    const int killsMs = deadline.isForever() ? -1 : int(qMax<qint64>(0, deadline.remainingTime()));
    return killers().waitForDone(killsMs) && allEnded;
}

} // namespace payops::db
