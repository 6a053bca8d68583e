#pragma once

#include "dberror.h"
#include "dbworkerback.h"
#include "dsn.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSqlDatabase>

#include <atomic>
#include <functional>
#include <memory>

namespace payops::db {

class JobTracker;

// What a standalone job gets instead of the worker's connection.
struct StandaloneContext
{
    const Dsn &dsn; // the worker's; what the job opens with it, it closes before it returns
    // Raised once the job is stale: cancelled, superseded by a newer job of its key, or its
    // worker gone. A long job returns early when it sees it; its result is dropped anyway.
    const std::atomic_bool &stop;
};

// A thread that owns one database connection and runs jobs on it, one at a time, in order.
// Results come back to this object's thread (the UI thread) by queued call, as plain values,
// and the receiver must live there too. Each job has a key; a result is dropped when a newer
// job with the same key was submitted since, or when the receiver is gone. The UI thread
// submits and never waits, not even when it deletes a worker: this object is only the front;
// the thread, the connection and the running job belong to a DbWorkerBack, which ends on its
// own once the front is gone and its job is over (see waitForAll() for the exit).
//
// A job of the other kind, standalone, leaves the worker's connection alone: it gets the
// worker's DSN and opens what it needs (a connection of its own, a process, HTTP clients),
// and a stop flag to check between its steps. It has the same guarantees.
//
// A lost connection is dropped and the next job opens a new one (never MYSQL_OPT_RECONNECT:
// see connection.cpp); connectionLost() and connectionRestored() tell the owner so it can
// show it and retry with backoff.
class DbWorker final : public QObject
{
    Q_OBJECT

public:
    explicit DbWorker(Dsn dsn, QObject *parent = nullptr);
    // Makes every job stale, interrupts the running one on the server (or raises its stop
    // flag), and returns at once.
    ~DbWorker() override;
    Q_DISABLE_COPY_MOVE(DbWorker)

    // Whatever the job throws, std::exception or anything else, reaches onError as a db::Error.
    template <typename Result>
    void submit(const QString &key, std::function<Result(const QSqlDatabase &)> job,
                QObject *receiver, std::function<void(const Result &)> onResult,
                std::function<void(const Error &)> onError)
    {
        enqueue(
            key, receiver,
            [job = std::move(job), onResult = std::move(onResult)](const QSqlDatabase &db) {
                return deliveryOf<Result>(job(db), onResult);
            },
            std::move(onError));
    }

    // A standalone job: runs in its turn on the worker's thread, which it holds until it
    // returns, but without the worker's connection (never opened for it). Give a long one a
    // worker of its own, so that it delays nobody's queries.
    template <typename Result>
    void submitStandalone(const QString &key, std::function<Result(const StandaloneContext &)> job,
                          QObject *receiver, std::function<void(const Result &)> onResult,
                          std::function<void(const Error &)> onError)
    {
        auto stop = std::make_shared<std::atomic_bool>(false);
        enqueue(
            key, receiver,
            [job = std::move(job), onResult = std::move(onResult), dsn = m_dsn,
             stop](const QSqlDatabase &) {
                return deliveryOf<Result>(job(StandaloneContext{dsn, *stop}), onResult);
            },
            std::move(onError),
            stop); // a copy: the order the arguments are built in is unspecified
    }

    // Makes the running or queued jobs of this key stale, raises the stop flag of the
    // standalone ones and, when one of them runs on the server, interrupts it with KILL QUERY
    // from a second, short-lived connection (the worker's own connection is busy with the query).
    // The kill is sent only while that very job still runs, never to a job after it; still, give
    // each view whose queries may be cancelled a worker of its own (the console gives one to each
    // page), since a job of one view queued behind another's waits for it. Never blocks the caller.
    void cancel(const QString &key);

    const Dsn &dsn() const { return m_dsn; }
    // The server's id for the worker's connection, 0 while none is open.
    qint64 serverConnectionId() const;

    // True for the error a KILL QUERY leaves behind (ER_QUERY_INTERRUPTED, 1317).
    static bool isCancelled(const Error &error) { return error.serverCode() == 1317; }

    // Waits, up to the deadline, until the threads of every worker deleted so far have ended.
    // The only wait on a worker anywhere: it runs by itself as the QCoreApplication goes, after
    // the windows declared after it in main() (and their workers) are gone, so that a job is
    // not cut off half-way by the process's end unless the server does not answer.
    static bool waitForAll(QDeadlineTimer deadline);

Q_SIGNALS:
    void connectionLost(const QString &reason);
    void connectionRestored();

private:
    using Work = std::function<Delivery(const QSqlDatabase &)>;
    using ErrorHandler = std::function<void(const Error &)>;
    struct Pending
    {
        QPointer<QObject> receiver;
        QString key;
        quint64 generation = 0;
        ErrorHandler onError;
        std::shared_ptr<std::atomic_bool> stop; // a standalone job's; null for the others
    };

    // stop: null for a job on the worker's connection, the job's stop flag for a standalone one.
    void enqueue(const QString &key, QObject *receiver, Work work, ErrorHandler onError,
                 std::shared_ptr<std::atomic_bool> stop = nullptr);
    // Raises the stop flag of every standalone job of `key` (every key when null) not yet
    // delivered.
    void stopStandalone(const QString *key);
    void deliver(const WorkerOutcome &outcome);

    Dsn m_dsn;
    std::shared_ptr<JobTracker> m_tracker;
    DbWorkerBack *m_back; // on its own thread; ends itself after this object is gone
    quint64 m_lastJobId = 0;
    QHash<quint64, Pending> m_pending; // by job id: what only this thread may touch
};

} // namespace payops::db
