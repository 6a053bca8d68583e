#include "settingsdialog.h"

#include "log/translation.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
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
    m_language = new QComboBox(this);
    m_language->setObjectName(QStringLiteral("language"));
    m_language->addItem(tr("System default"), QString());
    // Each language under its own name, so that it is found whatever the console speaks now.
    for (const Language &language : availableLanguages())
        m_language->addItem(language.nativeName, language.code);
    m_language->setCurrentIndex(qMax(0, m_language->findData(console::storedLanguage())));
    form->addRow(tr("Language"), m_language);
    auto *languageNote =
        new QLabel(tr("A new language applies at the next start of the console."), this);
    languageNote->setObjectName(QStringLiteral("languageNote"));
    languageNote->setWordWrap(true);
    form->addRow(languageNote);
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
    console::storeLanguage(m_language->currentData().toString());
    QDialog::accept();
}

} // namespace payops
