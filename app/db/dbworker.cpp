#include "dbworker.h"

#include "connection.h"

#include <QThreadPool>

namespace payops::db {

DbWorker::DbWorker(Dsn dsn, QObject *parent)
    : QObject(parent)
    , m_dsn(std::move(dsn))
{
    m_thread.setObjectName(QStringLiteral("db-worker"));
    m_threadContext = new QObject;
    m_threadContext->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_threadContext, [this] {
        // Qt allows a connection to be closed only on the thread that opened it.
        m_connection.reset();
        m_threadContext->deleteLater(); // deleted as the thread finishes
    });
    m_thread.start();
}

DbWorker::~DbWorker()
{
    // A query still running would hold up quit(); interrupt it first.
    if (m_running.loadAcquire())
        cancel(QString());
    m_thread.quit();
    m_thread.wait();
}

void DbWorker::runOnWorker(Task task)
{
    QMetaObject::invokeMethod(m_threadContext, [this, task = std::move(task)] {
        if (!m_connection) {
            try {
                m_connection = std::make_unique<Connection>(m_dsn, QStringLiteral("worker"));
                m_serverConnectionId.storeRelease(m_connection->serverConnectionId());
            } catch (const Error &error) {
                task(nullptr, &error);
                noteOutcome(&error);
                return;
            }
        }
        const QSqlDatabase db = m_connection->database();
        m_running.storeRelease(true);
        task(&db, nullptr);
        m_running.storeRelease(false);
    }, Qt::QueuedConnection);
}

void DbWorker::noteOutcome(const Error *error)
{
    if (error && error->isConnectionFailure()) {
        // The next job opens a fresh connection; an old one may hold nothing we rely on.
        m_connection.reset();
        m_serverConnectionId.storeRelease(0);
        if (!m_lost.fetchAndStoreAcquire(true))
            Q_EMIT connectionLost(error->message());
        return;
    }
    if (m_connection && m_lost.fetchAndStoreAcquire(false))
        Q_EMIT connectionRestored();
}

void DbWorker::cancel(const QString &key)
{
    if (!key.isEmpty())
        nextGeneration(key);
    const qint64 id = m_serverConnectionId.loadAcquire();
    if (id == 0 || !m_running.loadAcquire())
        return;
    const Dsn dsn = m_dsn;
    // KILL QUERY (not KILL) ends the statement and keeps the worker's session open. A job
    // that already finished makes this a harmless no-op on an idle session.
    QThreadPool::globalInstance()->start([dsn, id] {
        try {
            Connection killer(dsn, QStringLiteral("cancel"));
            execDirect(killer.database(), QStringLiteral("KILL QUERY %1").arg(id));
        } catch (const Error &) {
            // Nothing to do: the query ends on its own, or the server is gone anyway.
        }
    });
}

quint64 DbWorker::nextGeneration(const QString &key)
{
    QMutexLocker lock(&m_generationsMutex);
    return ++m_generations[key];
}

bool DbWorker::isLatest(const QString &key, quint64 generation) const
{
    QMutexLocker lock(&m_generationsMutex);
    return m_generations.value(key) == generation;
}

} // namespace payops::db
