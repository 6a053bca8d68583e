#include "stepwizard.h"

#include <QDialogButtonBox>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace payops {

namespace {

// Enter never presses a button of the wizard: see the class comment.
QPushButton *named(QPushButton *button, const QString &objectName)
{
    button->setObjectName(objectName);
    button->setAutoDefault(false);
    button->setDefault(false);
    return button;
}

QPushButton *addButton(QDialogButtonBox *box, const QString &text,
                       QDialogButtonBox::ButtonRole role, const QString &objectName)
{
    return named(box->addButton(text, role), objectName);
}

} // namespace

StepWizard::StepWizard(const QString &objectName, const QString &title, int minimumWidth,
                       const QString &heading, const QString &next, const QString &nextName,
                       QWidget *parent)
    : QDialog(parent)
{
    setObjectName(objectName);
    setWindowTitle(title);
    setMinimumWidth(minimumWidth);
    auto *layout = new QVBoxLayout(this);
    m_steps = new QStackedWidget(this);
    layout->addWidget(m_steps);
    QDialogButtonBox *buttons[3] = {};
    for (int step = FormStep; step <= RunStep; ++step) {
        auto *page = new QWidget(m_steps);
        m_layouts[step] = new QVBoxLayout(page);
        buttons[step] = new QDialogButtonBox(page);
        m_steps->addWidget(page);
    }
    m_next = addButton(buttons[FormStep], next, QDialogButtonBox::AcceptRole, nextName);
    named(buttons[FormStep]->addButton(QDialogButtonBox::Cancel), QStringLiteral("cancelButton"));
    m_confirm = addButton(buttons[ConfirmStep], QString(), QDialogButtonBox::AcceptRole,
                          QStringLiteral("confirmButton"));
    QPushButton *back = addButton(buttons[ConfirmStep], tr("Back"), QDialogButtonBox::RejectRole,
                                  QStringLiteral("backButton"));
    m_runButtons = buttons[RunStep];
    m_close =
        named(m_runButtons->addButton(QDialogButtonBox::Close), QStringLiteral("closeButton"));
    m_close->setEnabled(false);
    for (int step = FormStep; step <= RunStep; ++step) {
        if (step != RunStep)
            m_layouts[step]->addStretch(1);
        m_layouts[step]->addWidget(buttons[step]);
    }

    auto *headingLabel = paragraph(QStringLiteral("wizardTitle"), page(FormStep));
    headingLabel->setText(QStringLiteral("<h3>%1</h3>").arg(heading.toHtmlEscaped()));
    add(FormStep, headingLabel);
    m_confirmText = paragraph(QStringLiteral("confirmText"), page(ConfirmStep));
    add(ConfirmStep, m_confirmText);
    m_runText = paragraph(QStringLiteral("runText"), page(RunStep));
    add(RunStep, m_runText);

    connect(m_next, &QPushButton::clicked, this, &StepWizard::goToConfirmation);
    connect(buttons[FormStep], &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(back, &QPushButton::clicked, this, [this] { showStep(FormStep); });
    connect(m_confirm, &QPushButton::clicked, this, [this] {
        showStep(RunStep);
        run();
    });
    connect(m_close, &QPushButton::clicked, this, &QDialog::accept);
}

StepWizard::Step StepWizard::step() const
{
    return Step(m_steps->currentIndex());
}

QLabel *StepWizard::paragraph(const QString &objectName, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    return label;
}

int StepWizard::insertionPoint(Step step) const
{
    return m_layouts[step]->count() - (step == RunStep ? 1 : 2);
}

void StepWizard::add(Step step, QWidget *widget, int stretch)
{
    m_layouts[step]->insertWidget(insertionPoint(step), widget, stretch);
}

void StepWizard::add(Step step, QLayout *layout)
{
    m_layouts[step]->insertLayout(insertionPoint(step), layout);
}

void StepWizard::addSpacing(Step step, int size)
{
    m_layouts[step]->insertSpacing(insertionPoint(step), size);
}

QWidget *StepWizard::page(Step step) const
{
    return m_steps->widget(step);
}

void StepWizard::showStep(Step step)
{
    m_steps->setCurrentIndex(step);
}

QPushButton *StepWizard::addRunButton(const QString &text, const QString &objectName)
{
    QPushButton *button = addButton(m_runButtons, text, QDialogButtonBox::RejectRole, objectName);
    // Close stays the last of the row.
    m_runButtons->removeButton(m_close);
    m_runButtons->addButton(m_close, QDialogButtonBox::RejectRole);
    return button;
}

void StepWizard::finishRun()
{
    m_close->setEnabled(true);
    m_close->setFocus();
}

void StepWizard::goToConfirmation()
{
    if (!m_next->isEnabled())
        return;
    prepareConfirmation();
    showStep(ConfirmStep);
    m_confirm->setFocus();
}

void StepWizard::keyPressEvent(QKeyEvent *event)
{
    if (event->key() != Qt::Key_Return && event->key() != Qt::Key_Enter) {
        QDialog::keyPressEvent(event); // Escape still cancels
        return;
    }
    if (step() == FormStep)
        goToConfirmation();
    event->accept();
}

} // namespace payops
