#pragma once

#include "activitytally.h"
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

    const StateNode *state(const QString &name) const;
};

// The states and legal edges (two small tables) with the tally's window, advanced by this
// call: what it reads is what is new since the last call. Throws db::Error.
StateMachineSnapshot loadStateMachine(const QSqlDatabase &db, ActivityTally &tally);

// The state machine page's refresh as a worker's job, over the last `seconds`; the tally
// lives on between refreshes and is used on the worker's thread only.
Job<StateMachineSnapshot> stateMachineJob(std::shared_ptr<ActivityTally> tally, qint64 seconds);

} // namespace payops::console
