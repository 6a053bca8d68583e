#pragma once

#include "dberror.h"
#include "dsn.h"

#include <QAtomicInteger>
#include <QHash>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QSqlDatabase>
#include <QThread>

#include <functional>
#include <memory>

namespace payops::db {

class Connection;

// A thread that owns one database connection and runs jobs on it, one at a time, in order.
// Results come back to the receiver's thread by queued call, as plain values. Each job has
// a key; a result is dropped when a newer job with the same key was submitted since, or
// when the receiver is gone. The UI thread submits and never waits.
//
// A lost connection is dropped and the next job opens a new one (never MYSQL_OPT_RECONNECT:
// see connection.cpp); connectionLost() and connectionRestored() tell the owner so it can
// show it and retry with backoff.
class DbWorker final : public QObject
{
    Q_OBJECT

public:
    explicit DbWorker(Dsn dsn, QObject *parent = nullptr);
    ~DbWorker() override;
    Q_DISABLE_COPY_MOVE(DbWorker)

    template <typename Result>
    void submit(const QString &key, std::function<Result(const QSqlDatabase &)> job, QObject *receiver,
                std::function<void(const Result &)> onResult, std::function<void(const Error &)> onError)
    {
        const quint64 generation = nextGeneration(key);
        QPointer<QObject> guard(receiver);
        runOnWorker([this, key, generation, job = std::move(job), guard, onResult = std::move(onResult),
                     onError = std::move(onError)](const QSqlDatabase *db, const Error *connectError) {
            std::shared_ptr<Result> result;
            std::shared_ptr<Error> error;
            if (connectError) {
                error = std::make_shared<Error>(*connectError);
            } else if (!guard || !isLatest(key, generation)) {
                return; // superseded before it started: spare the server the work
            } else {
                try {
                    result = std::make_shared<Result>(job(*db));
                } catch (const Error &failure) {
                    error = std::make_shared<Error>(failure);
                }
            }
            noteOutcome(error.get());
            if (!guard)
                return;
            QMetaObject::invokeMethod(guard.data(), [this, key, generation, guard, result, error, onResult, onError] {
                if (!guard || !isLatest(key, generation))
                    return;
                if (error)
                    onError(*error);
                else
                    onResult(*result);
            }, Qt::QueuedConnection);
        });
    }

    // Makes the running or queued job of this key stale and, when a job is running on the
    // server, interrupts it with KILL QUERY from a second, short-lived connection (the
    // worker's own connection is busy with the query). KILL QUERY ends whatever statement the
    // worker runs at that moment, so give each view whose queries may be cancelled a worker
    // of its own (the console gives one to each page). Never blocks the caller.
    void cancel(const QString &key);

    const Dsn &dsn() const { return m_dsn; }
    // The server's id for the worker's connection, 0 while none is open.
    qint64 serverConnectionId() const { return m_serverConnectionId.loadAcquire(); }

    // True for the error a KILL QUERY leaves behind (ER_QUERY_INTERRUPTED, 1317).
    static bool isCancelled(const Error &error) { return error.serverCode() == 1317; }

Q_SIGNALS:
    void connectionLost(const QString &reason);
    void connectionRestored();

private:
    using Task = std::function<void(const QSqlDatabase *, const Error *)>;
    void runOnWorker(Task task);
    quint64 nextGeneration(const QString &key);
    bool isLatest(const QString &key, quint64 generation) const;
    // Runs on the worker thread after each job.
    void noteOutcome(const Error *error);

    Dsn m_dsn;
    QThread m_thread;
    QObject *m_threadContext = nullptr; // lives on m_thread; jobs run in its context
    std::unique_ptr<Connection> m_connection; // created and destroyed on m_thread
    QAtomicInteger<qint64> m_serverConnectionId = 0;
    QAtomicInteger<bool> m_lost = false;
    QAtomicInteger<bool> m_running = false; // a job is on the server now
    mutable QMutex m_generationsMutex;
    QHash<QString, quint64> m_generations;
};

} // namespace payops::db
