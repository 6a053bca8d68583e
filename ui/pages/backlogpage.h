#pragma once

#include "console/backlog.h"
#include "page.h"

#include <QTimer>

#include <atomic>
#include <memory>

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace payops {

class BacklogModel;
class SwitchControl;
struct DrainResult;

// The callbacks recorded while the endpoint was in RECORD_ONLY mode, oldest first, each with
// its raw body; and "Process backlog", the drain of `payops drain` with progress and a stop.
// It refuses while the switch is RECORD_ONLY and says why; the switch is on this page too.
// The drain runs on a worker of its own, so the list keeps refreshing and a page's cancel
// (KILL QUERY) can never hit it.
class BacklogPage final : public Page
{
    Q_OBJECT

public:
    BacklogPage(const Dsn &dsn, QWidget *parent = nullptr);
    ~BacklogPage() override;
    Q_DISABLE_COPY_MOVE(BacklogPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Asks for a confirmation, then drains. Does nothing while it may not.
    void processBacklog();
    bool isDraining() const { return m_cancel != nullptr; }
    QTableView *table() const { return m_table; }
    SwitchControl *switchControl() const { return m_switch; }

private:
    void refreshSummary();
    void showSummary(const console::BacklogSummary &summary);
    void updateActions();
    void startDrain();
    void drainFinished(const DrainResult &result, const QString &error);
    void showBody();

    std::unique_ptr<db::DbWorker> m_drainWorker;
    std::shared_ptr<std::atomic<bool>> m_cancel; // set while a drain runs
    console::BacklogSummary m_summary;
    bool m_summaryKnown = false;
    QTimer m_timer; // the summary reads again on its own; the list only when asked, keeping its place
    QLabel *m_headline = nullptr;
    SwitchControl *m_switch = nullptr;
    QPushButton *m_process = nullptr;
    QPushButton *m_stop = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;  // the drain's progress and result
    QLabel *m_refusal = nullptr; // why it may not run now
    QTableView *m_table = nullptr;
    BacklogModel *m_model = nullptr;
    QLabel *m_bodyTitle = nullptr;
    QPlainTextEdit *m_body = nullptr;
};

} // namespace payops
