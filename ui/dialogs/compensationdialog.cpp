#include "compensationdialog.h"

#include "console/compensationdialogjobs.h"
#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/duplicatescan.h"
#include "console/worker.h"
#include "palette.h"
#include "replicapreview.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSet>

namespace payops {

namespace {

constexpr int kWidth = 620;

int ordersIn(const CompensationPlan &plan)
{
    QSet<qint64> orders;
    for (const PlannedAction &action : plan.actions)
        orders.insert(action.orderId);
    return int(orders.size());
}

QLabel *figure(const QString &objectName, QWidget *parent)
{
    auto *label = new QLabel(QStringLiteral("–"), parent);
    label->setObjectName(objectName);
    QFont font = label->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.25);
    label->setFont(font);
    label->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return label;
}

} // namespace

CompensationDialog::CompensationDialog(const console::Target &target, const QString &scopeText,
                                       ScopeSource scope, qint64 pointsPerYuan, QWidget *parent)
    : StepWizard(QStringLiteral("compensationDialog"), tr("Compensate duplicates"), kWidth,
                 tr("Compensate duplicates"), tr("Compensate…"), QStringLiteral("actButton"),
                 parent)
    , m_worker(std::make_unique<console::Worker>(target.dsn))
    , m_readWorker(ReplicaPreview::readWorker(target))
    , m_scopeSource(std::move(scope))
    , m_pointsPerYuan(pointsPerYuan)
{
    build();
    m_scopeLabel->setText(tr("Scope: <b>%1</b>").arg(scopeText.toHtmlEscaped()));
    preview();
}

CompensationDialog::CompensationDialog(const console::Target &target,
                                       const CompensationRequest &request, qint64 pointsPerYuan,
                                       QWidget *parent)
    : StepWizard(QStringLiteral("compensationDialog"),
                 tr("Approve compensation request %1").arg(request.id), kWidth,
                 tr("Approve compensation request %1").arg(request.id), tr("Compensate…"),
                 QStringLiteral("actButton"), parent)
    , m_worker(std::make_unique<console::Worker>(target.dsn))
    , m_readWorker(ReplicaPreview::readWorker(target))
    , m_request(request)
    , m_pointsPerYuan(pointsPerYuan)
{
    m_scopeSource = console::knownScopeJob(request.scope);
    build();
    m_scopeLabel->setText(
        tr("Request <b>%1</b> by <b>%2</b> at %3 UTC asks for %4: %5 coupon(s) to freeze, %6 used "
           "coupon(s), %7 points row(s). Its reason: %8 (ticket %9). Below is what it covers now; "
           "an approval is refused if that is not the amount asked.")
            .arg(QString::number(request.id), request.requestedBy.toHtmlEscaped(),
                 request.requestedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                 console::formatMoney(request.amountFen), QString::number(request.coupons),
                 QString::number(request.writeOffs), QString::number(request.pointsRows),
                 request.reason.toHtmlEscaped(), request.ticket.toHtmlEscaped()));
    m_reason->setText(request.reason);
    m_ticket->setText(request.ticket);
    preview();
}

CompensationDialog::~CompensationDialog()
{
    // A run still going stops: deleting the worker interrupts the batch it is in (rolled
    // back) and the flag keeps it from starting another; what it did stays done.
    if (m_cancel)
        m_cancel->store(true);
}

