#pragma once

#include "domain/callback/callbackswitch.h"
#include "widgets/stepwizard.h"

#include <QStringList>

class QLabel;
class QLineEdit;
class QListWidget;

namespace payops {

namespace console {
class Worker;
struct SwitchOutcome;
} // namespace console

// Flips the callback switch the way `payops degrade` does: a reason is required, a
// confirmation names what will happen and which live instances it reaches, and after the
// flip every live instance is shown as it acknowledges the new version; any that has not
// within 5 s is named. The flip and the wait are console::flipAndAwait's; this only shows them.
class SwitchDialog final : public StepWizard
{
    Q_OBJECT

public:
    SwitchDialog(console::Worker *worker, CallbackMode target, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(SwitchDialog)

Q_SIGNALS:
    void flipped();

private:
    void prepareConfirmation() override;
    void run() override;
    void acknowledged(const InstanceAck &ack);
    void finished(const console::SwitchOutcome &outcome);
    void failed(const QString &message);

    console::Worker *m_worker;
    CallbackMode m_target;
    QStringList m_liveInstances; // as read when the dialog opened
    bool m_instancesRead = false;
    QString m_instancesError;
    QLineEdit *m_reason = nullptr;
    QLabel *m_error = nullptr;
    QListWidget *m_acks = nullptr;
    QLabel *m_warning = nullptr;
};

} // namespace payops
