#include "switchcontrol.h"

#include "console/worker.h"
#include "dialogs/switchdialog.h"
#include "palette.h"

namespace payops {

SwitchControl::SwitchControl(const Dsn &dsn, QWidget *parent)
    : QPushButton(parent)
    , m_worker(std::make_unique<console::Worker>(dsn))
{
    setObjectName(QStringLiteral("switchControl"));
    setMinimumHeight(34);
    connect(this, &QPushButton::clicked, this, &SwitchControl::openDialog);
    showState();
}

SwitchControl::~SwitchControl() = default;

void SwitchControl::setMode(const QString &mode)
{
    m_mode = parseCallbackMode(mode);
    showState();
}

void SwitchControl::setAllowed(bool allowed)
{
    m_allowed = allowed;
    showState();
}

SwitchDialog *SwitchControl::dialog() const
{
    return window()->findChild<SwitchDialog *>();
}

void SwitchControl::showState()
{
    const bool recordOnly = m_mode == CallbackMode::RecordOnly;
    setText(recordOnly ? tr("Resume processing: switch back to NORMAL…")
                       : tr("Stop the bleeding: switch to RECORD_ONLY…"));
    const QColor alarm = palette::fill(palette::Role::Danger);
    setStyleSheet(recordOnly || !m_mode
                      ? QString()
                      : QStringLiteral("QPushButton:enabled { background: %1; color: %2; "
                                       "font-weight: bold; padding: 4px 14px; }")
                            .arg(alarm.name(), palette::textOn(alarm).name()));
    setEnabled(m_allowed && m_mode.has_value());
    if (!m_allowed)
        setToolTip(
            tr("This database account may not flip the switch (the payops_operator role may)."));
    else if (!m_mode)
        setToolTip(tr("The switch has not been read yet."));
    else
        setToolTip(recordOnly
                       ? tr("Instances process callbacks again; the backlog stays until processed.")
                       : tr("Instances only record callbacks: nothing is paid or issued until you "
                            "switch back."));
}

void SwitchControl::openDialog()
{
    if (!m_mode || dialog())
        return;
    const CallbackMode target =
        *m_mode == CallbackMode::RecordOnly ? CallbackMode::Normal : CallbackMode::RecordOnly;
    // Window-modal and non-blocking: the pages keep refreshing behind it.
    auto *dialog = new SwitchDialog(m_worker.get(), target, window());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &SwitchDialog::flipped, this, &SwitchControl::flipped);
    dialog->open();
}

} // namespace payops
