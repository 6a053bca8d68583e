#pragma once

#include "console/backlog.h"
#include "domain/callback/backlogdrainer.h"
#include "page.h"

#include <atomic>
#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;

namespace payops {

class BacklogModel;
class ReceivedCallbackView;
class SwitchControl;

// The callbacks waiting in pay_callback_log, oldest first, each as the platform sent it: those
// recorded while the endpoint was in RECORD_ONLY mode, with "Process backlog" (the drain of
// `payops drain`), and those that arrived before their order (UNMATCHED), a finding with
// "Apply matched callbacks" (`payops drain --unmatched`), and a gateway's rows that have no
// final answer from the team's handler yet, with "Forward to upstream" (`payops drain
// --upstream`). Every drain shows progress and stops
// on request; both are refused while the switch is RECORD_ONLY, saying why, and the switch
// is on this page too. A drain runs on a worker of its own, so the lists keep refreshing and
// a page's cancel (KILL QUERY) can never hit it.
class BacklogPage final : public Page
{
    Q_OBJECT

public:
    BacklogPage(const console::Target &target, QWidget *parent = nullptr);
    ~BacklogPage() override;
    Q_DISABLE_COPY_MOVE(BacklogPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Asks for a confirmation, then drains. Does nothing while it may not.
    void processBacklog();
    void applyMatched();
    // Asks for the upstream and a rate, then forwards a gateway's backlog to it.
    void forwardToUpstream();
    bool isDraining() const { return m_cancel != nullptr; }
    QTableView *table() const { return m_table; }
    QTableView *unmatchedTable() const { return m_unmatchedTable; }
    QTableView *gatewayTable() const { return m_gatewayTable; }
    QTabWidget *lists() const { return m_lists; }
    SwitchControl *switchControl() const { return m_switch; }

private:
    QTableView *addList(BacklogModel *model, const QString &objectName);
    void refreshSummary();
    void showSummary(const console::BacklogSummary &summary);
    void updateActions();
    void confirmDrain(DrainSource source);
    void startDrain(DrainSource source);
    static QString drainEnding(bool stoppedBySwitch, bool cancelled);
    void drainFinished(DrainSource source, const DrainResult &result, const QString &error);
    void startUpstreamDrain(const UpstreamOptions &upstream, std::optional<WireFormat> channel,
                            int rate);
    void upstreamDrainFinished(const UpstreamDrainResult &result, const QString &upstream,
                               const QString &error);
    // Shows a drain as started or ended: buttons, progress, the lists read again after it.
    void showDrainStarted(qint64 total, const QString &status);
    void showDrainEnded(const QString &status, bool failed);
    void showBody();

    std::unique_ptr<console::Worker> m_drainWorker;
    std::shared_ptr<std::atomic<bool>> m_cancel; // set while a drain runs
    // The summary's count between refreshes, used on the page's worker (jobs run in order).
    std::shared_ptr<console::BacklogTally> m_tally = std::make_shared<console::BacklogTally>();
    console::BacklogSummary m_summary;
    bool m_summaryKnown = false;
    QLabel *m_headline = nullptr;
    QLabel *m_finding = nullptr; // the unmatched callbacks, when there are any
    SwitchControl *m_switch = nullptr;
    QPushButton *m_process = nullptr;
    QPushButton *m_apply = nullptr;
    QPushButton *m_forward = nullptr; // a gateway's backlog, to the upstream
    QPushButton *m_stop = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;  // the drain's progress and result
    QLabel *m_refusal = nullptr; // why it may not run now
    QTabWidget *m_lists = nullptr;
    QTableView *m_table = nullptr;
    QTableView *m_unmatchedTable = nullptr;
    QTableView *m_gatewayTable = nullptr;
    BacklogModel *m_model = nullptr;
    BacklogModel *m_unmatchedModel = nullptr;
    BacklogModel *m_gatewayModel = nullptr;
    ReceivedCallbackView *m_received = nullptr;
};

} // namespace payops
