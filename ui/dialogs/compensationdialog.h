#pragma once

#include "console/connectionprofile.h"
#include "console/job.h"
#include "db/dsn.h"
#include "domain/money/compensation.h"
#include "domain/money/compensationrequest.h"
#include "widgets/stepwizard.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace payops {

namespace console {
class Worker;
}
namespace db {
class Error;
}
struct CompensationResult;

// Compensates duplicates in four steps: a dry-run preview with totals, a reason and a ticket,
// a confirmation that repeats what will be done, and the run with progress, cancel and
// result. A preview above the four-eyes threshold files a request instead, which another
// operator approves through the same dialog. All work runs on a worker of the dialog's own:
// a page's cancel (KILL QUERY) must never hit a compensation, and closing the dialog stops
// the run in its current batch, which rolls back. Nothing here waits for the database.
class CompensationDialog final : public StepWizard
{
    Q_OBJECT

public:
    using ScopeSource = console::Job<CompensationScope>;

    // A new compensation. `scopeText` says what was chosen ("order 1001", "3 groups", ...);
    // the scope itself is resolved on the worker, since "all in this filter" is a query.
    // With a read database in `target` (a replica) the preview is read there first, then
    // planned again on the primary, which is what runs; the dialog says when the two differ.
    CompensationDialog(const console::Target &target, const QString &scopeText, ScopeSource scope,
                       qint64 pointsPerYuan, QWidget *parent = nullptr);
    // The approval of another operator's pending request.
    CompensationDialog(const console::Target &target, const CompensationRequest &request,
                       qint64 pointsPerYuan, QWidget *parent = nullptr);
    ~CompensationDialog() override;
    Q_DISABLE_COPY_MOVE(CompensationDialog)

    // The preview on screen; empty until it has been read.
    const CompensationPlan &plan() const { return m_plan; }

    // What every compensation dialog shares (MappedCompensationDialog too): the required reason
    // and ticket as a form, and the run step's result text.
    static QFormLayout *reasonAndTicket(QWidget *parent, QLineEdit *&reason, QLineEdit *&ticket);
    static QLabel *resultText(QWidget *parent);
    // A run stopped by an error: what committed stays done.
    static void showRunError(QLabel *runText, QLabel *result, const db::Error &error);
    // The warning for `count` copies whose batch another cluster node rolled back, with a
    // line break before it; empty for none.
    static QString notKeptWarning(int count);

Q_SIGNALS:
    // The database changed: compensations done or a request filed or decided.
    void changed();

private:
    void build();
    void preview();
    void showPreview(const CompensationPlan &plan, const CompensationScope &scope,
                     qint64 thresholdFen, qint64 soloFen);
    void updateActionButton();
    void prepareConfirmation() override;
    void run() override;
    void showResult(const CompensationResult &result);
    CompensationSettings settings() const;
    bool needsRequest() const;

    std::unique_ptr<console::Worker> m_worker;
    std::unique_ptr<console::Worker> m_readWorker; // only with a read database
    ScopeSource m_scopeSource;
    std::optional<CompensationRequest> m_request; // set when approving
    qint64 m_pointsPerYuan;
    CompensationPlan m_plan;
    CompensationScope m_scope;
    qint64 m_thresholdFen = 0;
    qint64 m_soloFen = 0; // what this account compensated alone over the four-eyes window
    bool m_previewed = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;

    QLabel *m_scopeLabel = nullptr;
    QComboBox *m_usedCoupons = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_coupons = nullptr;
    QLabel *m_usedLabel = nullptr;
    QLabel *m_used = nullptr;
    QLabel *m_points = nullptr;
    QLabel *m_money = nullptr;
    QLabel *m_orders = nullptr;
    QLabel *m_fourEyes = nullptr;
    QLabel *m_replicaNote = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancelRun = nullptr;
    QLabel *m_result = nullptr;
};

} // namespace payops
