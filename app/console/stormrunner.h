#pragma once

#include "db/dsn.h"
#include "job.h"
#include "domain/storm.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

class QThread;

namespace payops::console {

// Runs a storm (domain/storm.h) on a thread of its own, so the console stays live while it
// fires: it creates fresh PENDING orders first when asked (on a connection of that thread),
// then fires the plan's callbacks. Counts come back throttled to a few per second; stop() is
// seen by the storm between two requests.
class StormRunner final : public QObject
{
    Q_OBJECT

public:
    explicit StormRunner(QObject *parent = nullptr);
    // Stops a running storm and waits for it, bounded.
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
    QThread *m_thread = nullptr;
    std::shared_ptr<std::atomic_bool> m_stop;
};

// Whether the worker's database is a sandbox, the only kind a storm runs on. Throws db::Error.
Job<bool> sandboxCheckJob();

} // namespace payops::console
