#pragma once

#include "domain/money/compensationrequest.h"
#include "page.h"

class QLabel;
class QPushButton;
class QTableView;

namespace payops {

namespace console {
struct CompensationRecord;
}

class CompensationBatchModel;
class CompensationDialog;
class MappedCompensationDialog;
class CompensationRequestModel;

// Four eyes and the record: the compensation requests waiting for a second operator, who
// approves or rejects them here, and the batches already carried out. Compensating itself
// starts from the duplicates page (a selection, orders, a filter) or from here for all. With a
// mapping the page lists the compensations through it (mapped_compensation); there are no
// requests to decide then.
class CompensationPage final : public Page
{
    Q_OBJECT

public:
    CompensationPage(const console::Target &target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(CompensationPage)

    void refresh() override;
    void setPrivileges(const Privileges &privileges) override;
    // Opens the approval dialog for the selected pending request, or null when none is.
    CompensationDialog *approveSelected();
    // The same on a console with a mapping: a request made through that very mapping file.
    MappedCompensationDialog *approveSelectedMapped();
    CompensationDialog *compensateEverything();
    // With a mapping: every open duplicate on the team's tables.
    MappedCompensationDialog *compensateEverythingMapped();
    void rejectSelected();
    QTableView *requestsTable() const { return m_requests; }
    CompensationRequestModel *requestModel() const { return m_requestModel; }
    CompensationBatchModel *batchModel() const { return m_batchModel; }

private:
    void showRecord(const console::CompensationRecord &record);
    const CompensationRequest *selectedRequest() const;
    void updateActions();

    QLabel *m_threshold = nullptr;
    QLabel *m_status = nullptr; // what the last decision did, or why the page could not read
    QLabel *m_hint = nullptr;   // why the selected request may not be decided here
    CompensationRequestModel *m_requestModel = nullptr;
    CompensationBatchModel *m_batchModel = nullptr;
    QTableView *m_requests = nullptr;
    QTableView *m_batches = nullptr;
    QPushButton *m_all = nullptr;
    QPushButton *m_approve = nullptr;
    QPushButton *m_reject = nullptr;
};

} // namespace payops
