#include "dbworker.h"

#include "connection.h"

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
    m_thread.quit();
    m_thread.wait();
}

void DbWorker::runOnWorker(Task task)
{
    QMetaObject::invokeMethod(m_threadContext, [this, task = std::move(task)] {
        if (!m_connection) {
            try {
                m_connection = std::make_unique<Connection>(m_dsn, QStringLiteral("worker"));
            } catch (const Error &error) {
                task(nullptr, &error);
                return;
            }
        }
        const QSqlDatabase db = m_connection->database();
        task(&db, nullptr);
    }, Qt::QueuedConnection);
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
