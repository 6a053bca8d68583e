#pragma once

#include "domain/callback/sideeffectkeys.h"
#include "domain/inspection/inspection.h"
#include "domain/inspection/posture.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops::db {
struct StandaloneContext;
}

namespace payops::console {

// The incident's ten steps, in the order an operator takes them: the runbook's "stop the bleeding
// first, then find the cause", then compensate, then the keys, then prove it is clean.
enum class PlaybookStep {
    Simulate = 1,
    Detect,
    StopBleeding,
    Scope,
    ProveRootCause,
    Compensate,
    Fix,
    Drain,
    InspectGreen,
    ExportReport,
};
constexpr int kPlaybookSteps = 10;

enum class StepState { ToDo, InProgress, Done, NotAvailable };
QString
stepStateName(StepState state); // "to do", "in progress", "done", "not available" (translated)

struct StepStatus
{
    PlaybookStep step = PlaybookStep::Simulate;
    StepState state = StepState::ToDo;
    QString reason; // one line: what the check found
};

// What only the console knows, not the database.
struct PlaybookContext
{
    bool stormRunning = false;
    bool reportWritten = false; // this console wrote an incident report since it connected
};

// Everything the checks read, in one job on a worker: the duplicate watch (advanced by a slice,
// as the overview does), the switch and the heartbeats, the backlog's own rows, the defence
// posture and the traces of one affected order. None of it reads history.
struct PlaybookFacts
{
    bool sandbox = false;
    DuplicateWatchFigures watch;
    bool watchMissing = false;
    qint64 pointsPerYuan = 100;
    InspectionFindings inspection; // meaningful once watch.complete()
    qint64 instancesAlive = 0;
    qint64 unsafeAlive = 0;
    qint64 unacknowledged = 0;  // live instances still applying an older switch version
    qint64 pendingRequests = 0; // four-eyes compensation requests waiting for a second operator
    QList<Defence> posture;
    // The incident reproduced: an unsafe-demo trace of the last hour released before commit.
    bool recentPhantom = false;
    // One affected order (open, or else the last one compensated) and what its traces show.
    qint64 evidenceOrder = 0;
    QString evidenceInstance;
    qint64 evidenceEarlyMicros = 0; // how long before its commit the lock went; 0: none did

    qint64 liveGroups() const;
    qint64 moneyAtRiskFen() const;
    // Duplicates were seen at all, live or compensated since: there is an incident to handle.
    bool incidentSeen() const { return liveGroups() > 0 || watch.superseded() > 0; }
    DefenceState defence(const QString &name) const;
    bool keysPresent() const;
    // The handler no longer pays twice: on a sandbox no unsafe-demo instance runs; elsewhere
    // the posture sees the lock held across the commit in the last hour's traces.
    bool handlerFixed() const;
};

// Reads the facts. Throws db::Error.
PlaybookFacts readPlaybookFacts(const QSqlDatabase &db, qint64 pointsPerYuan);

// Decides each step's state from the facts alone, so the same facts always give the same
// playbook. Returns the ten steps in order.
QList<StepStatus> evaluatePlaybook(const PlaybookFacts &facts, const PlaybookContext &context = {});

// The steps counted towards "n of m done": every step that exists on this database.
int countedSteps(const QList<StepStatus> &steps);
int doneSteps(const QList<StepStatus> &steps);

// A standalone job (console::Worker::submitStandalone) for the fix step: applySideEffectKeys()
// on a connection of its own with the worker's DSN, since the migrator needs a whole
// connection. It has no stop: the server finishes or rolls back the ALTER TABLE on its own.
// Throws db::Error.
SideEffectKeysResult applyPlaybookKeys(const db::StandaloneContext &context);

} // namespace payops::console
