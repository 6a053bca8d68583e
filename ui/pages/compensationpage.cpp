#include "compensationpage.h"

#include "db/connection.h"
#include "db/dbworker.h"
#include "dialogs/compensationdialog.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace payops {

struct CompensationPage::Snapshot
{
    QString currentUser;
    qint64 thresholdFen = 0;
    QList<CompensationRequest> requests;
    QList<CompensationBatch> batches;
};

namespace {

QTableWidget *table(const QString &objectName, const QStringList &headers, QWidget *parent)
{
    auto *t = new QTableWidget(0, int(headers.size()), parent);
    t->setObjectName(objectName);
    t->setHorizontalHeaderLabels(headers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

void fillRow(QTableWidget *t, int row, const QStringList &cells)
{
    for (int column = 0; column < cells.size(); ++column)
        t->setItem(row, column, new QTableWidgetItem(cells.at(column)));
}

QString yuan(qint64 fen)
{
    return QStringLiteral("¥%1").arg(console::formatYuan(fen));
}

QString utcText(const QDateTime &at)
{
    return at.isValid() ? at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString();
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

CompensationPage::CompensationPage(const Dsn &dsn, QWidget *parent)
    : Page(dsn, parent)
    , m_settings(console::ConsoleSettings::load())
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

    layout->addWidget(heading(tr("Requests for a second operator"), this));
    m_requests = table(QStringLiteral("requestsTable"),
                       {tr("Request"), tr("Status"), tr("Requested by"), tr("At (UTC)"), tr("Amount"), tr("Coupons"),
                        tr("Used coupons"), tr("Points rows"), tr("Ticket"), tr("Decided by"), tr("Reason")},
                       this);
    layout->addWidget(m_requests, 2);
    auto *decide = new QHBoxLayout;
    m_approve = new QPushButton(tr("Approve and compensate…"), this);
    m_approve->setObjectName(QStringLiteral("approveButton"));
    m_reject = new QPushButton(tr("Reject…"), this);
    m_reject->setObjectName(QStringLiteral("rejectButton"));
    m_hint = new QLabel(this);
    m_hint->setObjectName(QStringLiteral("requestHint"));
    m_hint->setStyleSheet(QStringLiteral("color: #b35900;"));
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("compensationStatus"));
    m_status->setWordWrap(true);
    decide->addWidget(m_approve);
    decide->addWidget(m_reject);
    decide->addWidget(m_hint);
    decide->addWidget(m_status, 1);
    layout->addLayout(decide);

    layout->addWidget(heading(tr("Compensation batches carried out"), this));
    m_batches = table(QStringLiteral("batchesTable"),
                      {tr("At (UTC)"), tr("By"), tr("Actions"), tr("Amount"), tr("Ticket"), tr("Reason"), tr("Batch")}, this);
    layout->addWidget(m_batches, 3);

    connect(m_requests, &QTableWidget::itemSelectionChanged, this, &CompensationPage::updateActions);
    connect(m_approve, &QPushButton::clicked, this, &CompensationPage::approveSelected);
    connect(m_reject, &QPushButton::clicked, this, [this] {
        const CompensationRequest *request = selectedRequest();
        if (request && QMessageBox::question(this, tr("Reject request %1").arg(request->id),
                                             tr("Reject request %1 by %2 (%3)? It is kept, marked REJECTED, and "
                                                "nothing is compensated.")
                                                 .arg(request->id).arg(request->requestedBy, yuan(request->amountFen)))
                           == QMessageBox::Yes)
            rejectSelected();
    });
    connect(m_all, &QPushButton::clicked, this, &CompensationPage::compensateEverything);
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
    worker()->submit<Snapshot>(
        QStringLiteral("compensation"),
        [](const QSqlDatabase &db) {
            Snapshot s;
            s.currentUser = db::scalar(db, QStringLiteral("SELECT USER()")).toString();
            s.thresholdFen = fourEyesThresholdFen(db);
            s.requests = loadCompensationRequests(db);
            s.batches = loadCompensationBatches(db);
            return s;
        },
        this, [this](const Snapshot &s) { showSnapshot(s); },
        [this](const db::Error &error) { m_status->setText(error.message()); });
}

void CompensationPage::showSnapshot(const Snapshot &s)
{
    m_currentUser = s.currentUser;
    m_threshold->setText(s.thresholdFen > 0
                             ? tr("A compensation above <b>%1</b> waits as a request until another operator account "
                                  "approves it (four eyes; payops_meta four_eyes_threshold_fen).").arg(yuan(s.thresholdFen))
                             : tr("No four-eyes threshold is set: every compensation runs at once."));
    const qint64 selectedId = selectedRequest() ? selectedRequest()->id : 0;
    m_requestList = s.requests;
    m_requests->setRowCount(int(s.requests.size()));
    for (int row = 0; row < s.requests.size(); ++row) {
        const CompensationRequest &r = s.requests.at(row);
        fillRow(m_requests, row,
                {QString::number(r.id), r.status, r.requestedBy, utcText(r.requestedAt), yuan(r.amountFen),
                 QString::number(r.coupons), QString::number(r.writeOffs), QString::number(r.pointsRows), r.ticket,
                 r.decidedBy, r.reason});
        if (r.status == QLatin1String("PENDING"))
            m_requests->item(row, 1)->setForeground(QColor(0xb3, 0x59, 0x00));
        if (r.id == selectedId)
            m_requests->selectRow(row);
    }
    m_batches->setRowCount(int(s.batches.size()));
    for (int row = 0; row < s.batches.size(); ++row) {
        const CompensationBatch &b = s.batches.at(row);
        fillRow(m_batches, row,
                {utcText(b.at), b.by, QString::number(b.actions), yuan(b.amountFen), b.ticket, b.reason, b.batchId});
    }
    updateActions();
}

const CompensationRequest *CompensationPage::selectedRequest() const
{
    const QList<QTableWidgetSelectionRange> ranges = m_requests->selectedRanges();
    if (ranges.isEmpty() || ranges.first().topRow() >= m_requestList.size())
        return nullptr;
    return &m_requestList.at(ranges.first().topRow());
}

void CompensationPage::updateActions()
{
    const Privileges &p = privileges();
    m_all->setEnabled(p.compensate);
    m_all->setToolTip(p.compensate ? QString() : tr("This database account may not compensate."));
    const CompensationRequest *request = selectedRequest();
    const bool open = request && (request->status == QLatin1String("PENDING") || request->status == QLatin1String("APPROVED"));
    const bool own = request && request->requestedBy == m_currentUser;
    const bool mayDecide = p.decideRequests && p.compensate;
    m_approve->setText(request && request->status == QLatin1String("APPROVED") ? tr("Carry on the approved run…")
                                                                              : tr("Approve and compensate…"));
    m_approve->setEnabled(mayDecide && open && !own);
    m_reject->setEnabled(mayDecide && request && request->status == QLatin1String("PENDING") && !own);
    QString why;
    if (!mayDecide)
        why = tr("This database account may not decide compensation requests.");
    else if (own && open)
        why = tr("You filed this request: another operator account must decide it.");
    m_approve->setToolTip(why);
    m_reject->setToolTip(why);
    m_hint->setText(own && open ? why : QString());
}

CompensationDialog *CompensationPage::approveSelected()
{
    const CompensationRequest *request = selectedRequest();
    if (!request || !m_approve->isEnabled())
        return nullptr;
    auto *dialog = new CompensationDialog(worker()->dsn(), *request, m_settings.pointsPerYuan, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompensationDialog::changed, this, &CompensationPage::refresh);
    dialog->open();
    return dialog;
}

CompensationDialog *CompensationPage::compensateEverything()
{
    auto *dialog = new CompensationDialog(worker()->dsn(), tr("every open duplicate"),
                                          [](const QSqlDatabase &) { return CompensationScope::all(); },
                                          m_settings.pointsPerYuan, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CompensationDialog::changed, this, &CompensationPage::refresh);
    dialog->open();
    return dialog;
}

void CompensationPage::rejectSelected()
{
    const CompensationRequest *request = selectedRequest();
    if (!request)
        return;
    const qint64 id = request->id;
    worker()->submit<bool>(
        QStringLiteral("compensation-reject"), [id](const QSqlDatabase &db) { return rejectCompensationRequest(db, id); },
        this,
        [this, id](bool rejected) {
            m_status->setText(rejected ? tr("Request %1 rejected.").arg(id)
                                       : tr("Request %1 was decided by someone else meanwhile.").arg(id));
            refresh();
        },
        [this](const db::Error &error) { m_status->setText(error.message()); });
}

} // namespace payops
