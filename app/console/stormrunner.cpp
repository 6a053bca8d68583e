#include "stormrunner.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/dbworker.h"
#include "db/migrator.h"
#include "worker.h"

#include <QPointer>

namespace payops::console {

StormRunner::StormRunner(QObject *parent)
    : QObject(parent)
{
}

StormRunner::~StormRunner()
{
    // The storm sees it between two requests; the worker's back waits for nobody, and the
    // wait at exit (DbWorker::waitForAll) covers it.
    stop();
}

bool StormRunner::isRunning() const
{
    return m_running;
}

void StormRunner::stop()
{
    if (m_stop)
        m_stop->store(true);
}

void StormRunner::start(const Dsn &dsn, const StormPlan &plan, bool createOrders)
{
    if (m_running) {
        Q_EMIT failed(tr("a storm is already running: stop it first"));
        return;
    }
    const QString invalid = validateStormPlan(plan);
    if (!invalid.isEmpty()) {
        Q_EMIT failed(invalid);
        return;
    }
    m_stop = std::make_shared<std::atomic_bool>(false);
    m_running = true;
    // A worker per storm: its DSN is this storm's.
    m_worker = std::make_unique<db::DbWorker>(dsn);
    const QPointer<StormRunner> self(this);
    m_worker->submitStandalone<StormCounts>(
        QStringLiteral("storm"),
        [plan, createOrders, self, stop = m_stop](const db::StandaloneContext &context) {
            QList<qint64> orders;
            {
                // Its own connection, closed before the storm: the storm speaks HTTP only.
                db::Connection connection(context.dsn, QStringLiteral("storm"));
                orders = createOrders ? createStormOrders(connection.database(), plan.orders)
                                      : pendingStormOrders(connection.database(), plan.orders);
            }
            if (orders.isEmpty())
                throw db::Error(tr("no PENDING orders are left to pay: tick \"Create fresh PENDING "
                                   "orders first\""));
            const qint64 created = createOrders ? orders.size() : 0;
            const auto report = [self, created](const StormCounts &counts) {
                StormCounts shown = counts;
                shown.ordersCreated = created;
                Worker::postTo(self,
                               [shown](StormRunner *runner) { Q_EMIT runner->progress(shown); });
            };
            StormCounts counts = runStorm(plan, orders, report, *stop);
            counts.ordersCreated = created;
            return counts;
        },
        this,
        [this](const StormCounts &counts) {
            m_running = false;
            Q_EMIT finished(counts);
        },
        [this](const db::Error &error) {
            m_running = false;
            Q_EMIT failed(db::userMessage(error));
        });
}

Job<bool> sandboxCheckJob()
{
    return jobOf(db::isSandboxDatabase);
}

} // namespace payops::console
