#pragma once

#include "console/connectionprofile.h"
#include "console/playbook.h"
#include "db/dsn.h"
#include "pages/page.h"

#include <QDockWidget>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

class QLabel;
class QPushButton;

namespace payops {

namespace console {
class LocalInstances;
class StormRunner;
class Worker;
} // namespace console
class StepCard;

// The incident's playbook beside the pages: ten steps, each with what it does and why, the
// buttons that lead to where it happens, and a state it checks on its own from the database
// (console/playbook.h) on a worker of its own, on a timer. It only draws and leads: every act
// is a page's, except the fix's keys and restart, which no page carries and which it asks to
// confirm first.
class PlaybookDock final : public QDockWidget
{
    Q_OBJECT

public:
    explicit PlaybookDock(QWidget *parent = nullptr);
    ~PlaybookDock() override;
    Q_DISABLE_COPY_MOVE(PlaybookDock)

    // A new database: a new worker, and a check at once. With the target's mapping the steps
    // are checked on the team's tables (console/playbook.h).
    void setDatabase(const console::Target &target);
    // The sandbox's local instances and storm, which step 1 starts and step 7 restarts.
    void setSimulation(console::LocalInstances *instances, console::StormRunner *storm);
    void refresh();
    // An incident report was written: step 10 is done for this database.
    void setReportWritten();

    const QList<console::StepStatus> &steps() const { return m_steps; }
    StepCard *card(console::PlaybookStep step) const;
    bool isSandbox() const { return m_facts.sandbox; }

Q_SIGNALS:
    void navigate(payops::Page::Id page);
    void openOrder(qint64 orderId);
    // Step 10's button: the window opens the report dialog.
    void reportRequested();
    // A check's result is on screen.
    void checked();

private:
    void buildCards();
    void draw();
    void askFirst(const QString &name, const QString &text, const QString &yes,
                  std::function<void()> onYes);
    void runIncident();
    void startStorm();
    void applyKeys();
    void restartSafe();
    void showError(const QString &text);

    std::optional<Dsn> m_dsn;
    std::optional<mapping::Mapping> m_mapping;
    // The copies compensated on the mapped tables, kept between checks on m_worker's thread.
    std::shared_ptr<console::MappedCompensatedTally> m_compensated;
    std::unique_ptr<console::Worker> m_worker;
    console::Worker *m_keysWorker =
        nullptr; // the fix step's: an ALTER TABLE must not hold up the checks
    QPointer<console::LocalInstances> m_instances;
    QPointer<console::StormRunner> m_storm;
    QTimer m_timer;
    bool m_checking = false;
    bool m_checkAgain = false;
    bool m_checkedOnce = false;
    bool m_userChoseVisibility = false;
    bool m_reportWritten = false;
    bool m_stormPending = false; // step 1 waits for its instances before firing
    bool m_applyingKeys = false;
    console::PlaybookFacts m_facts;
    QList<console::StepStatus> m_steps;
    QLabel *m_summary = nullptr;
    QLabel *m_message = nullptr;
    QList<StepCard *> m_cards;
    QPushButton *m_runIncident = nullptr;
    QPushButton *m_openEvidence = nullptr;
    QPushButton *m_applyKeys = nullptr;
    QPushButton *m_restartSafe = nullptr;
};

} // namespace payops
