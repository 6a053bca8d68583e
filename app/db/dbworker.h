#pragma once

#include "dberror.h"
#include "dsn.h"

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
            } else {
                try {
                    result = std::make_shared<Result>(job(*db));
                } catch (const Error &failure) {
                    error = std::make_shared<Error>(failure);
                }
            }
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

    const Dsn &dsn() const { return m_dsn; }

private:
    using Task = std::function<void(const QSqlDatabase *, const Error *)>;
    void runOnWorker(Task task);
    quint64 nextGeneration(const QString &key);
    bool isLatest(const QString &key, quint64 generation) const;

    Dsn m_dsn;
    QThread m_thread;
    QObject *m_threadContext = nullptr; // lives on m_thread; jobs run in its context
    std::unique_ptr<Connection> m_connection; // created and destroyed on m_thread
    mutable QMutex m_generationsMutex;
    QHash<QString, quint64> m_generations;
};

} // namespace payops::db
