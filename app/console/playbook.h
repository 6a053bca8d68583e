#pragma once

#include "domain/callback/sideeffectkeys.h"
#include "domain/inspection/inspection.h"
#include "domain/inspection/posture.h"
#include "domain/mapping/mappedwatch.h"

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
    qint64 gatewaysAlive = 0;   // live gateways: payops-callbackd in front of a team's handler
    qint64 pendingRequests = 0; // four-eyes compensation requests waiting for a second operator
    QList<Defence> posture;
    // The incident reproduced: an unsafe-demo trace of the last hour released before commit.
    bool recentPhantom = false;
    // One affected order (open, or else the last one compensated) and what its traces show.
    qint64 evidenceOrder = 0;
    QString evidenceInstance;
    qint64 evidenceEarlyMicros = 0; // how long before its commit the lock went; 0: none did
    // With a mapping (docs/mapping.md), the team's tables: the duplicates are the mapped
    // watch's, the posture is inspectMappedPosture's, and the copies compensated are
    // mapped_compensation's. `watch` stays empty; the switch, backlog and traces are still
    // payops's own.
    bool mapped = false;
    mapping::MappedWatchFigures mappedWatch;
    qint64 mappedCompensated = 0;

    qint64 liveGroups() const;
    qint64 moneyAtRiskFen() const;
    qint64 openOrders() const { return mapped ? mappedWatch.openOrders : watch.openOrders; }
    bool watchComplete() const { return mapped ? mappedWatch.complete() : watch.complete(); }
    int percentScanned() const
    {
        return mapped ? mappedWatch.percentScanned() : watch.percentScanned();
    }
    // Copies compensation took back since the watch began (or, mapped, ever).
    qint64 compensatedCopies() const { return mapped ? mappedCompensated : watch.superseded(); }
    // Duplicates were seen at all, live or compensated since: there is an incident to handle.
    bool incidentSeen() const { return liveGroups() > 0 || compensatedCopies() > 0; }
    DefenceState defence(const QString &name) const;
    // payops's own uk_order_tpl and uk_order_type; mapped, every side effect's unique key.
    bool keysPresent() const;
    // The handler no longer pays twice: on a sandbox no unsafe-demo instance runs; elsewhere
    // the posture sees the lock held across the commit in the last hour's traces.
    bool handlerFixed() const;
};

// The copies compensated on a team's tables, kept between checks: counted once in
// mapped_compensation, then by what is new. Each copy compensated writes one audit entry
// (compensation.mapped_freeze or compensation.mapped_reverse) in the transaction that records
// it, and the audit log numbers its entries one after the other under its head's lock, in the
// order they commit: the entries past the head last seen, up to the head now, are exactly the
// copies compensated since. One object per worker thread, one advance at a time.
class MappedCompensatedTally final
{
public:
    qint64 advance(const QSqlDatabase &db); // throws db::Error; a failure keeps the last count

private:
    qint64 m_count = 0;
    qint64 m_auditLastId = -1; // the audit head when m_count was true; -1: never counted
};

// Reads the facts; with `mapping`, of the team's tables, `tally` keeping the count of the copies
// compensated between checks (without one, they are counted afresh). Throws db::Error.
PlaybookFacts readPlaybookFacts(const QSqlDatabase &db, qint64 pointsPerYuan,
                                const mapping::Mapping *mapping = nullptr,
                                MappedCompensatedTally *tally = nullptr);

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
