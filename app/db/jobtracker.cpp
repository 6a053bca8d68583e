#include "jobtracker.h"

#include "connection.h"

namespace payops::db {

quint64 JobTracker::nextGeneration(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    return ++m_generations[key];
}

bool JobTracker::isLatest(const QString &key, quint64 generation) const
{
    QMutexLocker lock(&m_mutex);
    return !m_abandoned && m_generations.value(key) == generation;
}

std::optional<JobTracker::Running> JobTracker::cancel(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    ++m_generations[key];
    if (m_runningKey != key)
        return std::nullopt;
    return runningLocked();
}

std::optional<JobTracker::Running> JobTracker::abandon()
{
    QMutexLocker lock(&m_mutex);
    m_abandoned = true;
    return runningLocked();
}

void JobTracker::setConnectionId(qint64 id)
{
    QMutexLocker lock(&m_mutex);
    m_connectionId = id;
}

qint64 JobTracker::connectionId() const
{
    QMutexLocker lock(&m_mutex);
    return m_connectionId;
}

bool JobTracker::start(quint64 jobId, const QString &key, quint64 generation, bool onConnection)
{
    QMutexLocker lock(&m_mutex);
    if (m_abandoned || m_generations.value(key) != generation)
        return false;
    m_runningJob = jobId;
    m_runningKey = key;
    m_runningOnConnection = onConnection;
    return true;
}

void JobTracker::finish(quint64 jobId)
{
    QMutexLocker kill(&m_killMutex);
    QMutexLocker lock(&m_mutex);
    if (m_runningJob == jobId) {
        m_runningJob = 0;
        m_runningKey.clear();
    }
}

void JobTracker::killIfRunning(const QSqlDatabase &killer, quint64 jobId)
{
    // The kill lock keeps the job from ending, and the next from starting, until the KILL
    // QUERY has landed: checked and sent in one step, it can only ever hit this job.
    QMutexLocker kill(&m_killMutex);
    qint64 connectionId = 0;
    {
        QMutexLocker lock(&m_mutex);
        if (m_runningJob != jobId || m_connectionId == 0)
            return;
        connectionId = m_connectionId;
    }
    execDirect(killer, QStringLiteral("KILL QUERY %1").arg(connectionId));
}

std::optional<JobTracker::Running> JobTracker::runningLocked() const
{
    if (m_runningJob == 0 || !m_runningOnConnection || m_connectionId == 0)
        return std::nullopt;
    return Running{m_runningJob, m_connectionId};
}

} // namespace payops::db
