#include "stepcard.h"

#include "palette.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace payops {

namespace {

palette::Role roleOf(console::StepState state)
{
    switch (state) {
    case console::StepState::Done:
        return palette::Role::Ok;
    case console::StepState::InProgress:
        return palette::Role::Warning;
    case console::StepState::ToDo:
        return palette::Role::Neutral;
    case console::StepState::NotAvailable:
        return palette::Role::Muted;
    }
    return palette::Role::Neutral;
}

} // namespace

StepCard::StepCard(int number, const QString &title, const QString &why, QWidget *parent)
    : QFrame(parent)
    , m_number(number)
{
    setObjectName(QStringLiteral("step%1").arg(number));
    setFrameShape(QFrame::StyledPanel);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    layout->setSpacing(3);

    auto *head = new QHBoxLayout;
    auto *titleLabel = new QLabel(
        QStringLiteral("<b>%1.&nbsp;%2</b>").arg(QString::number(number), title.toHtmlEscaped()),
        this);
    titleLabel->setObjectName(QStringLiteral("step%1Title").arg(number));
    titleLabel->setWordWrap(true);
    m_badge = new QLabel(this);
    m_badge->setObjectName(QStringLiteral("step%1State").arg(number));
    m_badge->setAlignment(Qt::AlignRight | Qt::AlignTop);
    head->addWidget(titleLabel, 1);
    head->addWidget(m_badge);
    layout->addLayout(head);

    m_why = new QLabel(this);
    m_why->setObjectName(QStringLiteral("step%1Why").arg(number));
    m_why->setWordWrap(true);
    QFont small = m_why->font();
    small.setPointSizeF(small.pointSizeF() * 0.92);
    m_why->setFont(small);
    setWhy(why);
    layout->addWidget(m_why);

    m_reason = new QLabel(this);
    m_reason->setObjectName(QStringLiteral("step%1Reason").arg(number));
    m_reason->setWordWrap(true);
    m_reason->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_reason);

    m_buttons = new QWidget(this);
    auto *buttons = new QHBoxLayout(m_buttons);
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addStretch(1);
    layout->addWidget(m_buttons);
    setStatus({console::PlaybookStep(number), console::StepState::ToDo, tr("checking …")});
}

void StepCard::setWhy(const QString &why)
{
    m_why->setText(palette::coloured(palette::Role::Muted, why.toHtmlEscaped()));
}

void StepCard::setStatus(const console::StepStatus &status)
{
    m_state = status.state;
    const palette::Role role = roleOf(status.state);
    m_badge->setText(palette::strong(role, console::stepStateName(status.state).toHtmlEscaped()));
    m_reason->setText(palette::coloured(
        status.state == console::StepState::Done ? palette::Role::Ok : palette::Role::Neutral,
        status.reason.toHtmlEscaped()));
}

QPushButton *StepCard::addButton(const QString &name, const QString &text)
{
    auto *button = new QPushButton(text, m_buttons);
    button->setObjectName(QStringLiteral("step%1%2").arg(QString::number(m_number), name));
    auto *layout = static_cast<QHBoxLayout *>(m_buttons->layout());
    layout->insertWidget(layout->count() - 1, button);
    return button;
}

} // namespace payops
