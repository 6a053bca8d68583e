#pragma once

#include "db/dberror.h"
#include "db/delivery.h"
#include "db/dsn.h"
#include "job.h"

#include <QCoreApplication>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>

namespace payops::db {
class DbWorker;
}

namespace payops::console {

// The console's one way off the UI thread: a thread with a database connection of its own
// (a db::DbWorker underneath) that runs jobs one at a time, in order, and hands each result
// back on the UI thread. A job has a key; its result is dropped when a newer job with the
// same key was submitted since, or when the receiver is gone. Nothing here ever waits: not
// submitting, not cancelling, not deleting the worker (see db/dbworker.h for how that holds).
class Worker final : public QObject
{
    Q_OBJECT

public:
    explicit Worker(Dsn dsn, QObject *parent = nullptr);
    ~Worker() override;
    Q_DISABLE_COPY_MOVE(Worker)

    // Runs `job` on the worker's thread, then `onResult` (or, whatever the job threw,
    // `onError`) on the UI thread, unless the receiver is gone or the key was submitted again
    // or cancelled since.
    template <typename Result>
    void submit(const QString &key, Job<Result> job, QObject *receiver,
                std::function<void(const Result &)> onResult,
                std::function<void(const db::Error &)> onError)
    {
        enqueue(
            key, receiver,
            [job = std::move(job), onResult = std::move(onResult)](const QSqlDatabase &db) {
                return db::deliveryOf<Result>(job(db), onResult);
            },
            std::move(onError));
    }

    // The same for a standalone job: it runs in its turn on the worker's thread, without the
    // worker's connection. Give a long one a worker of its own, so that it delays no query.
    template <typename Result>
    void submitStandalone(const QString &key, StandaloneJob<Result> job, QObject *receiver,
                          std::function<void(const Result &)> onResult,
                          std::function<void(const db::Error &)> onError)
    {
        enqueueStandalone(
            key, receiver,
            [job = std::move(job),
             onResult = std::move(onResult)](const db::StandaloneContext &context) {
                return db::deliveryOf<Result>(job(context), onResult);
            },
            std::move(onError));
    }

    // Makes the running or queued jobs of this key stale and interrupts the running one on the
    // server (KILL QUERY from a second connection), or raises its stop flag. Never blocks.
    void cancel(const QString &key);

    const Dsn &dsn() const;
    // The server's id for the worker's connection, 0 while none is open.
    qint64 serverConnectionId() const;

    // True for the error a cancelled job ends with.
    static bool isCancelled(const db::Error &error);

    // Runs `call(receiver)` on the UI thread unless the receiver is gone by then: how a job
    // reports progress. A job may outlive its receiver, so its thread must not touch it.
    template <typename Receiver, typename Call>
    static void postTo(const QPointer<Receiver> &receiver, Call call)
    {
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [receiver, call = std::move(call)] {
                if (receiver)
                    call(receiver.data());
            },
            Qt::QueuedConnection);
    }

Q_SIGNALS:
    void connectionLost(const QString &reason);
    void connectionRestored();

private:
    using Delivery = db::Delivery;
    // The one non-template path to the DbWorker, so that only worker.cpp includes it.
    void enqueue(const QString &key, QObject *receiver,
                 std::function<Delivery(const QSqlDatabase &)> work,
                 std::function<void(const db::Error &)> onError);
    void enqueueStandalone(const QString &key, QObject *receiver,
                           std::function<Delivery(const db::StandaloneContext &)> work,
                           std::function<void(const db::Error &)> onError);

    std::unique_ptr<db::DbWorker> m_db;
};

} // namespace payops::console
