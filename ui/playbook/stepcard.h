#pragma once

#include "console/playbook.h"

#include <QFrame>

class QLabel;
class QPushButton;

namespace payops {

// One step of the playbook: its number and title, what it does and why, the state its own
// check found with that check's one line, and the buttons that lead to where it happens.
class StepCard final : public QFrame
{
    Q_OBJECT

public:
    StepCard(int number, const QString &title, const QString &why, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(StepCard)

    void setStatus(const console::StepStatus &status);
    console::StepState state() const { return m_state; }
    // Adds a button under the text; objectName is "step<N><name>".
    QPushButton *addButton(const QString &name, const QString &text);
    void setWhy(const QString &why);

private:
    int m_number;
    console::StepState m_state = console::StepState::ToDo;
    QLabel *m_badge = nullptr;
    QLabel *m_why = nullptr;
    QLabel *m_reason = nullptr;
    QWidget *m_buttons = nullptr;
};

} // namespace payops
