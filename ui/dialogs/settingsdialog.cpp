#include "settingsdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace payops {

SettingsDialog::SettingsDialog(console::ConsoleSettings &settings, QWidget *parent)
    : QDialog(parent)
    , m_settings(settings)
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings — payops console"));
    auto *form = new QFormLayout(this);
    for (int i = 0; i < console::ConsoleSettings::NUM_KEYS; ++i) {
        const auto key = console::ConsoleSettings::Key(i);
        const console::ConsoleSettings::Spec &spec = console::ConsoleSettings::spec(key);
        auto *field = new QSpinBox(this);
        field->setObjectName(QString::fromLatin1(spec.name));
        field->setRange(spec.minimum, spec.maximum);
        field->setSuffix(tr(spec.suffix));
        field->setValue(settings.value(key));
        field->setToolTip(tr("Default: %1").arg(spec.defaultValue));
        form->addRow(tr(spec.label), field);
        m_fields.at(key) = field;
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->setObjectName(QStringLiteral("settingsButtons"));
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void SettingsDialog::accept()
{
    console::ConsoleSettings::Values values;
    for (int i = 0; i < console::ConsoleSettings::NUM_KEYS; ++i)
        values.at(i) = m_fields.at(i)->value();
    m_settings.setValues(values);
    QDialog::accept();
}

} // namespace payops
