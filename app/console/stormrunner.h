#pragma once

#include "db/dsn.h"
#include "job.h"
#include "lab/storm.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

namespace payops::db {
class DbWorker;
}

namespace payops::console {

// Runs a storm (lab/storm.h) as a standalone job of a database worker of its own, so the
// console stays live while it fires: it creates fresh PENDING orders first when asked (on a
// connection of the job's), then fires the plan's callbacks. Counts come back throttled to a
// few per second; stop() is seen by the storm between two requests, and the counts so far
// still arrive as finished().
class StormRunner final : public QObject
{
    Q_OBJECT

public:
    explicit StormRunner(QObject *parent = nullptr);
    // Stops a running storm and returns at once; the storm ends on its own.
    ~StormRunner() override;
    Q_DISABLE_COPY_MOVE(StormRunner)

    // Does nothing (but fail) while a storm runs.
    void start(const Dsn &dsn, const payops::StormPlan &plan, bool createOrders);
    void stop();
    bool isRunning() const;

Q_SIGNALS:
    void progress(const payops::StormCounts &counts);
    void finished(const payops::StormCounts &counts);
    void failed(const QString &message);

private:
    std::unique_ptr<db::DbWorker> m_worker; // the running storm's, or the last one's
    bool m_running = false;
    // Not the job's own stop flag, which would also drop the counts of a stopped storm.
    std::shared_ptr<std::atomic_bool> m_stop;
};

// Whether the worker's database is a sandbox, the only kind a storm runs on. Throws db::Error.
Job<bool> sandboxCheckJob();

} // namespace payops::console
