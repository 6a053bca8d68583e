#pragma once

#include "db/dsn.h"
#include "domain/callback/callbackswitch.h"

#include <QPushButton>

#include <optional>

namespace payops {

namespace console {
class Worker;
}
class SwitchDialog;

// The button that flips the callback switch, on the overview and the instances pages. It
// offers the opposite of the mode last read, opens SwitchDialog, and stays disabled (saying
// why) for an account that may not flip. It has a worker of its own: waiting for the
// instances to acknowledge must not hold up the page's refresh.
class SwitchControl final : public QPushButton
{
    Q_OBJECT

public:
    SwitchControl(const Dsn &dsn, QWidget *parent = nullptr);
    ~SwitchControl() override;
    Q_DISABLE_COPY_MOVE(SwitchControl)

    // The mode as the page last read it; empty when unknown.
    void setMode(const QString &mode);
    void setAllowed(bool allowed);
    // The dialog open now, if any.
    SwitchDialog *dialog() const;

Q_SIGNALS:
    void flipped();

private:
    void openDialog();
    void showState();

    std::unique_ptr<console::Worker> m_worker;
    std::optional<CallbackMode> m_mode;
    bool m_allowed = false;
};

} // namespace payops
