#include "statemachine.h"

#include "db/connection.h"

#include <QHash>
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
            if (!e.legal || e.rejected || e.from == e.to || !layer.contains(e.from) || !layer.contains(e.to))
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

} // namespace

const StateNode *StateMachineSnapshot::state(const QString &name) const
{
    for (const StateNode &s : states)
        if (s.name == name)
            return &s;
    return nullptr;
}

StateMachineSnapshot loadStateMachine(const QSqlDatabase &db, const TimeWindow &window)
{
    StateMachineSnapshot snapshot;
    QSqlQuery states = db::exec(db, QStringLiteral(
        "SELECT s.name, s.is_terminal, COALESCE(c.n, 0) FROM order_state s "
        "LEFT JOIN (SELECT status, COUNT(*) AS n FROM orders GROUP BY status) c ON c.status = s.name "
        "ORDER BY s.sort_order, s.name"));
    while (states.next())
        snapshot.states << StateNode{states.value(0).toString(), states.value(1).toBool(), states.value(2).toLongLong()};

    const QString since = window.isAll() ? QString() : QStringLiteral(" AND l.created_at >= '%1'").arg(window.fromText());
    QSqlQuery legal = db::exec(db, QStringLiteral(
        "SELECT t.from_state, t.to_state, t.event, "
        "       (SELECT COUNT(*) FROM order_state_log l WHERE l.from_state = t.from_state "
        "           AND l.to_state = t.to_state AND l.accepted = 1%1) "
        "FROM order_transition t ORDER BY t.from_state, t.to_state").arg(since));
    while (legal.next()) {
        StateEdge edge;
        edge.from = legal.value(0).toString();
        edge.to = legal.value(1).toString();
        edge.event = legal.value(2).toString();
        edge.count = legal.value(3).toLongLong();
        snapshot.edges << edge;
    }

    // Accepted transitions the table does not allow would be a defect of their own: show them.
    QSqlQuery attempts = db::exec(db, QStringLiteral(
        "SELECT l.from_state, l.to_state, l.accepted, l.reason, COUNT(*), "
        "       MAX(t.from_state IS NOT NULL) "
        "FROM order_state_log l LEFT JOIN order_transition t "
        "  ON t.from_state = l.from_state AND t.to_state = l.to_state "
        "WHERE (l.accepted = 0 OR t.from_state IS NULL)%1 "
        "GROUP BY l.from_state, l.to_state, l.accepted, l.reason "
        "ORDER BY l.from_state, l.to_state, l.accepted, l.reason").arg(since));
    while (attempts.next()) {
        const QString from = attempts.value(0).toString();
        const QString to = attempts.value(1).toString();
        const bool rejected = !attempts.value(2).toBool();
        StateEdge *edge = nullptr;
        for (StateEdge &e : snapshot.edges)
            if (e.from == from && e.to == to && e.rejected == rejected && (rejected || !e.legal))
                edge = &e;
        if (!edge) {
            StateEdge fresh;
            fresh.from = from;
            fresh.to = to;
            fresh.rejected = rejected;
            fresh.legal = attempts.value(5).toBool();
            snapshot.edges << fresh;
            edge = &snapshot.edges.last();
        }
        const qint64 n = attempts.value(4).toLongLong();
        edge->count += n;
        const QString reason = attempts.value(3).toString();
        if (rejected) {
            if (!edge->reasons.isEmpty())
                edge->reasons += QStringLiteral(", ");
            edge->reasons += QStringLiteral("%1 %2").arg(reason.isEmpty() ? QStringLiteral("no reason") : reason).arg(n);
        }
    }
    assignLayers(snapshot.states, snapshot.edges);
    return snapshot;
}

} // namespace payops::console
