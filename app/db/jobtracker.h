#pragma once

#include <QHash>
#include <QMutex>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace payops::db {

// What a DbWorker's two halves share: the newest job of each key (an older one is stale), the
// job on the server now and the session it runs in. Any thread may ask; nothing here is held
// while a statement runs, except the kill lock, which the UI thread never takes.
class JobTracker final
{
public:
    struct Running
    {
        quint64 jobId = 0;
        qint64 connectionId = 0;
    };

    JobTracker() = default;
    Q_DISABLE_COPY_MOVE(JobTracker)

    // A new job of `key`: every older one of that key is stale. Returns its generation.
    quint64 nextGeneration(const QString &key);
    bool isLatest(const QString &key, quint64 generation) const;
    // Makes every job of `key` stale and returns the one of that key on the server now, if
    // any. One step, so that a job cannot start unseen between the two.
    std::optional<Running> cancel(const QString &key);
    // Makes every job stale, now and from now on (the front is gone), and returns the job on
    // the server now, if any.
    std::optional<Running> abandon();

    // The worker's session: 0 while none is open.
    void setConnectionId(qint64 id);
    qint64 connectionId() const;
    // Records that the job runs now, unless it went stale meanwhile (then false: skip it).
    // onConnection false: a standalone job, which runs in no session of the worker's, so
    // cancel() and abandon() never return it for a kill.
    bool start(quint64 jobId, const QString &key, quint64 generation, bool onConnection = true);
    // The job is over. Waits while a KILL QUERY for it is on its way, so that a kill meant for
    // it can never land on the job after it.
    void finish(quint64 jobId);

    // Sends KILL QUERY on `killer` (another session) if job `jobId` still runs, holding the kill
    // lock meanwhile; a job that already ended is left alone. Throws db::Error.
    void killIfRunning(const QSqlDatabase &killer, quint64 jobId);

private:
    std::optional<Running> runningLocked() const;

    mutable QMutex m_mutex; // guards everything below; never held across a statement
    QHash<QString, quint64> m_generations;
    bool m_abandoned = false;
    qint64 m_connectionId = 0;
    quint64 m_runningJob = 0;
    QString m_runningKey;
    bool m_runningOnConnection = false;
    QMutex m_killMutex; // held by a kill in flight and by the end of a job
};

} // namespace payops::db
