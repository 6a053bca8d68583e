#include "mappedcompensationdialog.h"

#include "compensationdialog.h"
#include "console/displayformat.h"
#include "console/worker.h"
#include "palette.h"
#include "replicapreview.h"

#include <QFormLayout>
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

QString titleFor(const CompensationRequest *request)
{
    return request
               ? MappedCompensationDialog::tr("Approve compensation request %1").arg(request->id)
               : MappedCompensationDialog::tr("Compensate duplicates on the team's tables");
}

int ordersIn(const QList<mapping::MappedCopy> &copies)
{
    QSet<qint64> orders;
    for (const mapping::MappedCopy &copy : copies)
        orders.insert(copy.orderId);
    return int(orders.size());
}

} // namespace

MappedCompensationDialog::MappedCompensationDialog(const console::Target &target,
                                                   const mapping::Mapping &mapping,
                                                   const QString &scopeText,
                                                   mapping::MappedScope scope, qint64 pointsPerYuan,
                                                   QWidget *parent)
    : MappedCompensationDialog(target, mapping, std::move(scope), pointsPerYuan, nullptr, parent)
{
    m_scopeLabel->setText(tr("Scope: <b>%1</b>, through the mapping %2")
                              .arg(scopeText.toHtmlEscaped(), mapping.path.toHtmlEscaped()));
}

MappedCompensationDialog::MappedCompensationDialog(const console::Target &target,
                                                   const mapping::Mapping &mapping,
                                                   const CompensationRequest &request,
                                                   QWidget *parent)
    : MappedCompensationDialog(target, mapping,
                               mapping::MappedScope{request.scope.orders, request.scope.everything},
                               // The request's value of 100 points back into points per yuan.
                               request.mapped && request.mapped->fenPerHundredPoints > 0
                                   ? 10000 / request.mapped->fenPerHundredPoints
                                   : 0,
                               &request, parent)
{
    m_scopeLabel->setText(
        tr("Request <b>%1</b> by <b>%2</b> at %3 UTC asks for %4 on the team's tables, through the "
           "mapping %5: %6 row(s) to freeze, %7 to reverse. Its reason: %8 (ticket %9). Below is "
           "what it covers now; an approval is refused if that is not the amount asked.")
            .arg(QString::number(request.id), request.requestedBy.toHtmlEscaped(),
                 request.requestedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                 console::formatMoney(request.amountFen), mapping.path.toHtmlEscaped(),
                 QString::number(request.coupons), QString::number(request.pointsRows),
                 request.reason.toHtmlEscaped(), request.ticket.toHtmlEscaped()));
    m_reason->setText(request.reason);
    m_ticket->setText(request.ticket);
}

MappedCompensationDialog::MappedCompensationDialog(const console::Target &target,
                                                   const mapping::Mapping &mapping,
                                                   mapping::MappedScope scope, qint64 pointsPerYuan,
                                                   const CompensationRequest *request,
                                                   QWidget *parent)
    : StepWizard(QStringLiteral("mappedCompensationDialog"), titleFor(request), kWidth,
                 titleFor(request), tr("Compensate…"), QStringLiteral("actButton"), parent)
    , m_worker(std::make_unique<console::Worker>(target.dsn))
    , m_readWorker(ReplicaPreview::readWorker(target))
    , m_mapping(mapping)
    , m_scope(std::move(scope))
    , m_pointsPerYuan(pointsPerYuan)
    , m_request(request ? std::optional<CompensationRequest>(*request) : std::nullopt)
{
    QWidget *form = page(FormStep);
    m_scopeLabel = paragraph(QStringLiteral("scopeLabel"), form);
    m_plan = paragraph(QStringLiteral("mappedPlan"), form);
    m_status = paragraph(QStringLiteral("previewStatus"), form);
    m_fourEyes = paragraph(QStringLiteral("fourEyesNote"), form);
    palette::setTextRole(m_fourEyes, palette::Role::Danger);
    m_fourEyes->hide();
    m_replicaNote = paragraph(QStringLiteral("replicaNote"), form);
    m_replicaNote->hide();
    QFormLayout *fields = CompensationDialog::reasonAndTicket(form, m_reason, m_ticket);
    add(FormStep, m_scopeLabel);
    add(FormStep, m_plan);
    add(FormStep, m_status);
    add(FormStep, m_fourEyes);
    add(FormStep, m_replicaNote);
    add(FormStep, fields);

    m_progress = new QProgressBar(page(RunStep));
    m_progress->setObjectName(QStringLiteral("progressBar"));
    m_result = CompensationDialog::resultText(page(RunStep));
    m_cancelRun = addRunButton(tr("Stop after this batch"), QStringLiteral("cancelRunButton"));
    add(RunStep, m_progress);
    add(RunStep, m_result, 1);

    connect(m_reason, &QLineEdit::textChanged, this, &MappedCompensationDialog::updateActionButton);
    connect(m_ticket, &QLineEdit::textChanged, this, &MappedCompensationDialog::updateActionButton);
    connect(m_cancelRun, &QPushButton::clicked, this, [this] {
        if (m_cancel)
            m_cancel->store(true);
        m_cancelRun->setEnabled(false);
        runText()->setText(tr("Stopping after the current batch …"));
    });
    m_reason->setFocus();
    preview();
}

