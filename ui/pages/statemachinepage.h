#pragma once

#include "page.h"

#include <memory>

class QLabel;
class QGraphicsView;
class QTableView;

namespace payops::console {
class ActivityTally;
}
namespace payops::mapping {
class MappedStateTally;
}

namespace payops {

class BusyIndicator;
class OrderModel;
class StateMachineScene;
class WindowCombo;

// The order state machine drawn from order_transition, with live counts, and the orders
// behind whatever state or edge the user clicks.
class StateMachinePage final : public Page
{
    Q_OBJECT

public:
    StateMachinePage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(StateMachinePage)

    void refresh() override;
    StateMachineScene *scene() const { return m_scene; }
    OrderModel *orders() const { return m_orders; }

protected:
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void fitDiagram();
    void select(const QString &state, const QString &from, const QString &to, bool rejected);

    WindowCombo *m_window = nullptr;
    StateMachineScene *m_scene = nullptr;
    QGraphicsView *m_view = nullptr;
    QLabel *m_selection = nullptr;
    QTableView *m_table = nullptr;
    OrderModel *m_orders = nullptr;
    BusyIndicator *m_busy = nullptr;
    bool m_pending = false;
    // Read and advanced on the page's worker only; counts what is new at each refresh.
    std::shared_ptr<console::ActivityTally> m_tally;
    // The same on the team's own tables: what changed since, with [orders] updated_at.
    std::shared_ptr<mapping::MappedStateTally> m_mappedTally;
};

} // namespace payops
