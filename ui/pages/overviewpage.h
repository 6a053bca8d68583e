#pragma once

#include "domain/inspection/readsource.h"
#include "domain/mapping/mappedwatch.h"
#include "page.h"

#include <memory>

class QLabel;

namespace payops {

class BusyIndicator;
class LiveTrafficChart;
class SwitchControl;
class Tile;
namespace console {
class LiveTrafficReader;
struct OverviewFigures;
struct DatabaseSummary;
class ActivityTally;
struct OverviewTallies;
} // namespace console

// The first page: what the database is, and the six figures an operator needs in the first
// minute, each a tile that leads to the page behind it. Refreshes itself.
class OverviewPage final : public Page
{
    Q_OBJECT

public:
    OverviewPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(OverviewPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // How far the replica the page reads is behind: past the console's threshold every tile
    // and a line above them say that the figures are stale.
    void setReadSource(const ReadSource &source);
    SwitchControl *switchControl() const { return m_switch; }
    LiveTrafficChart *trafficChart() const { return m_chart; }
    // Reads what is new for the live chart (on its own timer; public for tests).
    void refreshTraffic();

    static constexpr int kTrafficRefreshMs = 2000;

Q_SIGNALS:
    void trafficShown();

private:
    void show(const console::DatabaseSummary &summary, const console::OverviewFigures &figures);
    void showError(const QString &message);
    // The duplicates and money tiles from the mapped watch, per side effect.
    void showMapped(const mapping::MappedWatchFigures &watch, const console::OverviewFigures &f,
                    const QString &notes);

    QLabel *m_headline = nullptr;
    QLabel *m_details = nullptr;
    QLabel *m_updated = nullptr;
    QLabel *m_staleNote = nullptr;
    BusyIndicator *m_busy = nullptr;
    SwitchControl *m_switch = nullptr;
    Tile *m_mode = nullptr;
    Tile *m_rate = nullptr;
    Tile *m_duplicates = nullptr;
    Tile *m_backlog = nullptr;
    Tile *m_money = nullptr;
    Tile *m_instances = nullptr;
    bool m_pending = false;
    // Read and advanced on the page's worker only: the last hour's counts, kept between refreshes.
    std::shared_ptr<console::ActivityTally> m_activity;
    std::shared_ptr<console::OverviewTallies>
        m_tallies; // used on the worker, one refresh at a time
    LiveTrafficChart *m_chart = nullptr;
    // The chart's window in memory, read on the page's worker thread one job at a time.
    std::shared_ptr<console::LiveTrafficReader> m_traffic;
    bool m_trafficPending = false;
};

} // namespace payops
