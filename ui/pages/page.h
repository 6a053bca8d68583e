#pragma once

#include "console/connectionprofile.h"
#include "db/dsn.h"
#include "domain/inspection/privileges.h"

#include <QWidget>

#include <functional>
#include <memory>

class QLabel;
class QTimer;

namespace payops {

namespace console {
class Worker;
}

// What every page of the console shares: a worker thread with a connection of its own (so
// a long scan on one page never holds up the refresh of another, and cancelling it kills
// only its own query), and the signals by which it leads to another page.
class Page : public QWidget
{
    Q_OBJECT

public:
    enum Id {
        OverviewId,
        StateMachineId,
        DuplicatesId,
        EvidenceId,
        InstancesId,
        BacklogId,
        CompensationId,
        AuditId,
        PostureId,
        SimulationId,
        InspectionId,
        ReconciliationId,
        NUM_PAGES
    };

    Page(const console::Target &target, QWidget *parent = nullptr);
    ~Page() override;
    Q_DISABLE_COPY_MOVE(Page)

    // The worker the page reads with: on the read database (a replica) when the console has
    // one, else on the primary.
    console::Worker *worker() const { return m_worker.get(); }
    // The worker the page's actions run on: always the primary.
    console::Worker *actionWorker() const
    {
        return m_actionWorker ? m_actionWorker.get() : m_worker.get();
    }
    // The primary, for the dialogs of actions, which open their own workers on it; and the
    // whole target, for a dialog that previews on the read database.
    const Dsn &primaryDsn() const { return m_target.dsn; }
    const console::Target &target() const { return m_target; }
    // Reads the database again; pages keep their filters and selection.
    virtual void refresh() = 0;
    // After an action of the page committed on the primary: reads again with `reread`
    // (refresh() when empty). With a read database, first waits off the UI thread, a few
    // seconds at most, for the replica to have applied the action, so that the page shows it;
    // past that it reads anyway, says above the page that the replica has not caught up, and
    // reads again once it has.
    void rereadAfterAction(std::function<void()> reread = {});
    // What the connected account may do, as probed once after connecting. Pages hide or
    // disable the actions it may not take; until the probe answers, every action is disabled.
    virtual void setPrivileges(const Privileges &privileges) { m_privileges = privileges; }
    const Privileges &privileges() const { return m_privileges; }
    // The mapping of the team's own tables the console reads, or nullptr on payops's own.
    const mapping::Mapping *mapping() const
    {
        return m_target.mapping ? &*m_target.mapping : nullptr;
    }

Q_SIGNALS:
    void navigate(payops::Page::Id page);
    void openOrder(qint64 orderId);
    // A gateway's order, by the team's own number (out_trade_no as sent).
    void openOrderNumber(const QByteArray &orderNo);
    void statusMessage(const QString &text);

protected:
    // A running timer, a child of the page named "refreshTimer", that fires every
    // refreshSeconds of the console's settings and restarts when that setting changes.
    QTimer *startRefreshTimer();

private:
    // One wait for the replica to reach `position`; the first after an action reads again
    // whatever came of it, a later look only once the replica has caught up.
    void awaitReplica(const QString &position, int seconds, quint64 action);
    void showCatchUp(const QString &html);

    console::Target m_target;
    std::unique_ptr<console::Worker> m_worker;
    // Only with a read database: a second worker, on the primary.
    std::unique_ptr<console::Worker> m_actionWorker;
    Privileges m_privileges;
    // The last action waited for, so that a look for an earlier one stops; and its reread.
    quint64 m_catchUpAction = 0;
    std::function<void()> m_catchUpReread;
    QLabel *m_catchUpNote = nullptr; // made the first time it is needed
};

} // namespace payops
