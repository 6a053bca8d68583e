#pragma once

#include "console/compensationdialogjobs.h"
#include "console/connectionprofile.h"
#include "domain/mapping/mappedcompensation.h"
#include "widgets/stepwizard.h"

#include <atomic>
#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace payops {

namespace console {
class Worker;
}

// Compensation on a team's own tables (docs/mapping.md) in the steps of CompensationDialog: the
// dry run of planMappedCompensation() per side effect (frozen, reversed, left to finance), a
// reason and a ticket, a confirmation, and executeMappedCompensation() with progress and stop.
// Above the four-eyes threshold it files a request instead, as `payops compensate --mapping`
// does, which another operator approves through the same dialog with the same mapping. Runs on
// a worker of the dialog's own on the primary; given a read database, it previews there first
// and plans again on the primary (ReplicaPreview), as CompensationDialog does.
class MappedCompensationDialog final : public StepWizard
{
    Q_OBJECT

public:
    MappedCompensationDialog(const console::Target &target, const mapping::Mapping &mapping,
                             const QString &scopeText, mapping::MappedScope scope,
                             qint64 pointsPerYuan, QWidget *parent = nullptr);
    // The approval of another operator's pending request made through `mapping`
    // (mappedRequestRefusal() empty); its points are valued as the request counted them.
    MappedCompensationDialog(const console::Target &target, const mapping::Mapping &mapping,
                             const CompensationRequest &request, QWidget *parent = nullptr);
    ~MappedCompensationDialog() override;
    Q_DISABLE_COPY_MOVE(MappedCompensationDialog)

    // The preview on screen; empty until it has been read.
    const mapping::MappedCompensationPlan &plan() const { return m_preview.plan; }

Q_SIGNALS:
    void changed(); // compensations were done

private:
    MappedCompensationDialog(const console::Target &target, const mapping::Mapping &mapping,
                             mapping::MappedScope scope, qint64 pointsPerYuan,
                             const CompensationRequest *request, QWidget *parent);
    void preview();
    void showPreview(const console::MappedPreview &preview);
    void updateActionButton();
    void prepareConfirmation() override;
    void run() override;
    void showResult(const mapping::MappedResult &result);
    bool needsRequest() const;
    // Per side effect: what the plan does, for the preview and the confirmation.
    QString perSideEffect(const mapping::MappedCompensationPlan &plan, bool done) const;
    qint64 fenPerHundredPoints() const;

    std::unique_ptr<console::Worker> m_worker;
    std::unique_ptr<console::Worker> m_readWorker; // only with a read database
    mapping::Mapping m_mapping;
    mapping::MappedScope m_scope;
    qint64 m_pointsPerYuan;
    std::optional<CompensationRequest> m_request; // set: approving it
    console::MappedPreview m_preview;
    bool m_previewed = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;

    QLabel *m_scopeLabel = nullptr;
    QLabel *m_plan = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_fourEyes = nullptr;
    QLabel *m_replicaNote = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancelRun = nullptr;
    QLabel *m_result = nullptr;
};

} // namespace payops