void CompensationDialog::build()
{
    // Step 1: the dry-run preview, and why.
    QWidget *previewPage = page(FormStep);
    m_scopeLabel = paragraph(QStringLiteral("scopeLabel"), previewPage);
    m_usedCoupons = new QComboBox(previewPage);
    m_usedCoupons->setObjectName(QStringLiteral("usedCouponsCombo"));
    m_usedCoupons->addItem(tr("a write-off (finance absorbs it)"), int(UsedCouponPolicy::WriteOff));
    m_usedCoupons->addItem(tr("a receivable (owed by the user)"),
                           int(UsedCouponPolicy::Receivable));
    auto *policy = new QFormLayout;
    policy->addRow(tr("A duplicate coupon already used becomes"), m_usedCoupons);

    auto *totals = new QGridLayout;
    totals->setHorizontalSpacing(24);
    m_coupons = figure(QStringLiteral("totalCouponsFrozen"), previewPage);
    m_usedLabel = new QLabel(previewPage);
    m_used = figure(QStringLiteral("totalUsedCoupons"), previewPage);
    m_points = figure(QStringLiteral("totalPointsReversed"), previewPage);
    m_orders = figure(QStringLiteral("totalOrders"), previewPage);
    m_money = figure(QStringLiteral("totalMoney"), previewPage);
    const QList<QPair<QWidget *, QLabel *>> rows{
        {new QLabel(tr("Unused duplicate coupons to freeze"), previewPage), m_coupons},
        {m_usedLabel, m_used},
        {new QLabel(tr("Duplicate points rows to reverse"), previewPage), m_points},
        {new QLabel(tr("Orders concerned"), previewPage), m_orders},
        {new QLabel(tr("<b>Money corrected</b>"), previewPage), m_money}};
    for (int row = 0; row < rows.size(); ++row) {
        totals->addWidget(rows.at(row).first, row, 0);
        totals->addWidget(rows.at(row).second, row, 1);
    }
    totals->setColumnStretch(0, 1);
    auto *totalsFrame = new QFrame(previewPage);
    totalsFrame->setFrameShape(QFrame::StyledPanel);
    totalsFrame->setLayout(totals);
    m_status = paragraph(QStringLiteral("previewStatus"), previewPage);
    m_fourEyes = paragraph(QStringLiteral("fourEyesNote"), previewPage);
    palette::setTextRole(m_fourEyes, palette::Role::Warning);
    m_fourEyes->hide();
    m_replicaNote = paragraph(QStringLiteral("replicaNote"), previewPage);
    m_replicaNote->hide();
    QFormLayout *form = reasonAndTicket(previewPage, m_reason, m_ticket);
    add(FormStep, m_scopeLabel);
    add(FormStep, policy);
    add(FormStep, totalsFrame);
    add(FormStep, m_status);
    add(FormStep, m_fourEyes);
    add(FormStep, m_replicaNote);
    add(FormStep, form);

    // Step 2, the confirmation, is written when it is shown. Step 3: progress, stop, result.
    m_progress = new QProgressBar(page(RunStep));
    m_progress->setObjectName(QStringLiteral("progressBar"));
    m_result = resultText(page(RunStep));
    m_cancelRun = addRunButton(tr("Stop after this batch"), QStringLiteral("cancelRunButton"));
    add(RunStep, m_progress);
    add(RunStep, m_result, 1);

    connect(m_usedCoupons, &QComboBox::currentIndexChanged, this, &CompensationDialog::preview);
    connect(m_reason, &QLineEdit::textChanged, this, &CompensationDialog::updateActionButton);
    connect(m_ticket, &QLineEdit::textChanged, this, &CompensationDialog::updateActionButton);
    connect(m_cancelRun, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
        m_cancelRun->setEnabled(false);
        runText()->setText(tr("Stopping after the current batch …"));
    });
    m_reason->setFocus(); // what the operator has to type first, not the policy combo
}

QFormLayout *CompensationDialog::reasonAndTicket(QWidget *parent, QLineEdit *&reason,
                                                 QLineEdit *&ticket)
{
    reason = new QLineEdit(parent);
    reason->setObjectName(QStringLiteral("reasonEdit"));
    reason->setMaxLength(255);
    reason->setPlaceholderText(tr("Why — required, kept with every action and in the audit log"));
    ticket = new QLineEdit(parent);
    ticket->setObjectName(QStringLiteral("ticketEdit"));
    ticket->setMaxLength(64);
    ticket->setPlaceholderText(tr("Incident or ticket id — required"));
    auto *form = new QFormLayout;
    form->addRow(tr("Reason"), reason);
    form->addRow(tr("Ticket"), ticket);
    return form;
}

void CompensationDialog::showRunError(QLabel *runText, QLabel *result, const db::Error &error)
{
    runText->setText(palette::strong(palette::Role::Danger, tr("Stopped by an error.")));
    result->setText(
        tr("%1<br>Every batch committed before it stays done; a new run finishes the rest.")
            .arg(db::userMessage(error).toHtmlEscaped()));
}

QLabel *CompensationDialog::resultText(QWidget *parent)
{
    QLabel *result = paragraph(QStringLiteral("resultText"), parent);
    result->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return result;
}

CompensationSettings CompensationDialog::settings() const
{
    CompensationSettings s;
    s.usedCoupons = UsedCouponPolicy(m_usedCoupons->currentData().toInt());
    s.fenPerHundredPoints = m_pointsPerYuan > 0 ? 10000 / m_pointsPerYuan : 0;
    return s;
}

bool CompensationDialog::needsRequest() const
{
    return !m_request && needsSecondOperator(m_plan, m_thresholdFen, m_soloFen);
}

