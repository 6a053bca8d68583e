#pragma once

#include "page.h"

class QLabel;
class QTableView;

namespace payops {

class InstanceModel;
class SwitchControl;
namespace console {
class InstanceProber;
}

// The callback service instances: heartbeat rows, and what each live one's /healthz and
// /metrics say, refreshed on the overview's interval.
class InstancesPage final : public Page
{
    Q_OBJECT

public:
    InstancesPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InstancesPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    SwitchControl *switchControl() const { return m_switch; }
    InstanceModel *model() const { return m_model; }

private:
    void showAliveThreshold(int seconds);

    QLabel *m_summary = nullptr;
    QLabel *m_note = nullptr; // says what alive means, with its seconds
    SwitchControl *m_switch = nullptr;
    QTableView *m_table = nullptr;
    InstanceModel *m_model = nullptr;
    console::InstanceProber *m_prober = nullptr;
    bool m_pending = false;
};

} // namespace payops
