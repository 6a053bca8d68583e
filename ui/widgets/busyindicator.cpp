#include "busyindicator.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace payops {

BusyIndicator::BusyIndicator(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("busyIndicator"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_label = new QLabel(this);
    m_label->setObjectName(QStringLiteral("busyLabel"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    layout->addWidget(m_label);
    layout->addWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, &BusyIndicator::cancelRequested);
    m_timer.setInterval(250);
    connect(&m_timer, &QTimer::timeout, this, &BusyIndicator::tick);
    // Keep the space it takes so the page does not jump when it appears.
    QSizePolicy policy = sizePolicy();
    policy.setRetainSizeWhenHidden(true);
    setSizePolicy(policy);
    setVisible(false);
}

void BusyIndicator::start(const QString &what)
{
    m_what = what;
    m_clock.start();
    m_timer.start();
}

void BusyIndicator::stop()
{
    m_clock.invalidate();
    m_timer.stop();
    setVisible(false);
}

void BusyIndicator::tick()
{
    if (!m_clock.isValid())
        return;
    const qint64 ms = m_clock.elapsed();
    if (ms < 500)
        return;
    m_label->setText(tr("%1 … %2 s").arg(m_what, QString::number(ms / 1000)));
    setVisible(true);
}

} // namespace payops
