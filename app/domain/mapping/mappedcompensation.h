#pragma once

#include "mapping.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>

namespace payops::mapping {

// What compensation does to one extra live copy of a side effect on the team's tables.
enum class MappedAction {
    Freeze,  // an UPDATE with the mapping's `freeze` SET clause
    Reverse, // an INSERT of a row with the value negated
    Finance, // the copy was used (`used` holds): never frozen, listed for finance to decide
};
QString mappedActionName(MappedAction action);

// The orders a compensation covers. Empty and not `everything` covers nothing: a list that
// matched nothing must not widen to every order.
struct MappedScope
{
    QList<qint64> orders;
    bool everything = false;

    static MappedScope all() { return {{}, true}; }
};

struct MappedCopy
{
    QString sideEffect; // the mapping's name for it
    MappedAction action = MappedAction::Freeze;
    qint64 targetId = 0;
    qint64 keptId = 0; // the lowest live id of its (order, key...) group, which stays
    qint64 orderId = 0;
    qint64 userId = 0;
    QString key;           // the key columns' values, joined with '/'
    qint64 valueFen = 0;   // a yuan or fen side effect's value, in fen
    qint64 points = 0;     // a points side effect's value
    qint64 reversalId = 0; // after a reverse: the row it inserted
};

struct MappedCompensationPlan
{
    QList<MappedCopy> copies; // by side effect as the mapping lists them, then by id
    bool cancelled = false;   // stopped between side effects: the plan is partial
    // What 100 points are worth in fen, for what each row weighs against the four-eyes
    // allowance (mapped_compensation.amount_fen): the caller's, as --fen-per-100-points.
    qint64 fenPerHundredPoints = 100;
    qint64 requestId = 0; // carried out under this approved request (four eyes)

    bool isEmpty() const { return copies.isEmpty(); }
    int count(const QString &sideEffect, MappedAction action) const;
    qint64 valueFen(const QString &sideEffect, MappedAction action) const;
    qint64 points(const QString &sideEffect, MappedAction action) const;
    // Everything frozen or reversed, in fen, the points at `fenPerHundredPoints`: what the
    // four-eyes threshold is held against (the copies left to finance are not compensated).
    qint64 moneyFen() const;
    int count(MappedAction action) const; // over every side effect

private:
    qint64 sum(const QString &sideEffect, MappedAction action, qint64 MappedCopy::*field) const;
};

// Every extra live copy in the scope: per side effect, the rows where `live` holds and that
// mapped_compensation does not record, grouped by (order, key...); the lowest id of each group
// stays. Reads the business tables and payops's own; changes nothing. `cancel` is looked at
// between side effects (one statement each). Throws db::Error.
MappedCompensationPlan planMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                                              const MappedScope &scope,
                                              const std::atomic<bool> *cancel = nullptr);

struct MappedCompensationOutcome
{
    QString batchId;
    QList<MappedCopy> done;    // frozen or reversed by this run (reversalId filled in)
    QList<MappedCopy> finance; // used copies, left as they are
    // On a Galera node: taken back by a batch whose COMMIT kept nothing (another node rolled it
    // back with no error). Still open: a run again takes them.
    QList<MappedCopy> notKept;
    int skipped = 0; // compensated by someone else meanwhile, or no longer live
    bool cancelled = false;
};

// The four-eyes threshold a mapped run is held against, as for payops's own tables: above it
// a new compensation is filed as a request for another operator (mappedrequest.h), and the
// database refuses the row that would go over (migration 0021).
struct MappedFourEyes
{
    qint64 moneyFen = 0; // the plan's, MappedCompensationPlan::moneyFen()
    qint64 soloFen = 0;  // what this account compensated alone in the four-eyes window
    qint64 thresholdFen = 0;
    bool needsRequest = false;
};
MappedFourEyes mappedFourEyes(const QSqlDatabase &db, const MappedCompensationPlan &plan);

// The statement compensation runs on the copies `ids` of one side effect's table: an UPDATE
// with the mapping's SET clause, or an INSERT ... SELECT of the reversed row. With `?` for the
// ids it is the shape kept in mapped_compensation.statement and the audit; the mapping check
// asks the server about it with ids that match no row.
QString mappedStatement(const Mapping &mapping, const SideEffectMapping &sideEffect,
                        const QString &ids = QStringLiteral("?"));

// Carries the plan out in transactions of `batchSize` copies. Each transaction locks its rows,
// keeps those still live, unused and unrecorded, records them in mapped_compensation (unique per
// row: a rerun, or a second operator at once, does nothing twice), freezes or reverses them and
// writes one audit entry each with the mapping's SHA-256 and the statement. On a Galera node
// each batch checks its record rows before COMMIT and reads them back after it. The account's
// grants are checked first, so a missing one is named before anything is written. The rows
// name the plan's requestId: under an approved request they count against its amount, not
// against the account's own allowance. Throws db::Error.
MappedCompensationOutcome
executeMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                          const MappedCompensationPlan &plan, const QString &reason,
                          const QString &ticket, int batchSize = 200,
                          const std::atomic<bool> *cancel = nullptr,
                          const std::function<void(int done, int total)> &progress = {});

} // namespace payops::mapping