MappedCompensationDialog::~MappedCompensationDialog()
{
    // As CompensationDialog: a run still going stops after its batch; what it did stays done.
    if (m_cancel)
        m_cancel->store(true);
}

qint64 MappedCompensationDialog::fenPerHundredPoints() const
{
    // An approval counts the points as the request did, which planned the amount asked.
    if (m_request && m_request->mapped)
        return m_request->mapped->fenPerHundredPoints;
    return m_pointsPerYuan > 0 ? 10000 / m_pointsPerYuan : 0;
}

void MappedCompensationDialog::preview()
{
    m_previewed = false;
    updateActionButton();
    m_status->setText(tr("Planning the dry run … nothing is changed."));
    ReplicaPreview::run<console::MappedPreview>(
        m_readWorker.get(), *m_worker, QStringLiteral("mapped-compensation-preview"),
        console::mappedPreviewJob(m_mapping, m_scope, fenPerHundredPoints()), this, m_status,
        m_replicaNote,
        [this](const console::MappedPreview &p, bool onPrimary) {
            showPreview(p);
            if (onPrimary)
                return;
            // Shown, not yet to be run: the run carries out the primary's plan.
            m_previewed = false;
            updateActionButton();
        },
        [](const console::MappedPreview &p) {
            return ReplicaPreview::Size{ordersIn(p.plan.copies), p.plan.copies.size(),
                                        p.fourEyes.moneyFen};
        },
        [] {});
}

QString MappedCompensationDialog::perSideEffect(const mapping::MappedCompensationPlan &plan,
                                                bool done) const
{
    using mapping::MappedAction;
    const QLocale locale;
    const auto value = [&](const mapping::SideEffectMapping &side, MappedAction action) {
        return side.valueUnit == mapping::Unit::Points
                   ? tr("%1 points").arg(locale.toString(plan.points(side.name, action)))
                   : console::formatMoney(plan.valueFen(side.name, action));
    };
    QString rows;
    for (const mapping::SideEffectMapping &side : m_mapping.sideEffects) {
        const MappedAction takeBack = side.compensate == mapping::Compensate::Freeze
                                          ? MappedAction::Freeze
                                          : MappedAction::Reverse;
        const QString verb = takeBack == MappedAction::Freeze
                                 ? (done ? tr("frozen") : tr("to freeze"))
                                 : (done ? tr("reversed") : tr("to reverse"));
        rows +=
            QStringLiteral("<tr><td><b>%1</b></td><td align='right'>%2 %3</td><td "
                           "align='right'>%4</td><td align='right'>%5</td><td "
                           "align='right'>%6</td></tr>")
                .arg(side.name.toHtmlEscaped(), locale.toString(plan.count(side.name, takeBack)),
                     verb, value(side, takeBack),
                     tr("%1 left to finance").arg(plan.count(side.name, MappedAction::Finance)),
                     value(side, MappedAction::Finance));
    }
    return QStringLiteral("<table cellspacing='0' cellpadding='4' width='100%'>%1</table>")
        .arg(rows);
}

void MappedCompensationDialog::showPreview(const console::MappedPreview &preview)
{
    m_preview = preview;
    m_previewed = true;
    const mapping::MappedCompensationPlan &plan = preview.plan;
    m_plan->setText(perSideEffect(plan, false));
    m_status->setText(
        plan.isEmpty()
            ? tr("<b>Nothing to compensate:</b> no live duplicate in this scope.")
            : tr("On %1 order(s); <b>%2</b> frozen or reversed in all (points at %3 = ¥1). A copy "
                 "already used is never touched: finance decides.")
                      .arg(QLocale().toString(ordersIn(plan.copies)),
                           console::formatMoney(preview.fourEyes.moneyFen),
                           QString::number(m_pointsPerYuan)) +
                  QStringLiteral("<br>") +
                  tr("Dry run: nothing has been changed. The first copy of each duplicate stays; "
                     "nothing is deleted."));
    // The table has a row per side effect, known only now: the dialog grows to show them all.
    adjustSize();
    if (m_request && !planFitsRequest(preview.fourEyes.moneyFen, *m_request)) {
        m_fourEyes->setText(tr("The duplicates changed since the request was made (%1 now, %2 "
                               "asked): an approval will be refused; ask for a new request.")
                                .arg(console::formatMoney(preview.fourEyes.moneyFen),
                                     console::formatMoney(m_request->amountFen)));
        m_fourEyes->show();
    } else if (needsRequest()) {
        m_fourEyes->setText(
            tr("%1, with the %2 this account compensated alone in the four-eyes window, is above "
               "the threshold of %3: this files a request that another operator account approves "
               "on the Compensation page, with this same mapping; nothing is compensated until "
               "then.")
                .arg(console::formatMoney(preview.fourEyes.moneyFen),
                     console::formatMoney(preview.fourEyes.soloFen),
                     console::formatMoney(preview.fourEyes.thresholdFen)));
        m_fourEyes->show();
    } else {
        m_fourEyes->hide();
    }
    updateActionButton();
}

