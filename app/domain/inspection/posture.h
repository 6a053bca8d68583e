#pragma once

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops {
namespace mapping {
struct Mapping;
}

enum class DefenceState { Present, Missing, Unknown };
QString defenceStateName(DefenceState state); // "present" | "missing" | "unknown"

// One defence, what it stops and what it does not (docs/operations.md, "Defence posture"), seen on
// the live database.
struct Defence
{
    // Stable key: "uk_pay_no", "cas_affected_rows", "uk_order_tpl", "uk_order_type",
    // "lock_across_commit", "record_only_switch", "audit_chain", "scheduled_inspection".
    QString name;
    QString title; // one line a person reads
    DefenceState state = DefenceState::Unknown;
    QString letsThrough; // what its absence lets through
    QString evidence;    // what was looked at and what was found
};

// Reads the live database: information_schema, the heartbeat and switch rows, and index ranges
// over the last hour of order_state_log and callback_trace; never history, so it is cheap
// enough for a timer. The audit chain is checked from a recent tail only (the evidence says
// how far). Throws db::Error, also for a database payops never migrated.
QList<Defence> inspectPosture(const QSqlDatabase &db);
// The same for a team's own tables (docs/mapping.md): the coupon and points keys of payops's own
// tables give way to one key per side effect ("mapped_key_<name>", a unique key on exactly
// (order, key...) in any order) and to "mapped_order_cas" (the orders id a primary or unique key,
// so that a state change by CAS changes one row at most).
QList<Defence> inspectMappedPosture(const QSqlDatabase &db, const mapping::Mapping &mapping);

// True when no defence is missing. Unknown does not count as missing: it means there was
// nothing to judge by (no callbacks in the last hour, a check that does not exist yet), and a
// quiet hour must not page anyone. `payops posture` exits 1 exactly when this is false.
bool allPresent(const QList<Defence> &defences);

} // namespace payops
