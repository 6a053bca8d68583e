#include "settingsdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace payops {

SettingsDialog::SettingsDialog(const console::ConsoleSettings &settings, QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings — payops console"));
    auto *form = new QFormLayout(this);
    m_refresh = new QSpinBox(this);
    m_refresh->setRange(1, 3600);
    m_refresh->setSuffix(tr(" s"));
    m_refresh->setValue(settings.refreshSeconds);
    m_pointsPerYuan = new QSpinBox(this);
    m_pointsPerYuan->setRange(1, 1000000);
    m_pointsPerYuan->setSuffix(tr(" points = ¥1"));
    m_pointsPerYuan->setValue(int(settings.pointsPerYuan));
    m_alive = new QSpinBox(this);
    m_alive->setRange(1, 3600);
    m_alive->setSuffix(tr(" s"));
    m_alive->setValue(settings.instanceAliveSeconds);
    form->addRow(tr("Refresh the overview and instances every"), m_refresh);
    form->addRow(tr("Cash value of points"), m_pointsPerYuan);
    form->addRow(tr("An instance is alive if its heartbeat is younger than"), m_alive);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

console::ConsoleSettings SettingsDialog::settings() const
{
    console::ConsoleSettings s;
    s.refreshSeconds = m_refresh->value();
    s.pointsPerYuan = m_pointsPerYuan->value();
    s.instanceAliveSeconds = m_alive->value();
    return s;
}

} // namespace payops