void CompensationDialog::preview()
{
    m_previewed = false;
    updateActionButton();
    m_status->setText(tr("Planning the dry run … nothing is changed."));
    ReplicaPreview::run<console::ScopedPreview>(
        m_readWorker.get(), *m_worker, QStringLiteral("compensation-preview"),
        console::compensationPreviewJob(m_scopeSource, settings()), this, m_status, m_replicaNote,
        [this](const console::ScopedPreview &p, bool onPrimary) {
            showPreview(p.preview.plan, p.scope, p.preview.thresholdFen, p.preview.soloFen);
            if (onPrimary)
                return;
            // Shown, not yet to be run: the run carries out the primary's plan.
            m_previewed = false;
            updateActionButton();
        },
        [](const console::ScopedPreview &p) {
            return ReplicaPreview::Size{ordersIn(p.preview.plan), p.preview.plan.actions.size(),
                                        p.preview.plan.moneyFen};
        },
        [this] {
            m_previewed = false;
            updateActionButton();
        });
}

void CompensationDialog::showPreview(const CompensationPlan &plan, const CompensationScope &scope,
                                     qint64 thresholdFen, qint64 soloFen)
{
    m_plan = plan;
    m_scope = scope;
    m_thresholdFen = thresholdFen;
    m_soloFen = soloFen;
    m_previewed = true;
    const QLocale locale;
    const bool writeOff = settings().usedCoupons == UsedCouponPolicy::WriteOff;
    m_coupons->setText(locale.toString(plan.couponsFrozen));
    m_usedLabel->setText(writeOff ? tr("Used duplicate coupons to write off")
                                  : tr("Used duplicate coupons as receivable"));
    m_used->setText(locale.toString(plan.couponWriteOffs + plan.couponReceivables));
    m_points->setText(
        tr("%1 (%2 points)")
            .arg(locale.toString(plan.pointsReversed), locale.toString(plan.pointsTotal)));
    m_orders->setText(locale.toString(ordersIn(plan)));
    m_money->setText(console::formatMoney(plan.moneyFen));
    m_status->setText(
        plan.isEmpty()
            ? tr("<b>Nothing to compensate:</b> no live duplicate in this scope.")
            : tr("Dry run: nothing has been changed. The first copy of each duplicate stays; "
                 "nothing is deleted."));
    if (m_request && !planFitsRequest(plan.moneyFen, *m_request)) {
        m_fourEyes->setText(tr("The duplicates changed since the request was made (%1 now, %2 "
                               "asked): an approval will "
                               "be refused; ask for a new request.")
                                .arg(console::formatMoney(plan.moneyFen),
                                     console::formatMoney(m_request->amountFen)));
        m_fourEyes->show();
    } else if (needsRequest()) {
        m_fourEyes->setText(tr("%1, with the %2 this account compensated alone in the four-eyes "
                               "window, is above the "
                               "threshold of %3: this files a request that another operator "
                               "account approves on the "
                               "Compensation page; nothing is compensated until then.")
                                .arg(console::formatMoney(plan.moneyFen),
                                     console::formatMoney(soloFen),
                                     console::formatMoney(thresholdFen)));
        m_fourEyes->show();
    } else {
        m_fourEyes->hide();
    }
    updateActionButton();
}

void CompensationDialog::updateActionButton()
{
    QPushButton *act = nextButton();
    act->setText(m_request        ? tr("Approve and compensate…")
                 : needsRequest() ? tr("Request approval…")
                                  : tr("Compensate…"));
    const bool ready = m_previewed && !m_plan.isEmpty() && !m_reason->text().trimmed().isEmpty() &&
                       !m_ticket->text().trimmed().isEmpty();
    act->setEnabled(ready);
    act->setToolTip(ready ? QString()
                          : tr("Needs a preview with something to do, a reason and a ticket."));
}

void CompensationDialog::prepareConfirmation()
{
    const QLocale locale;
    const QString what =
        tr("<ul><li>freeze %1 unused duplicate coupon(s)</li><li>book %2 used duplicate coupon(s) "
           "as %3</li>"
           "<li>reverse %4 duplicate points row(s), %5 points, adjusting the balances (a balance "
           "may "
           "go negative; it is reported)</li></ul><p>on %6 order(s): <b>%7</b> in all. Reason: "
           "<b>%8</b>, "
           "ticket <b>%9</b>.</p>")
            .arg(locale.toString(m_plan.couponsFrozen),
                 locale.toString(m_plan.couponWriteOffs + m_plan.couponReceivables),
                 settings().usedCoupons == UsedCouponPolicy::WriteOff ? tr("write-offs")
                                                                      : tr("receivables"),
                 locale.toString(m_plan.pointsReversed), locale.toString(m_plan.pointsTotal),
                 locale.toString(ordersIn(m_plan)), console::formatMoney(m_plan.moneyFen),
                 m_reason->text().trimmed().toHtmlEscaped(),
                 m_ticket->text().trimmed().toHtmlEscaped());
    if (needsRequest()) {
        confirmText()->setText(
            tr("<h3>File a request for another operator?</h3><p>When approved, it will:</p>%1"
               "<p>Nothing changes until another operator account approves it.</p>")
                .arg(what));
        confirmButton()->setText(tr("File the request"));
    } else {
        confirmText()->setText(
            tr("<h3>%1</h3><p>This will:</p>%2<p>Each action is one row in <tt>compensation</tt> "
               "and one "
               "audit entry under your database account. Nothing is deleted; a duplicate already "
               "compensated by someone else meanwhile is skipped.</p>")
                .arg(m_request ? tr("Approve request %1 and compensate?").arg(m_request->id)
                               : tr("Compensate now?"),
                     what));
        confirmButton()->setText(m_request ? tr("Approve and compensate now")
                                           : tr("Compensate now"));
    }
}

