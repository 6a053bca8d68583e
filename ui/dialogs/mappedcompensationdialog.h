#pragma once

#include "console/compensationdialogjobs.h"
#include "db/dsn.h"
#include "domain/mapping/mappedcompensation.h"
#include "widgets/stepwizard.h"

#include <atomic>
#include <memory>

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
// A mapped compensation files no request: above the four-eyes threshold it is refused, as
// `payops compensate --mapping` refuses it. Runs on a worker of the dialog's own.
class MappedCompensationDialog final : public StepWizard
{
    Q_OBJECT

public:
    MappedCompensationDialog(const Dsn &dsn, const mapping::Mapping &mapping,
                             const QString &scopeText, mapping::MappedScope scope,
                             qint64 pointsPerYuan, QWidget *parent = nullptr);
    ~MappedCompensationDialog() override;
    Q_DISABLE_COPY_MOVE(MappedCompensationDialog)

    // The preview on screen; empty until it has been read.
    const mapping::MappedCompensationPlan &plan() const { return m_preview.plan; }

Q_SIGNALS:
    void changed(); // compensations were done

private:
    void preview();
    void showPreview(const console::MappedPreview &preview);
    void updateActionButton();
    void prepareConfirmation() override;
    void run() override;
    void showResult(const console::MappedRun &result);
    // Per side effect: what the plan does, for the preview and the confirmation.
    QString perSideEffect(const mapping::MappedCompensationPlan &plan, bool done) const;
    qint64 fenPerHundredPoints() const;

    std::unique_ptr<console::Worker> m_worker;
    mapping::Mapping m_mapping;
    mapping::MappedScope m_scope;
    qint64 m_pointsPerYuan;
    console::MappedPreview m_preview;
    bool m_previewed = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;

    QLabel *m_scopeLabel = nullptr;
    QLabel *m_plan = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_fourEyes = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancelRun = nullptr;
    QLabel *m_result = nullptr;
};

} // namespace payops
