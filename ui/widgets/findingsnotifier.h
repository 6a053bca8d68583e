#pragma once

#include "console/inspectionschedule.h"
#include "pages/page.h"

#include <QObject>

class QMainWindow;
class QPushButton;
class QSystemTrayIcon;

namespace payops {

// Tells the desktop when a scheduled inspection found something the run before it did not: a
// system tray message when the desktop has a tray, else the window's status bar. Clicking the
// message (or open()) leads to the page of the finding: duplicates to the duplicates page,
// late payments to the backlog, refunds owed to the inspection history. Without a tray, a
// button beside the status bar's message is the click.
class FindingsNotifier final : public QObject
{
    Q_OBJECT

public:
    explicit FindingsNotifier(QMainWindow *window);
    Q_DISABLE_COPY_MOVE(FindingsNotifier)

    void notify(const console::NewFindings &fresh, const InspectionRun &run);
    // The page the last notice leads to.
    Page::Id target() const { return m_target; }
    bool usesTray() const { return m_tray != nullptr; }
    const QString &lastMessage() const { return m_lastMessage; }
    static Page::Id pageFor(const console::NewFindings &fresh);

public Q_SLOTS:
    void open();

Q_SIGNALS:
    void navigate(payops::Page::Id page);

private:
    QMainWindow *m_window;
    QSystemTrayIcon *m_tray = nullptr;
    QPushButton *m_show = nullptr; // in the status bar, when there is no tray
    Page::Id m_target = Page::InspectionId;
    QString m_lastMessage;
};

} // namespace payops
