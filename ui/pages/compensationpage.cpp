#include "compensationpage.h"

#include "console/compensations.h"
#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/duplicatescan.h"
#include "console/worker.h"
#include "dialogs/compensationdialog.h"
#include "dialogs/mappedcompensationdialog.h"
#include "domain/mapping/mappedrequest.h"
#include "models/compensationbatchmodel.h"
#include "models/compensationrequestmodel.h"
#include "palette.h"
#include "widgets/datatable.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

namespace payops {

namespace {

// The cash value of points as the settings hold it when a dialog opens, not when the page did.
qint64 pointsPerYuan()
{
    return console::ConsoleSettings::instance().pointsPerYuan();
}

QLabel *heading(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.15);
    label->setFont(font);
    return label;
}

} // namespace

CompensationPage::CompensationPage(const console::Target &target, QWidget *parent)
    : Page(target, parent)
{
    setObjectName(QStringLiteral("compensationPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    auto *top = new QHBoxLayout;
    m_threshold = new QLabel(this);
    m_threshold->setObjectName(QStringLiteral("thresholdLabel"));
    m_threshold->setWordWrap(true);
    m_all = new QPushButton(tr("Compensate every open duplicate…"), this);
    m_all->setObjectName(QStringLiteral("compensateEverything"));
    top->addWidget(m_threshold, 1);
    top->addWidget(m_all, 0, Qt::AlignTop);
    layout->addLayout(top);

    auto *requestsHeading = heading(tr("Requests for a second operator"), this);
    layout->addWidget(requestsHeading);
    m_requestModel = new CompensationRequestModel(this);
    m_requests = new DataTable(QStringLiteral("requestsTable"), m_requestModel, this);
    m_requests->setSelectionMode(QAbstractItemView::SingleSelection);
    layout->addWidget(m_requests, 2);
    auto *decide = new QHBoxLayout;
    m_approve = new QPushButton(tr("Approve and compensate…"), this);
    m_approve->setObjectName(QStringLiteral("approveButton"));
    m_reject = new QPushButton(tr("Reject…"), this);
    m_reject->setObjectName(QStringLiteral("rejectButton"));
    m_hint = new QLabel(this);
    m_hint->setObjectName(QStringLiteral("requestHint"));
    palette::setTextRole(m_hint, palette::Role::Warning);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("compensationStatus"));
    m_status->setWordWrap(true);
    decide->addWidget(m_approve);
    decide->addWidget(m_reject);
    m_hint->setWordWrap(true);
    decide->addWidget(m_hint, 1);
    decide->addWidget(m_status, 1);
    layout->addLayout(decide);
    if (mapping())
        m_all->setText(tr("Compensate every open duplicate on the team's tables…"));

    layout->addWidget(heading(tr("Compensation batches carried out"), this));
    m_batchModel = new CompensationBatchModel(this);
    m_batches = new DataTable(QStringLiteral("batchesTable"), m_batchModel, this);
    m_batches->setSelectionMode(QAbstractItemView::SingleSelection);
    layout->addWidget(m_batches, 3);

    connect(m_requests->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &CompensationPage::updateActions);
    connect(m_approve, &QPushButton::clicked, this, [this] {
        if (mapping())
            approveSelectedMapped();
        else
            approveSelected();
    });
    connect(m_reject, &QPushButton::clicked, this, [this] {
        const CompensationRequest *request = selectedRequest();
        if (request && QMessageBox::question(
                           this, tr("Reject request %1").arg(request->id),
                           tr("Reject request %1 by %2 (%3)? It is kept, marked REJECTED, and "
                              "nothing is compensated.")
                               .arg(QString::number(request->id), request->requestedBy,
                                    console::formatMoney(request->amountFen))) == QMessageBox::Yes)
            rejectSelected();
    });
    connect(m_all, &QPushButton::clicked, this, [this] {
        if (mapping())
            compensateEverythingMapped();
        else
            compensateEverything();
    });
    updateActions();
    refresh();
}

void CompensationPage::setPrivileges(const Privileges &privileges)
{
    Page::setPrivileges(privileges);
    updateActions();
}

void CompensationPage::refresh()
{
    worker()->submit<console::CompensationRecord>(
        QStringLiteral("compensation"),
        console::jobOf(console::loadCompensationRecord, mapping() != nullptr), this,
        [this](const console::CompensationRecord &record) { showRecord(record); },
        [this](const db::Error &error) { m_status->setText(db::userMessage(error)); });
}

void CompensationPage::showRecord(const console::CompensationRecord &s)
{
    m_threshold->setText(
        mapping() && s.thresholdFen > 0
            ? tr("Compensations through the mapping %1, newest first. One that takes what an "
                 "account compensated alone in the four-eyes window above <b>%2</b> waits as a "
                 "request until another operator account approves it, through the same mapping "
                 "file.")
                  .arg(mapping()->path.toHtmlEscaped(), console::formatMoney(s.thresholdFen))
        : s.thresholdFen > 0
            ? tr("A compensation that takes what an account compensated alone in the four-eyes "
                 "window "
                 "above <b>%1</b> waits as a request until another operator account approves it "
                 "(payops_meta four_eyes_threshold_fen and four_eyes_window_hours).")
                  .arg(console::formatMoney(s.thresholdFen))
            : tr("No four-eyes threshold is set: every compensation runs at once."));
    // The reset forgets the selection; the request that was selected stays selected.
    const qint64 selectedId = selectedRequest() ? selectedRequest()->id : 0;
    m_requestModel->setRequests(s.requests);
    if (const int row = m_requestModel->rowOf(selectedId); selectedId > 0 && row >= 0)
        m_requests->selectRow(row);
    m_batchModel->setBatches(s.batches);
    updateActions();
}

const CompensationRequest *CompensationPage::selectedRequest() const
{
    const QModelIndexList rows = m_requests->selectionModel()->selectedRows();
    return rows.isEmpty() ? nullptr : &m_requestModel->request(rows.first().row());
}

void CompensationPage::updateActions()
{
    const Privileges &p = privileges();
    m_all->setEnabled(p.compensate);
    m_all->setToolTip(p.compensate ? QString() : tr("This database account may not compensate."));
    const CompensationRequest *request = selectedRequest();
    const bool open = request && (request->status == QLatin1String("PENDING") ||
                                  request->status == QLatin1String("APPROVED"));
    const bool own = request && request->byThisUser;
    const bool mayDecide = p.decideRequests && p.compensate;
    // A request is carried out through what it was planned on: payops's own tables, or the
    // very mapping file (by SHA-256) the console runs with.
    const QString otherTables =
        !request    ? QString()
        : mapping() ? mapping::mappedRequestRefusal(*request, *mapping())
        : request->mapped
            ? tr("Request %1 is for the team's own tables: open the console with the mapping file "
                 "it was made with to approve it.")
                  .arg(request->id)
            : QString();
    m_approve->setText(request && request->status == QLatin1String("APPROVED")
                           ? tr("Carry on the approved run…")
                           : tr("Approve and compensate…"));
    m_approve->setEnabled(mayDecide && open && !own && otherTables.isEmpty());
    m_reject->setEnabled(mayDecide && request && request->status == QLatin1String("PENDING") &&
                         !own);
    QString why;
    if (!mayDecide)
        why = tr("This database account may not decide compensation requests.");
    else if (own && open)
        why = tr("You filed this request: another operator account must decide it.");
    m_approve->setToolTip(why.isEmpty() ? otherTables : why);
    m_reject->setToolTip(why);
    m_hint->setText(own && open ? why : open ? otherTables : QString());
}

MappedCompensationDialog *CompensationPage::approveSelectedMapped()
{
    const CompensationRequest *request = selectedRequest();
    if (!request || !mapping() || !m_approve->isEnabled())
        return nullptr;
    auto *dialog = new MappedCompensationDialog(target(), *mapping(), *request, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &MappedCompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

CompensationDialog *CompensationPage::approveSelected()
{
    const CompensationRequest *request = selectedRequest();
    if (!request || mapping() || !m_approve->isEnabled())
        return nullptr;
    auto *dialog = new CompensationDialog(target(), *request, pointsPerYuan(), window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

CompensationDialog *CompensationPage::compensateEverything()
{
    auto *dialog = new CompensationDialog(target(), tr("every open duplicate"),
                                          console::knownScopeJob(CompensationScope::all()),
                                          pointsPerYuan(), window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

MappedCompensationDialog *CompensationPage::compensateEverythingMapped()
{
    auto *dialog =
        new MappedCompensationDialog(target(), *mapping(), tr("every order with an open duplicate"),
                                     mapping::MappedScope::all(), pointsPerYuan(), window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &MappedCompensationDialog::changed, this, [this] { rereadAfterAction(); });
    dialog->open();
    return dialog;
}

void CompensationPage::rejectSelected()
{
    const CompensationRequest *request = selectedRequest();
    if (!request)
        return;
    const qint64 id = request->id;
    actionWorker()->submit<bool>(
        QStringLiteral("compensation-reject"), console::jobOf(rejectCompensationRequest, id), this,
        [this, id](bool rejected) {
            m_status->setText(
                rejected ? tr("Request %1 rejected.").arg(id)
                         : tr("Request %1 was decided by someone else meanwhile.").arg(id));
            rereadAfterAction();
        },
        [this](const db::Error &error) { m_status->setText(db::userMessage(error)); });
}

} // namespace payops
