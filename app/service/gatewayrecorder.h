#pragma once

#include "batchqueue.h"
#include "db/dsn.h"
#include "domain/callback/callbackrequest.h"

#include <QSqlDatabase>
#include <QString>

#include <chrono>
#include <future>

namespace payops {

class ServiceMetrics;

// A gateway's recording step through the group commit (docs/decisions/0054-group-commit.md):
// the workers that record a delivery at the same moment share one transaction and one INSERT on
// a writer's connection; each waits for that commit before it claims the forward, so the row is
// FORWARDING before the forward as with one statement of its own.
class GatewayRecorder final
{
public:
    GatewayRecorder(Dsn dsn, QString instance, int workers, int rows,
                    std::chrono::milliseconds window, ServiceMetrics &metrics);
    GatewayRecorder(const GatewayRecorder &) = delete;
    GatewayRecorder &operator=(const GatewayRecorder &) = delete;

    // Returns once the delivery is committed; throws db::Error as recordForGateway does. A
    // delivery the queue cannot take is recorded on `db`, the worker's own connection.
    void record(const QSqlDatabase &db, const CallbackRequest &request);
    // Records what is queued, then joins the writers.
    void stop() { m_queue.stop(); }

private:
    struct Pending
    {
        CallbackRequest request;
        std::promise<void> committed;
    };
    using Queue = BatchQueue<Pending>;
    void run(std::vector<Queue::Entry> &batch);

    const Dsn m_dsn;
    const QString m_instance;
    ServiceMetrics &m_metrics;
    Queue m_queue; // last: its writers start once everything above is made
};

} // namespace payops
