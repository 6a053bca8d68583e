#pragma once

#include "page.h"

class QLabel;

namespace payops {

class BusyIndicator;
class SwitchControl;
class Tile;
namespace console {
struct OverviewFigures;
struct DatabaseSummary;
}

// The first page: what the database is, and the six figures an operator needs in the first
// minute, each a tile that leads to the page behind it. Refreshes itself.
class OverviewPage final : public Page
{
    Q_OBJECT

public:
    OverviewPage(const Dsn &dsn, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(OverviewPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    SwitchControl *switchControl() const { return m_switch; }

private:
    void show(const console::DatabaseSummary &summary, const console::OverviewFigures &figures);
    void showError(const QString &message);

    QLabel *m_headline = nullptr;
    QLabel *m_details = nullptr;
    QLabel *m_updated = nullptr;
    BusyIndicator *m_busy = nullptr;
    SwitchControl *m_switch = nullptr;
    Tile *m_mode = nullptr;
    Tile *m_rate = nullptr;
    Tile *m_duplicates = nullptr;
    Tile *m_backlog = nullptr;
    Tile *m_money = nullptr;
    Tile *m_instances = nullptr;
    bool m_pending = false;
};

} // namespace payops
