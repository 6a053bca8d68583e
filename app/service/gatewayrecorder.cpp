#include "gatewayrecorder.h"

#include "db/connection.h"
#include "domain/callback/gatewayforward.h"
#include "servicemetrics.h"

#include <algorithm>

namespace payops {

GatewayRecorder::GatewayRecorder(Dsn dsn, QString instance, int workers, int rows,
                                 std::chrono::milliseconds window, ServiceMetrics &metrics)
    : m_dsn(std::move(dsn))
    , m_instance(std::move(instance))
    , m_metrics(metrics)
    // No more can wait than there are workers, each waiting for its own delivery.
    , m_queue(1, workers, {rows, window}, [this](std::vector<Queue::Entry> &batch) { run(batch); })
{
}

void GatewayRecorder::record(const QSqlDatabase &db, const CallbackRequest &request)
{
    std::promise<void> committed;
    std::future<void> done = committed.get_future();
    if (!m_queue.submit({request, std::move(committed)}))
        return void(recordForGateway(db, request, m_instance));
    done.get(); // rethrows the delivery's db::Error
}

void GatewayRecorder::run(std::vector<Queue::Entry> &batch)
{
    // Qt allows a connection only on the thread that opened it; dropped after a failure of it.
    thread_local std::unique_ptr<db::Connection> connection;
    QList<CallbackRequest> requests;
    requests.reserve(qsizetype(batch.size()));
    for (const Queue::Entry &entry : batch)
        requests << entry.item.request;
    try {
        if (!connection)
            connection = std::make_unique<db::Connection>(m_dsn, QStringLiteral("record"));
        const QList<std::exception_ptr> errors =
            recordForGatewayBatch(connection->database(), requests, m_instance);
        m_metrics.recordBatch(int(std::count(errors.begin(), errors.end(), nullptr)));
        for (size_t i = 0; i < batch.size(); ++i) {
            if (const std::exception_ptr &error = errors.at(qsizetype(i)))
                batch[i].item.committed.set_exception(error);
            else
                batch[i].item.committed.set_value();
        }
    } catch (...) {
        // Whatever failed, each worker waiting for this batch hears of it and never waits on;
        // the next batch starts on a fresh connection.
        const std::exception_ptr error = std::current_exception();
        connection.reset();
        for (Queue::Entry &entry : batch)
            entry.item.committed.set_exception(error);
    }
}

} // namespace payops
