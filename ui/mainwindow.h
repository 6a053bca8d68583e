#pragma once

#include "db/dsn.h"
#include "pages/page.h"

#include <QMainWindow>
#include <QTimer>

#include <optional>

class QLabel;
class QListWidget;
class QPushButton;
class QStackedWidget;

namespace payops {

class DuplicatesPage;
class EvidencePage;
class FindingsNotifier;
class InstancesPage;
class MappingCheckBar;
class OverviewPage;
namespace console {
class LocalInstances;
class ReadSourceMonitor;
class StormRunner;
} // namespace console
class PlaybookDock;
class StateMachinePage;

// The console: a list of pages on the left, the page on the right, and a banner across the
// top while the database is unreachable. Losing the connection never closes a page or drops
// its filters: the pages stay as they are and are read again once the server answers.
class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(std::optional<Dsn> dsn, QWidget *parent = nullptr);
    ~MainWindow() override;
    Q_DISABLE_COPY_MOVE(MainWindow)

    // Reads the team's own tables through the target's mapping when it has one.
    void connectTo(const console::Target &target);
    void showPage(Page::Id id);
    Page *page(Page::Id id) const;
    void refresh();
    void openOrder(qint64 orderId);
    void openOrderNumber(const QByteArray &orderNo);
    // The local callback endpoints and the storm the simulation page drives; the window owns
    // them so they outlive a reconnect, and the instances stop when the window goes.
    console::LocalInstances *localInstances() const { return m_localInstances; }
    console::StormRunner *stormRunner() const { return m_stormRunner; }
    // The incident's playbook, docked on the right; shown at first on a sandbox.
    PlaybookDock *playbook() const { return m_playbook; }
    // Tells the desktop about new findings of the console's scheduled inspections.
    FindingsNotifier *findingsNotifier() const { return m_findingsNotifier; }
    // Whether the mapping holds on the connected database, checked on connecting.
    MappingCheckBar *mappingCheck() const { return m_mappingCheck; }
    // How far the read database is behind the primary; nullptr without --read-db.
    console::ReadSourceMonitor *readSourceMonitor() const { return m_readSource; }

Q_SIGNALS:
    void connected();
    // The account's grants have been probed and handed to every page.
    void privilegesKnown();

private:
    void openConnectionDialog();
    void openSettings();
    void openReportDialog();
    void onConnectionLost(const QString &reason);
    void onConnectionRestored();
    void retryConnection();
    void clearPages();
    void probeAccount();
    void watchReadSource(const console::Target &target);

    std::optional<Dsn> m_dsn;
    std::optional<Dsn> m_readingDsn; // where the pages read: the replica, with --read-db
    QListWidget *m_nav = nullptr;
    QStackedWidget *m_stack = nullptr;
    QWidget *m_banner = nullptr;
    QLabel *m_bannerText = nullptr;
    QLabel *m_connectionLabel = nullptr;
    QLabel *m_accountLabel = nullptr;
    QLabel *m_readSourceLabel = nullptr;
    console::ReadSourceMonitor *m_readSource = nullptr;
    bool m_accountProbed = false;
    QList<Page *> m_pages;
    console::LocalInstances *m_localInstances = nullptr;
    console::StormRunner *m_stormRunner = nullptr;
    QTimer m_retryTimer;
    int m_retrySeconds = 1;
    bool m_lost = false;
    PlaybookDock *m_playbook = nullptr;
    FindingsNotifier *m_findingsNotifier = nullptr;
    MappingCheckBar *m_mappingCheck = nullptr;
};

} // namespace payops
