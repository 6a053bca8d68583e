#pragma once

// Apart from auditlog.h, which the console's widgets see: this one needs the database layer.

#include "db/connection.h"

#include <utility>

namespace payops {

// How many times runAudited() runs an audited action in all before it gives up: with the waits
// of db::waitBeforeRetry() between them, about ten seconds. On a cluster the loser of one
// meeting on the chain's head is no likelier to win the next, so what keeps three nodes busy
// with audited actions at once from failing one of them is runs enough to outlast the others'
// burst; ten runs were seen lost in a row on a loaded machine.
constexpr int kAuditedActionRuns = 200;
// Runs an audited action: `action` is one transaction of its own (or one statement) that
// appends to the chain. On a Galera cluster two audited actions at once on two nodes both
// write the chain's head (ops_audit_head), and certification aborts one with the deadlock
// (1213) at any of its statements or at COMMIT; it is run again here, so that an operator's
// flip or compensation does not fail because another node's action met it. `action` must
// read again what it decides on (the switch, the rows still to compensate), since a run again
// finds what the other node committed.
template <typename Action> auto runAudited(Action &&action)
{
    return db::retryingDeadlocks(kAuditedActionRuns, std::forward<Action>(action));
}

} // namespace payops
