#pragma once

#include "console/consolesettings.h"
#include "page.h"

#include <QTimer>

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
    InstancesPage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InstancesPage)

    void refresh() override;
    void setSettings(const console::ConsoleSettings &settings);
    void setPrivileges(const Privileges &privileges) override;
    SwitchControl *switchControl() const { return m_switch; }
    InstanceModel *model() const { return m_model; }

private:
    console::ConsoleSettings m_settings;
    QTimer m_timer;
    QLabel *m_summary = nullptr;
    SwitchControl *m_switch = nullptr;
    QTableView *m_table = nullptr;
    InstanceModel *m_model = nullptr;
    console::InstanceProber *m_prober = nullptr;
    bool m_pending = false;
};

} // namespace payops
