#pragma once

#include "console/consolesettings.h"

#include <QDialog>

#include <array>

class QComboBox;
class QSpinBox;

namespace payops {

// The console's settings, one field per setting of console::ConsoleSettings, each named
// after its key. Accepting writes them through that object, which every page follows. The
// language is chosen here too, and applies at the next start (widgets built in one language
// would otherwise keep half their words in it).
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
    QComboBox *m_language = nullptr;
};

} // namespace payops
