#pragma once

#include "dberror.h"
#include "delivery.h"
#include "dsn.h"

#include <QDeadlineTimer>
#include <QObject>
#include <QSqlDatabase>

#include <functional>
#include <memory>
#include <optional>

class QThread;

namespace payops::db {

class Connection;
class JobTracker;

struct WorkerJob
{
    quint64 id = 0;
    QString key;
    quint64 generation = 0;
    // Runs on the back's thread; throws whatever the job throws.
    std::function<Delivery(const QSqlDatabase &)> work;
    // False for a standalone job: the back's connection is neither opened for it nor passed
    // (work gets an invalid QSqlDatabase), and no KILL QUERY is ever sent for it.
    bool onConnection = true;
};

struct WorkerOutcome
{
    quint64 jobId = 0;
    Delivery deliver;           // the result, unless it failed or was skipped
    std::optional<Error> error; // every failure, whatever the job threw
};

// The half of a DbWorker on its own thread: it owns the thread and the connection, runs the
// jobs the front queues, one at a time, and reports each outcome by a queued signal, which
// stops reaching the front the moment the front is gone. Once the front has let go, it
// finishes the job it runs, skips the stale ones queued, closes the connection and deletes
// itself and its thread; no other thread ever waits for that, except waitForAll() at exit.
class DbWorkerBack final : public QObject
{
    Q_OBJECT

public:
    // A new back on a thread of its own, started.
    static DbWorkerBack *launch(Dsn dsn, std::shared_ptr<JobTracker> tracker);
    ~DbWorkerBack() override;
    Q_DISABLE_COPY_MOVE(DbWorkerBack)

    // Interrupts job `jobId` with KILL QUERY if the server still runs it, from a short-lived
    // connection on a thread of its own (the back's connection is busy with the query). Never
    // waits, and never touches the job after it.
    static void kill(const Dsn &dsn, std::shared_ptr<JobTracker> tracker, quint64 jobId);
    // Waits until every back whose front is gone has ended, and every kill is sent, or until
    // the deadline, and says whether they all did. Call on the thread that made the workers.
    static bool waitForAll(QDeadlineTimer deadline);

    // On the front's thread, as the front goes (after JobTracker::abandon()): the back ends
    // once the jobs queued before are done, and this object may be gone any time after.
    void letGo();
    // On the back's thread.
    void run(const payops::db::WorkerJob &job);

Q_SIGNALS:
    void done(const payops::db::WorkerOutcome &outcome);
    void connectionLost(const QString &reason);
    void connectionRestored();

private:
    DbWorkerBack(Dsn dsn, std::shared_ptr<JobTracker> tracker);
    void end();
    void noteOutcome(const Error *error);

    QThread *m_thread = nullptr; // this object's thread, deleted after it
    Dsn m_dsn;
    std::shared_ptr<JobTracker> m_tracker;
    std::unique_ptr<Connection> m_connection;
    bool m_lost = false;
};

} // namespace payops::db
