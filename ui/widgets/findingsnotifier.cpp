#include "findingsnotifier.h"

#include <QApplication>
#include <QMainWindow>
#include <QPushButton>
#include <QStatusBar>
#include <QStyle>
#include <QSystemTrayIcon>

namespace payops {

FindingsNotifier::FindingsNotifier(QMainWindow *window)
    : QObject(window)
    , m_window(window)
{
    setObjectName(QStringLiteral("findingsNotifier"));
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray =
            new QSystemTrayIcon(window->style()->standardIcon(QStyle::SP_MessageBoxWarning), this);
        m_tray->setToolTip(tr("payops console"));
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, &FindingsNotifier::open);
        connect(m_tray, &QSystemTrayIcon::activated, this,
                [this](QSystemTrayIcon::ActivationReason reason) {
                    if (reason == QSystemTrayIcon::Trigger)
                        open();
                });
    } else {
        m_show = new QPushButton(tr("Show the findings"), window);
        m_show->setObjectName(QStringLiteral("showFindingsButton"));
        m_show->hide();
        window->statusBar()->addPermanentWidget(m_show); // a temporary message hides plain widgets
        connect(m_show, &QPushButton::clicked, this, &FindingsNotifier::open);
    }
}

Page::Id FindingsNotifier::pageFor(const console::NewFindings &fresh)
{
    // Duplicates first: they are the incident, and they keep paying out until stopped.
    if (fresh.duplicates)
        return Page::DuplicatesId;
    if (fresh.latePayments)
        return Page::BacklogId;
    return Page::InspectionId;
}

void FindingsNotifier::notify(const console::NewFindings &fresh, const InspectionRun &run)
{
    if (!fresh.any())
        return;
    m_target = pageFor(fresh);
    m_lastMessage =
        tr("New findings in inspection %1: %2.").arg(QString::number(run.id), fresh.describe(run));
    if (m_tray) {
        m_tray->show();
        m_tray->showMessage(tr("payops: new findings"), m_lastMessage, QSystemTrayIcon::Warning);
    } else {
        m_window->statusBar()->showMessage(m_lastMessage);
        m_show->show();
    }
}

void FindingsNotifier::open()
{
    m_window->showNormal();
    m_window->raise();
    m_window->activateWindow();
    if (m_show) {
        m_show->hide();
        m_window->statusBar()->clearMessage();
    }
    Q_EMIT navigate(m_target);
}

} // namespace payops