bool MappedCompensationDialog::needsRequest() const
{
    return !m_request && m_preview.fourEyes.needsRequest;
}

void MappedCompensationDialog::updateActionButton()
{
    const bool ready = m_previewed && !m_preview.plan.isEmpty() &&
                       !m_reason->text().trimmed().isEmpty() &&
                       !m_ticket->text().trimmed().isEmpty();
    nextButton()->setText(m_request        ? tr("Approve and compensate…")
                          : needsRequest() ? tr("Request approval…")
                                           : tr("Compensate…"));
    nextButton()->setEnabled(ready);
    nextButton()->setToolTip(
        ready ? QString() : tr("Needs a preview with something to do, a reason and a ticket."));
}

void MappedCompensationDialog::prepareConfirmation()
{
    const QString what = tr("%1<p>on %2 order(s): <b>%3</b> in all. Reason: <b>%4</b>, ticket "
                            "<b>%5</b>.</p>")
                             .arg(perSideEffect(m_preview.plan, false),
                                  QLocale().toString(ordersIn(m_preview.plan.copies)),
                                  console::formatMoney(m_preview.fourEyes.moneyFen),
                                  m_reason->text().trimmed().toHtmlEscaped(),
                                  m_ticket->text().trimmed().toHtmlEscaped());
    if (needsRequest()) {
        confirmText()->setText(
            tr("<h3>File a request for another operator?</h3><p>When approved through this same "
               "mapping, it will, on the team's tables:</p>%1<p>Nothing changes until another "
               "operator account approves it.</p>")
                .arg(what));
        confirmButton()->setText(tr("File the request"));
        return;
    }
    confirmText()->setText(
        tr("<h3>%1</h3><p>This will, on the team's tables:</p>%2<p>Each copy is one row in "
           "<tt>mapped_compensation</tt> and one audit entry with the mapping's SHA-256 under your "
           "database account. Nothing is deleted.</p>")
            .arg(m_request ? tr("Approve request %1 and compensate?").arg(m_request->id)
                           : tr("Compensate now?"),
                 what));
    confirmButton()->setText(m_request ? tr("Approve and compensate now") : tr("Compensate now"));
}

void MappedCompensationDialog::run()
{
    m_progress->setRange(0, int(m_preview.plan.copies.size()));
    m_progress->setValue(0);
    runText()->setText(needsRequest() ? tr("Filing the request …") : tr("Compensating …"));
    m_cancelRun->setEnabled(!needsRequest());
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    mapping::MappedJob job;
    job.scope = m_scope;
    job.approveRequestId = m_request ? m_request->id : 0;
    job.fenPerHundredPoints = fenPerHundredPoints();
    job.reason = m_reason->text().trimmed();
    job.ticket = m_ticket->text().trimmed();
    if (!m_request)
        job.confirmed = m_preview.plan;
    QPointer<MappedCompensationDialog> guard(this);
    job.progress = [guard](int done, int total) {
        console::Worker::postTo(guard, [done, total](MappedCompensationDialog *dialog) {
            dialog->m_progress->setValue(done);
            dialog->runText()->setText(tr("Compensating … %1 of %2 copies")
                                           .arg(QString::number(done), QString::number(total)));
        });
    };
    m_worker->submit<mapping::MappedResult>(
        QStringLiteral("mapped-compensation-run"),
        console::mappedRunJob(m_mapping, std::move(job), m_cancel), this,
        [this](const mapping::MappedResult &result) { showResult(result); },
        [this](const db::Error &error) {
            m_cancelRun->setEnabled(false);
            finishRun();
            CompensationDialog::showRunError(runText(), m_result, error);
            Q_EMIT changed();
        });
}

void MappedCompensationDialog::showResult(const mapping::MappedResult &result)
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
        m_result->setText(tr("It waits for another operator account to approve it on the "
                             "Compensation page, with the same mapping file. Nothing has been "
                             "compensated yet."));
        return;
    }
    const mapping::MappedCompensationOutcome &o = result.outcome;
    m_progress->setValue(m_progress->maximum());
    runText()->setText(
        o.cancelled ? tr("<b>Stopped.</b> What was done stays done; a new run finishes the rest.")
                    : tr("<b>Done.</b>"));
    mapping::MappedCompensationPlan done;
    done.copies = o.done + o.finance;
    QString text = perSideEffect(done, true) +
                   tr("Skipped %1 (compensated by someone else meanwhile, or changed since the "
                      "preview).<br>Batch <tt>%2</tt>.")
                       .arg(QString::number(o.skipped), o.batchId);
    text += CompensationDialog::notKeptWarning(int(o.notKept.size()));
    if (m_request)
        text += tr("<br>Request %1 is approved%2.")
                    .arg(QString::number(m_request->id),
                         !o.cancelled && o.notKept.isEmpty() ? tr(" and executed") : QString());
    m_result->setText(text);
}

} // namespace payops
