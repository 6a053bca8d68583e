#include "stormrunner.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "worker.h"

#include <QPointer>
#include <QThread>

#include <stdexcept>

namespace payops::console {
namespace {

// How long closing the console waits for a stopped storm: the storm sees the stop between
// two requests, and a request in flight ends within the HTTP timeout at most.
constexpr int kStopWaitMs = 5000;

struct Outcome
{
    StormCounts counts;
    QString error;
};

} // namespace

StormRunner::StormRunner(QObject *parent)
    : QObject(parent)
{
}

StormRunner::~StormRunner()
{
    if (!m_thread)
        return;
    m_stop->store(true);
    m_thread->disconnect(this);
    if (!m_thread->wait(kStopWaitMs)) {
        // It holds nothing of ours but shared state and a guarded pointer: let it end alone.
        m_thread->setParent(nullptr);
        connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    }
}

bool StormRunner::isRunning() const
{
    return m_thread != nullptr;
}

void StormRunner::stop()
{
    if (m_stop)
        m_stop->store(true);
}

void StormRunner::start(const Dsn &dsn, const StormPlan &plan, bool createOrders)
{
    if (m_thread) {
        Q_EMIT failed(tr("a storm is already running: stop it first"));
        return;
    }
    const QString invalid = validateStormPlan(plan);
    if (!invalid.isEmpty()) {
        Q_EMIT failed(invalid);
        return;
    }
    m_stop = std::make_shared<std::atomic_bool>(false);
    auto outcome = std::make_shared<Outcome>();
    const QPointer<StormRunner> self(this);
    m_thread = QThread::create([dsn, plan, createOrders, outcome, self, stop = m_stop] {
        try {
            QList<qint64> orders;
            {
                // Its own connection, closed before the storm: the storm speaks HTTP only.
                db::Connection connection(dsn, QStringLiteral("storm"));
                orders = createOrders ? createStormOrders(connection.database(), plan.orders)
                                      : pendingStormOrders(connection.database(), plan.orders);
            }
            if (orders.isEmpty()) {
                outcome->error = tr("no PENDING orders are left to pay: tick \"Create fresh PENDING orders first\"");
                return;
            }
            const qint64 created = createOrders ? orders.size() : 0;
            const auto report = [self, created](const StormCounts &counts) {
                StormCounts shown = counts;
                shown.ordersCreated = created;
                Worker::postTo(self, [shown](StormRunner *runner) { Q_EMIT runner->progress(shown); });
            };
            outcome->counts = runStorm(plan, orders, report, *stop);
            outcome->counts.ordersCreated = created;
        } catch (const std::exception &error) {
            outcome->error = db::userMessage(error);
        }
    });
    m_thread->setObjectName(QStringLiteral("storm"));
    connect(m_thread, &QThread::finished, this, [this, outcome] {
        m_thread->deleteLater();
        m_thread = nullptr;
        if (outcome->error.isEmpty())
            Q_EMIT finished(outcome->counts);
        else
            Q_EMIT failed(outcome->error);
    });
    m_thread->start();
}

Job<bool> sandboxCheckJob()
{
    return jobOf(db::isSandboxDatabase);
}

} // namespace payops::console
