#pragma once

#include "dialogs/compensationdialog.h"
#include "dialogs/switchdialog.h"
#include "mainwindow.h"
#include "pages/backlogpage.h"
#include "pages/compensationpage.h"
#include "widgets/busyindicator.h"
#include "widgets/switchcontrol.h"

#include <QAbstractItemView>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QtTest>

namespace payops::test {

// PAYOPS_SCREENSHOT_DIR=DIR (script/screenshots): the widget as DIR/<name>.png. Not a check;
// the suite runs without it.
inline void screenshot(QWidget *widget, const QString &name)
{
    const QString directory = qEnvironmentVariable("PAYOPS_SCREENSHOT_DIR");
    if (directory.isEmpty())
        return;
    QCoreApplication::processEvents();
    QVERIFY(widget->grab().save(QDir(directory).filePath(name + QStringLiteral(".png"))));
}

// Waits until the window has what it asked the database for: no shown page's busy indicator
// running and every shown table with rows; where a table stays empty (on purpose, often),
// until nothing has been busy for a second. At most five seconds, and not a failure when they
// pass: what is checked afterwards is checked as it then stands.
inline void waitForData(QWidget *window)
{
    QElapsedTimer quiet;
    quiet.start();
    static_cast<void>(QTest::qWaitFor(
        [window, &quiet] {
            for (const BusyIndicator *busy : window->findChildren<BusyIndicator *>()) {
                if (busy->isBusy() && busy->parentWidget() && busy->parentWidget()->isVisible()) {
                    quiet.restart();
                    return false;
                }
            }
            for (const QAbstractItemView *view : window->findChildren<QAbstractItemView *>())
                if (view->isVisible() && view->model() && view->model()->rowCount() == 0)
                    return quiet.elapsed() >= 1000;
            return true;
        },
        5000));
}

// The overview's switch dialog, opened as an operator opens it once the account's grants are
// known; nullptr if it did not open.
inline SwitchDialog *openSwitchDialog(MainWindow &window)
{
    window.showPage(Page::OverviewId);
    auto *control = window.page(Page::OverviewId)->findChild<SwitchControl *>();
    if (!control || !QTest::qWaitFor([control] { return control->isEnabled(); }, 20000))
        return nullptr;
    control->click();
    static_cast<void>(QTest::qWaitFor([control] { return control->dialog() != nullptr; }, 5000));
    return control->dialog();
}

// Gives a switch dialog the reason, confirms the flip as an operator does, waits until it is
// done (every live instance acknowledged or named as late) and closes the dialog.
inline void confirmFlip(SwitchDialog *dialog, const QString &reason)
{
    QVERIFY(dialog);
    QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit")), reason);
    QTest::mouseClick(dialog->findChild<QPushButton *>(QStringLiteral("continueButton")),
                      Qt::LeftButton);
    auto *confirm = dialog->findChild<QPushButton *>(QStringLiteral("confirmButton"));
    QTRY_VERIFY_WITH_TIMEOUT(confirm->isEnabled(), 10000);
    QTest::mouseClick(confirm, Qt::LeftButton);
    auto *close = dialog->findChild<QPushButton *>(QStringLiteral("closeButton"));
    QTRY_VERIFY_WITH_TIMEOUT(close->isEnabled(), 15000);
    QTest::mouseClick(close, Qt::LeftButton);
}

// Opens the backlog page's confirmation of a drain and answers it.
inline void confirmDrain(BacklogPage *page)
{
    page->processBacklog();
    auto *box = page->findChild<QMessageBox *>(QStringLiteral("drainConfirm"));
    QVERIFY(box);
    QVERIFY2(box->text().contains(QStringLiteral("Process")), qPrintable(box->text()));
    box->button(QMessageBox::Yes)->click();
}

// The compensation page's dialog for every open duplicate, with its dry-run preview read;
// nullptr if it did not open or read nothing.
inline CompensationDialog *openCompensationPreview(MainWindow &window)
{
    window.showPage(Page::CompensationId);
    auto *page = qobject_cast<CompensationPage *>(window.page(Page::CompensationId));
    if (!page)
        return nullptr;
    CompensationDialog *dialog = page->compensateEverything();
    if (!QTest::qWaitFor([dialog] { return !dialog->plan().isEmpty(); }, 20000))
        return nullptr;
    return dialog;
}

// Types the reason and ticket into a compensation dialog (CompensationDialog or
// MappedCompensationDialog), goes through the confirmation and waits for the result.
inline void compensateThrough(QDialog *dialog)
{
    auto *act = dialog->findChild<QPushButton *>(QStringLiteral("actButton"));
    QVERIFY(!act->isEnabled()); // no reason, no ticket
    QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit")),
                     QStringLiteral("duplicate payout INC-7"));
    QVERIFY(!act->isEnabled());
    QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("ticketEdit")),
                     QStringLiteral("INC-7"));
    QTRY_VERIFY(act->isEnabled());
    QTest::mouseClick(act, Qt::LeftButton);
    QTest::mouseClick(dialog->findChild<QPushButton *>(QStringLiteral("confirmButton")),
                      Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(
        dialog->findChild<QPushButton *>(QStringLiteral("closeButton"))->isEnabled(), 20000);
}

} // namespace payops::test
