#pragma once

#include "activitytally.h"
#include "domain/mapping/mappedorders.h"
#include "domain/mapping/mapping.h"
#include "job.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <memory>

namespace payops::console {

struct StateNode
{
    QString name;
    bool terminal = false;
    qint64 orders = 0; // orders that entered this state in the window (PENDING: created in it)
    int layer = 0;     // distance from the initial state along legal edges, for drawing
    int row = 0;       // position within its layer
    bool named = true; // false: a value of the team's status column no state of payops names
};

// An edge as the diagram draws it: a legal edge with its accepted transitions, or the
// rejected attempts on one (from, to) pair, such as PAID->PAID order_already_paid.
struct StateEdge
{
    QString from;
    QString to;
    QString event;     // from order_transition; empty for an edge the table does not define
    bool legal = true; // defined in order_transition
    bool rejected = false;
    qint64 count = 0;
    QString reasons; // rejected edges: "order_already_paid 30, ..."
};

struct StateMachineSnapshot
{
    QList<StateNode> states;
    QList<StateEdge> edges;
    // False on the team's own tables: they keep no log of transitions, so no edge has a count
    // and a state counts the orders created in the window that are in it now.
    bool transitionsKnown = true;

    const StateNode *state(const QString &name) const;
};

// The states and legal edges (two small tables) with the tally's window, advanced by this
// call: what it reads is what is new since the last call. Throws db::Error.
StateMachineSnapshot loadStateMachine(const QSqlDatabase &db, ActivityTally &tally);

// The state machine page's refresh as a worker's job, over the last `seconds`; the tally
// lives on between refreshes and is used on the worker's thread only.
Job<StateMachineSnapshot> stateMachineJob(std::shared_ptr<ActivityTally> tally, qint64 seconds);

// The same on the team's own tables: payops's states and legal edges, each state with the
// orders created in the tally's window that are in it now (mapping::MappedStateTally: with
// [orders] updated_at, what changed since its last advance; without, one GROUP BY on the
// created_at index over the window), and each value no state names as a state of its own, drawn
// apart. Throws db::Error.
StateMachineSnapshot loadMappedStateMachine(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                            mapping::MappedStateTally &tally);

// Its refresh as a worker's job over the last `seconds`; the tally lives on between refreshes
// and is used on the worker's thread only.
Job<StateMachineSnapshot> mappedStateMachineJob(std::shared_ptr<mapping::MappedStateTally> tally,
                                                mapping::Mapping mapping, qint64 seconds);

} // namespace payops::console
