#pragma once

#include "db/dsn.h"
#include "domain/inspection/inspectionrun.h"
#include "domain/mapping/mapping.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <memory>
#include <optional>

namespace payops::db {
class DbWorker;
class Error;
} // namespace payops::db

namespace payops::console {

// What a run found that the run before it did not: the decision behind the console's alert.
// Counts are compared, not sets: each finding only grows until someone acts (a duplicate until
// it is compensated, a late payment until it is drained, a second payment forever, as no table
// records its refund yet), so "more than last time" is "something new happened". The first run
// ever has nothing before it: whatever it finds is new.
struct NewFindings
{
    bool duplicates = false;   // more open duplicate groups, or more extra copies
    bool latePayments = false; // more unmatched callbacks whose order exists now
    bool refundsOwed = false;  // more payments made a second time by customers

    bool any() const { return duplicates || latePayments || refundsOwed; }
    // "new duplicates (12 groups), 1 late payment(s) to apply", translated
    QString describe(const InspectionRun &run) const;

    static NewFindings between(const std::optional<InspectionRun> &previous,
                               const InspectionRun &current);
};

// One scheduled run as it came back from the worker.
struct ScheduledInspection
{
    InspectionRun run; // id 0 when not stored
    StoredRun stored;
    std::optional<InspectionRun> previous; // the newest run stored before it, from any source
    NewFindings fresh;
    // The duplicate watch's first count is not done yet: no result, nothing stored.
    bool waitingForFirstCount = false;
    int percentScanned = 0;
};

// Runs the inspection of `payops inspect` on a schedule, on a worker thread with a connection
// of its own (never the UI thread's), stores each run (source "console") and says what was
// new. The interval is the console's InspectionMinutes setting, followed live; 0 is off. A
// tick while a run is still going is skipped, so a slow server never piles runs up.
class InspectionScheduler final : public QObject
{
    Q_OBJECT

public:
    // With a mapping, each run counts the duplicates of the team's own tables per side effect
    // through the mapped watch, as payops inspect --mapping does.
    explicit InspectionScheduler(const Dsn &dsn,
                                 std::optional<mapping::Mapping> mapping = std::nullopt,
                                 QObject *parent = nullptr);
    ~InspectionScheduler() override;
    Q_DISABLE_COPY_MOVE(InspectionScheduler)

    // Replaces the setting's interval (tests run every few hundred milliseconds); zero is off.
    void overrideInterval(std::chrono::milliseconds interval);
    bool isActive() const { return m_timer.isActive(); }
    bool isRunning() const { return m_running; }
    // Runs once now, unless a run is under way.
    void runNow();

Q_SIGNALS:
    void finished(const payops::console::ScheduledInspection &result);
    void failed(const QString &message);
    void scheduleChanged();

private:
    void followSettings();
    void applyInterval(std::chrono::milliseconds interval);

    std::unique_ptr<db::DbWorker> m_worker;
    std::optional<mapping::Mapping> m_mapping;
    QTimer m_timer;
    bool m_running = false;
    bool m_overridden = false;
};

} // namespace payops::console
