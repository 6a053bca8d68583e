#pragma once

#include "console/consolesettings.h"

#include <QDialog>

class QSpinBox;

namespace payops {

// The console's settings: refresh interval, cash value of points, heartbeat age of a live
// instance.
class SettingsDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit SettingsDialog(const console::ConsoleSettings &settings, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(SettingsDialog)

    console::ConsoleSettings settings() const;

private:
    QSpinBox *m_refresh = nullptr;
    QSpinBox *m_pointsPerYuan = nullptr;
    QSpinBox *m_alive = nullptr;
};

} // namespace payops