void CompensationDialog::run()
{
    m_progress->setRange(0, int(m_plan.actions.size()));
    m_progress->setValue(0);
    runText()->setText(needsRequest() ? tr("Filing the request …") : tr("Compensating …"));
    m_cancelRun->setEnabled(!needsRequest());
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    CompensationJob job;
    job.scope = m_scope;
    job.approveRequestId = m_request ? m_request->id : 0;
    job.settings = settings();
    job.reason = m_reason->text().trimmed();
    job.ticket = m_ticket->text().trimmed();
    job.confirmed = CompensationPreview{m_plan, m_thresholdFen, m_soloFen};
    QPointer<CompensationDialog> guard(this);
    job.progress = [guard](int done, int total) {
        console::Worker::postTo(guard, [done, total](CompensationDialog *dialog) {
            dialog->m_progress->setValue(done);
            dialog->runText()->setText(tr("Compensating … %1 of %2 actions")
                                           .arg(QString::number(done), QString::number(total)));
        });
    };
    m_worker->submit<CompensationResult>(
        QStringLiteral("compensation-run"), console::compensationRunJob(job, m_cancel), this,
        [this](const CompensationResult &result) { showResult(result); },
        [this](const db::Error &error) {
            m_cancelRun->setEnabled(false);
            finishRun();
            showRunError(runText(), m_result, error);
            Q_EMIT changed();
        });
}

QString CompensationDialog::notKeptWarning(int count)
{
    if (count == 0)
        return {};
    return QStringLiteral("<br>") +
           palette::strong(palette::Role::Warning,
                           tr("%n duplicate(s) were not kept: another cluster node's "
                              "transaction rolled their batch back. Run the compensation "
                              "again to finish them.",
                              nullptr, count));
}

void CompensationDialog::showResult(const CompensationResult &result)
{
    m_cancelRun->setEnabled(false);
    finishRun();
    if (!result.refusal.isEmpty()) {
        runText()->setText(palette::strong(palette::Role::Danger, tr("Not approved.")));
        m_result->setText(result.refusal.toHtmlEscaped());
        return;
    }
    Q_EMIT changed();
    if (result.filedRequestId > 0) {
        m_progress->hide();
        runText()->setText(tr("<b>Request %1 is filed.</b>").arg(result.filedRequestId));
        m_result->setText(tr(
            "It waits for another operator account to approve it on the Compensation page. Nothing "
            "has been compensated yet."));
        return;
    }
    const CompensationOutcome &o = result.run;
    m_progress->setValue(m_progress->maximum());
    runText()->setText(
        o.cancelled ? tr("<b>Stopped.</b> What was done stays done; a new run finishes the rest.")
                    : tr("<b>Done.</b>"));
    QString text = tr("Compensated <b>%1</b> duplicate(s); skipped %2 (compensated by someone else "
                      "meanwhile, or changed "
                      "since the preview).<br>Batch <tt>%3</tt>.")
                       .arg(QString::number(o.done), QString::number(o.skipped), o.batchId);
    const bool finished = !o.cancelled && o.notKept.isEmpty();
    text += notKeptWarning(int(o.notKept.size()));
    if (m_request)
        text +=
            tr("<br>Request %1 is approved%2.")
                .arg(QString::number(m_request->id), finished ? tr(" and executed") : QString());
    if (!o.negativeBalanceUsers.isEmpty()) {
        QStringList users;
        for (qint64 user : o.negativeBalanceUsers)
            users << QString::number(user);
        text += QStringLiteral("<br>") +
                palette::strong(palette::Role::Warning,
                                tr("%n user(s) now have a negative points balance:", nullptr,
                                   int(users.size()))) +
                tr(" %1.").arg(users.join(QStringLiteral(", ")));
    }
    m_result->setText(text);
}

} // namespace payops
