#include "switchdialog.h"

#include "console/switchflip.h"
#include "console/worker.h"
#include "palette.h"

#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>

namespace payops {

namespace {

QString effectOf(CallbackMode target)
{
    if (target == CallbackMode::RecordOnly)
        return QObject::tr("Every callback instance stops processing payment callbacks. Each "
                           "callback is only recorded, with its "
                           "raw body, and answered 200 so that the platform stops retrying. No "
                           "order is marked paid and no coupon "
                           "or points are issued until the backlog is processed. Callbacks already "
                           "being processed finish first: "
                           "the flip waits for them.");
    return QObject::tr("Every callback instance processes payment callbacks again: orders are "
                       "marked paid, coupons and points are "
                       "issued. The callbacks recorded meanwhile stay in the backlog until someone "
                       "processes them (Backlog page).");
}

} // namespace

SwitchDialog::SwitchDialog(console::Worker *worker, CallbackMode target, QWidget *parent)
    : StepWizard(QStringLiteral("switchDialog"),
                 tr("Switch the callback endpoint to %1").arg(callbackModeName(target)), 560,
                 tr("Switch to %1").arg(callbackModeName(target)), tr("Continue…"),
                 QStringLiteral("continueButton"), parent)
    , m_worker(worker)
    , m_target(target)
{
    // Step 1: what it does, and why (required).
    QWidget *form = page(FormStep);
    auto *effect = paragraph(QStringLiteral("switchEffect"), form);
    effect->setText(effectOf(target));
    m_reason = new QLineEdit(form);
    m_reason->setObjectName(QStringLiteral("reasonEdit"));
    m_reason->setMaxLength(255);
    m_reason->setPlaceholderText(
        tr("Why — required; it goes into the audit log (e.g. INC-2041 duplicate coupons)"));
    m_error = paragraph(QStringLiteral("switchError"), form);
    palette::setTextRole(m_error, palette::Role::Danger);
    m_error->hide();
    nextButton()->setEnabled(false);
    add(FormStep, effect);
    addSpacing(FormStep, 8);
    add(FormStep, new QLabel(tr("Reason"), form));
    add(FormStep, m_reason);
    add(FormStep, m_error);

    // Step 2, the confirmation, names the effect, the instances it reaches and the reason.
    confirmButton()->setText(tr("Switch to %1 now").arg(callbackModeName(target)));

    // Step 3: every live instance acknowledging the new version.
    m_acks = new QListWidget(page(RunStep));
    m_acks->setObjectName(QStringLiteral("ackList"));
    m_warning = paragraph(QStringLiteral("ackWarning"), page(RunStep));
    palette::setTextRole(m_warning, palette::Role::Danger);
    QFont bold = m_warning->font();
    bold.setBold(true);
    m_warning->setFont(bold);
    m_warning->hide();
    add(RunStep, m_acks, 1);
    add(RunStep, m_warning);

    connect(m_reason, &QLineEdit::textChanged, this,
            [this](const QString &text) { nextButton()->setEnabled(!text.trimmed().isEmpty()); });
    m_reason->setFocus(); // what the operator types first

    // The confirmation names the instances the flip reaches: read them now.
    m_worker->submit<QStringList>(
        QStringLiteral("switch-live-instances"), console::jobOf(console::liveInstanceIds), this,
        [this](const QStringList &ids) {
            m_liveInstances = ids;
            m_instancesRead = true;
            if (step() == ConfirmStep)
                prepareConfirmation();
        },
        [this](const db::Error &error) {
            // The flip itself will say whether the database answers; the confirmation says
            // that the instances are unknown rather than claim there are none.
            m_instancesError = db::userMessage(error);
            m_instancesRead = true;
            if (step() == ConfirmStep)
                prepareConfirmation();
        });
}

void SwitchDialog::prepareConfirmation()
{
    const QString reason = m_reason->text().trimmed();
    const QString instances =
        !m_instancesRead ? tr("Reading which instances are live …")
        : !m_instancesError.isEmpty()
            ? tr("The live instances could not be read: %1").arg(m_instancesError.toHtmlEscaped())
        : m_liveInstances.isEmpty()
            ? tr("No live instance is running now: the switch applies to each one as it starts.")
            : tr("It reaches %n live instance(s): %1.", nullptr, int(m_liveInstances.size()))
                  .arg(m_liveInstances.join(QStringLiteral(", ")).toHtmlEscaped());
    confirmText()->setText(
        tr("<h3>Switch the callback endpoint to %1?</h3><p>%2</p><p>%3</p>"
           "<p>Reason: <b>%4</b><br>The flip is written to the audit log under your database "
           "account.</p>")
            .arg(callbackModeName(m_target), effectOf(m_target), instances,
                 reason.toHtmlEscaped()));
    confirmButton()->setEnabled(m_instancesRead);
}

void SwitchDialog::run()
{
    confirmButton()->setEnabled(false);
    runText()->setText(tr("Switching to %1 …").arg(callbackModeName(m_target)));
    for (const QString &id : std::as_const(m_liveInstances))
        m_acks->addItem(tr("%1 — waiting").arg(id));
    const CallbackMode target = m_target;
    const QString reason = m_reason->text().trimmed();
    QPointer<SwitchDialog> guard(this);
    const std::function<void(const InstanceAck &)> onAck = [guard](const InstanceAck &ack) {
        console::Worker::postTo(guard, [ack](SwitchDialog *dialog) { dialog->acknowledged(ack); });
    };
    m_worker->submit<console::SwitchOutcome>(
        QStringLiteral("switch-flip"), console::jobOf(console::flipAndAwait, target, reason, onAck),
        this, [this](const console::SwitchOutcome &outcome) { finished(outcome); },
        [this](const db::Error &error) { failed(db::userMessage(error)); });
}

void SwitchDialog::acknowledged(const InstanceAck &ack)
{
    const QString text =
        tr("✓ %1 applies version %2").arg(ack.instance, QString::number(ack.versionApplied));
    for (int row = 0; row < m_acks->count(); ++row) {
        if (m_acks->item(row)->text().startsWith(ack.instance + QLatin1Char(' '))) {
            m_acks->item(row)->setText(text);
            return;
        }
    }
    m_acks->addItem(text); // an instance that started after the dialog opened
}

void SwitchDialog::finished(const console::SwitchOutcome &outcome)
{
    const FlipResult &flip = outcome.flip;
    const QList<InstanceAck> &instances = outcome.instances;
    Q_EMIT flipped();
    finishRun();
    const QString mode = callbackModeName(flip.after.mode);
    runText()->setText(
        flip.changed
            ? tr("<b>The switch is now %1</b> (version %2, was %3).")
                  .arg(mode, QString::number(flip.after.version),
                       callbackModeName(flip.before.mode))
            : tr("<b>The switch already was %1</b> (version %2, set by %3); nothing changed.")
                  .arg(mode, QString::number(flip.after.version),
                       flip.after.changedBy.toHtmlEscaped()));
    m_acks->clear();
    QStringList late;
    for (const InstanceAck &ack : instances) {
        if (ack.acknowledged) {
            m_acks->addItem(tr("✓ %1 applies version %2")
                                .arg(ack.instance, QString::number(ack.versionApplied)));
        } else {
            auto *item = new QListWidgetItem(
                tr("✗ %1 has not acknowledged within %2 s (still at version %3)")
                    .arg(ack.instance, QString::number(console::kAcknowledgeMs / 1000),
                         QString::number(ack.versionApplied)));
            item->setForeground(palette::danger());
            m_acks->addItem(item);
            late << ack.instance;
        }
    }
    if (!outcome.waitError.isEmpty()) {
        m_warning->setText(tr("The flip is committed, but the instances could not be watched: %1. "
                              "Check them on the "
                              "Instances page.")
                               .arg(outcome.waitError.toHtmlEscaped()));
        m_warning->show();
        return;
    }
    if (instances.isEmpty())
        m_acks->addItem(
            tr("No live instance is running: each one applies the switch as it starts."));
    if (!late.isEmpty()) {
        m_warning->setText(
            tr("Not acknowledged within %1 s: %2. Such an instance may be hung or cut off from the "
               "database; until it applies version %3 it may still act on the old mode. Check it "
               "on "
               "the Instances page.")
                .arg(QString::number(console::kAcknowledgeMs / 1000),
                     late.join(QStringLiteral(", ")).toHtmlEscaped(),
                     QString::number(flip.after.version)));
        m_warning->show();
    }
}

void SwitchDialog::failed(const QString &message)
{
    // Nothing changed (the flip is one transaction): back to the form, with the reason kept.
    m_acks->clear();
    confirmButton()->setEnabled(true);
    m_error->setText(tr("The switch was not flipped: %1").arg(message.toHtmlEscaped()));
    m_error->show();
    showStep(FormStep);
}

} // namespace payops
