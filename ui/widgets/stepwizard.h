#pragma once

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QPushButton;
class QLayout;
class QStackedWidget;
class QVBoxLayout;

namespace payops {

// The three steps an act of consequence takes in the console: a form that says what it does
// and asks why, a confirmation that repeats all of it, and the run with its progress and its
// result. Nothing happens before the confirmation's button is clicked: Enter on the form goes
// on to the confirmation when the form is complete, and no key accepts the confirmation (with
// default buttons, the one key press that shows it could also accept it).
class StepWizard : public QDialog
{
    Q_OBJECT

public:
    enum Step { FormStep, ConfirmStep, RunStep };

    Q_DISABLE_COPY_MOVE(StepWizard)

    Step step() const;

protected:
    // `heading` tops the form; `next` is its button, named `nextName`, that leads to the
    // confirmation. The width is set before anything is laid out, so that the dialog opens
    // as tall as its text wraps at that width.
    StepWizard(const QString &objectName, const QString &title, int minimumWidth,
               const QString &heading, const QString &next, const QString &nextName,
               QWidget *parent);

    // A wrapping label of rich text, the wizard's kind of paragraph.
    static QLabel *paragraph(const QString &objectName, QWidget *parent);

    // A step's page, and what goes on it, in order, above its buttons; the form and the
    // confirmation keep theirs at the top, the run step's take the room by their stretch.
    QWidget *page(Step step) const;
    void add(Step step, QWidget *widget, int stretch = 0);
    void add(Step step, QLayout *layout);
    void addSpacing(Step step, int size);

    // Writes confirmText() and sets confirmButton() from the form, which is complete; called
    // again by the subclass when what it says changes while it is on screen.
    virtual void prepareConfirmation() = 0;
    // The confirmation is accepted and the run step is on screen.
    virtual void run() = 0;

    void showStep(Step step);

    QPushButton *nextButton() const { return m_next; }
    QLabel *confirmText() const { return m_confirmText; }
    QPushButton *confirmButton() const { return m_confirm; }
    QLabel *runText() const { return m_runText; }
    QPushButton *closeButton() const { return m_close; }
    // A button beside Close on the run step, such as a stop.
    QPushButton *addRunButton(const QString &text, const QString &objectName);
    // The run is over: Close is offered.
    void finishRun();

    void keyPressEvent(QKeyEvent *event) override;

private:
    void goToConfirmation();
    // Where the next item of the step goes: before its buttons, and before the stretch below
    // the form and the confirmation.
    int insertionPoint(Step step) const;

    QStackedWidget *m_steps = nullptr;
    QVBoxLayout *m_layouts[3] = {};
    QPushButton *m_next = nullptr;
    QLabel *m_confirmText = nullptr;
    QPushButton *m_confirm = nullptr;
    QLabel *m_runText = nullptr;
    QDialogButtonBox *m_runButtons = nullptr;
    QPushButton *m_close = nullptr;
};

} // namespace payops
