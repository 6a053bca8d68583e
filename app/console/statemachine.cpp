#include "statemachine.h"

#include "databasesummary.h"
#include "db/connection.h"

#include <QHash>
#include <QSet>
#include <QSqlQuery>

namespace payops::console {
namespace {

// Longest path from a state nobody enters, along legal edges; the table is a DAG today, the
// iteration bound keeps a future cycle from hanging the console.
void assignLayers(QList<StateNode> &states, const QList<StateEdge> &edges)
{
    QHash<QString, int> layer;
    for (const StateNode &s : states)
        layer.insert(s.name, 0);
    for (int round = 0; round < states.size(); ++round) {
        bool changed = false;
        for (const StateEdge &e : edges) {
            if (!e.legal || e.rejected || e.from == e.to || !layer.contains(e.from) ||
                !layer.contains(e.to))
                continue;
            if (layer.value(e.to) < layer.value(e.from) + 1) {
                layer[e.to] = layer.value(e.from) + 1;
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    QHash<int, int> rows;
    for (StateNode &s : states) {
        s.layer = layer.value(s.name);
        s.row = rows[s.layer]++;
    }
}

// payops's states and the legal edges between them, without counts: two small tables.
StateMachineSnapshot readDiagram(const QSqlDatabase &db)
{
    StateMachineSnapshot snapshot;
    QSqlQuery states = db::exec(
        db, QStringLiteral("SELECT name, is_terminal FROM order_state ORDER BY sort_order, name"));
    while (states.next())
        snapshot.states << StateNode{states.value(0).toString(), states.value(1).toBool()};
    QSqlQuery legal =
        db::exec(db, QStringLiteral("SELECT from_state, to_state, event FROM order_transition "
                                    "ORDER BY from_state, to_state"));
    while (legal.next()) {
        StateEdge edge;
        edge.from = legal.value(0).toString();
        edge.to = legal.value(1).toString();
        edge.event = legal.value(2).toString();
        snapshot.edges << edge;
    }
    return snapshot;
}

} // namespace

const StateNode *StateMachineSnapshot::state(const QString &name) const
{
    for (const StateNode &s : states)
        if (s.name == name)
            return &s;
    return nullptr;
}

StateMachineSnapshot loadStateMachine(const QSqlDatabase &db, ActivityTally &tally)
{
    const RecentActivity activity = tally.advance(db);
    StateMachineSnapshot snapshot = readDiagram(db);
    for (StateNode &node : snapshot.states)
        node.orders = activity.entered(node.name);
    QSet<QPair<QString, QString>> legalEdges;
    for (const StateEdge &edge : std::as_const(snapshot.edges))
        legalEdges.insert({edge.from, edge.to});

    // Accepted transitions the table does not allow would be a defect of their own: show them.
    for (const TransitionCount &attempt : activity.transitions) {
        const bool rejected = !attempt.accepted;
        const bool isLegal = legalEdges.contains({attempt.from, attempt.to});
        StateEdge *edge = nullptr;
        for (StateEdge &e : snapshot.edges)
            if (e.from == attempt.from && e.to == attempt.to && e.rejected == rejected &&
                (rejected || e.legal == isLegal))
                edge = &e;
        if (!edge) {
            StateEdge fresh;
            fresh.from = attempt.from;
            fresh.to = attempt.to;
            fresh.rejected = rejected;
            fresh.legal = isLegal;
            snapshot.edges << fresh;
            edge = &snapshot.edges.last();
        }
        edge->count += attempt.count;
        if (rejected) {
            if (!edge->reasons.isEmpty())
                edge->reasons += QStringLiteral(", ");
            edge->reasons += QStringLiteral("%1 %2").arg(
                attempt.reason.isEmpty() ? QStringLiteral("no reason") : attempt.reason,
                QString::number(attempt.count));
        }
    }
    assignLayers(snapshot.states, snapshot.edges);
    return snapshot;
}

Job<StateMachineSnapshot> stateMachineJob(std::shared_ptr<ActivityTally> tally, qint64 seconds)
{
    return [tally = std::move(tally), seconds](const QSqlDatabase &db) {
        tally->setWindowSeconds(seconds);
        return loadStateMachine(db, *tally);
    };
}

StateMachineSnapshot loadMappedStateMachine(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                            mapping::MappedStateTally &tally)
{
    StateMachineSnapshot snapshot = readDiagram(db);
    snapshot.transitionsKnown = false;
    const auto counts = tally.advance(db, mapping);
    assignLayers(snapshot.states, snapshot.edges);
    int apart = 0;
    for (const StateNode &node : std::as_const(snapshot.states))
        apart = std::max(apart, node.layer + 1);
    int row = 0;
    for (const mapping::MappedStateCount &count :
         counts.value_or(QList<mapping::MappedStateCount>{})) {
        if (count.named) {
            for (StateNode &node : snapshot.states)
                if (node.name == count.state)
                    node.orders = count.orders;
            continue;
        }
        StateNode raw;
        raw.name = count.state;
        raw.orders = count.orders;
        raw.named = false;
        raw.layer = apart; // a column of its own: no edge leads there
        raw.row = row++;
        snapshot.states << raw;
    }
    return snapshot;
}

Job<StateMachineSnapshot> mappedStateMachineJob(std::shared_ptr<mapping::MappedStateTally> tally,
                                                mapping::Mapping mapping, qint64 seconds)
{
    return
        [tally = std::move(tally), mapping = std::move(mapping), seconds](const QSqlDatabase &db) {
            tally->setWindowSeconds(seconds);
            return loadMappedStateMachine(db, mapping, *tally);
        };
}

} // namespace payops::console
