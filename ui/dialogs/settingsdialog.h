#pragma once

#include "console/consolesettings.h"

#include <QDialog>

#include <array>

class QSpinBox;

namespace payops {

// The console's settings, one field per setting of console::ConsoleSettings, each named
// after its key. Accepting writes them through that object, which every page follows.
class SettingsDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit SettingsDialog(console::ConsoleSettings &settings, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(SettingsDialog)

    void accept() override;

private:
    console::ConsoleSettings &m_settings;
    std::array<QSpinBox *, console::ConsoleSettings::NUM_KEYS> m_fields{};
};

} // namespace payops
