#include "worker.h"

#include "db/dbworker.h"

namespace payops::console {

Worker::Worker(Dsn dsn, QObject *parent)
    : QObject(parent)
    , m_db(std::make_unique<db::DbWorker>(std::move(dsn)))
{
    connect(m_db.get(), &db::DbWorker::connectionLost, this, &Worker::connectionLost);
    connect(m_db.get(), &db::DbWorker::connectionRestored, this, &Worker::connectionRestored);
}

Worker::~Worker() = default;

void Worker::enqueue(const QString &key, QObject *receiver,
                     std::function<Delivery(const QSqlDatabase &)> work,
                     std::function<void(const db::Error &)> onError)
{
    m_db->submit<Delivery>(
        key, std::move(work), receiver, [](const Delivery &deliver) { deliver(); },
        std::move(onError));
}

void Worker::enqueueStandalone(const QString &key, QObject *receiver,
                               std::function<Delivery(const db::StandaloneContext &)> work,
                               std::function<void(const db::Error &)> onError)
{
    m_db->submitStandalone<Delivery>(
        key, std::move(work), receiver, [](const Delivery &deliver) { deliver(); },
        std::move(onError));
}

void Worker::cancel(const QString &key)
{
    m_db->cancel(key);
}

const Dsn &Worker::dsn() const
{
    return m_db->dsn();
}

qint64 Worker::serverConnectionId() const
{
    return m_db->serverConnectionId();
}

bool Worker::isCancelled(const db::Error &error)
{
    return db::DbWorker::isCancelled(error);
}

} // namespace payops::console
