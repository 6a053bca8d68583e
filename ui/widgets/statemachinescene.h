#pragma once

#include "console/statemachine.h"

#include <QGraphicsScene>

namespace payops {

// The order state machine as the table order_transition defines it: states as boxes with
// their live order counts, legal edges as arrows with their transition counts, and rejected
// attempts in red. Selecting a state or an edge (its arrow or its label) asks for its orders.
class StateMachineScene final : public QGraphicsScene
{
    Q_OBJECT

public:
    // Item data keys, for the page and for tests.
    enum DataKey { KindKey = 0, NameKey, FromKey, ToKey, RejectedKey, CountKey };

    explicit StateMachineScene(QObject *parent = nullptr);
    ~StateMachineScene() override;
    Q_DISABLE_COPY_MOVE(StateMachineScene)

    void setSnapshot(const console::StateMachineSnapshot &snapshot);
    // Selects the rejected edge with the most attempts, if there is one.
    void selectWorstRejectedEdge();
    const console::StateMachineSnapshot &snapshot() const { return m_snapshot; }

Q_SIGNALS:
    void stateActivated(const QString &state);
    void edgeActivated(const QString &from, const QString &to, bool rejected);

private:
    void addState(const console::StateNode &node);
    void addEdge(const console::StateEdge &edge, int parallelIndex);
    void onSelectionChanged();

    console::StateMachineSnapshot m_snapshot;
};

} // namespace payops
