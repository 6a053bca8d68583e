#include "mainwindow.h"

#include "console/account.h"
#include "console/consolesettings.h"
#include "console/localinstances.h"
#include "console/readsourcemonitor.h"
#include "console/stormrunner.h"
#include "console/worker.h"
#include "dialogs/connectiondialog.h"
#include "dialogs/reportdialog.h"
#include "dialogs/settingsdialog.h"
#include "domain/inspection/privileges.h"
#include "pages/evidencepage.h"
#include "pages/inspectionpage.h"
#include "pages/overviewpage.h"
#include "pages/pagetable.h"
#include "pages/simulationpage.h"
#include "palette.h"
#include "playbook/playbookdock.h"
#include "widgets/findingsnotifier.h"
#include "widgets/mappingcheckbar.h"

#include <QAction>
#include <QApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QVBoxLayout>

namespace payops {

MainWindow::MainWindow(std::optional<Dsn> dsn, QWidget *parent)
    : QMainWindow(parent)
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("payops console"));
    // Never larger than the screen: on a 1366 × 768 laptop a window taller than the screen
    // hides its status bar and the playbook's last steps below the panel.
    QSize size(1360, 860);
    if (const QScreen *screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableSize());
    resize(size);

    auto *central = new QWidget(this);
    auto *outer = new QVBoxLayout(central);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    m_banner = new QWidget(central);
    m_banner->setObjectName(QStringLiteral("connectionBanner"));
    const QColor alarm = palette::fill(palette::Role::Danger);
    m_banner->setStyleSheet(
        QStringLiteral(
            "#connectionBanner { background: %1; } QLabel { color: %2; font-weight: bold; }")
            .arg(alarm.name(), palette::textOn(alarm).name()));
    auto *bannerLayout = new QHBoxLayout(m_banner);
    m_bannerText = new QLabel(m_banner);
    m_bannerText->setObjectName(QStringLiteral("bannerText"));
    m_bannerText->setWordWrap(true);
    auto *retry = new QPushButton(tr("Retry now"), m_banner);
    bannerLayout->addWidget(m_bannerText, 1);
    bannerLayout->addWidget(retry);
    m_banner->hide();
    outer->addWidget(m_banner);
    m_mappingCheck = new MappingCheckBar(central);
    outer->addWidget(m_mappingCheck);

    auto *body = new QHBoxLayout;
    m_nav = new QListWidget(central);
    m_nav->setObjectName(QStringLiteral("navList"));
    QFont navFont = m_nav->font();
    navFont.setPointSizeF(navFont.pointSizeF() * 1.15);
    m_nav->setFont(navFont);
    m_nav->setSpacing(4);
    for (const PageEntry &entry : pageTable())
        m_nav->addItem(pageTitle(entry));
    // As wide as its longest title in the language shown, and room for a scroll bar on a
    // short screen: every pixel more is taken from the page beside it.
    m_nav->setFixedWidth(m_nav->sizeHintForColumn(0) + 2 * m_nav->frameWidth() +
                         2 * m_nav->spacing() +
                         m_nav->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8);
    m_stack = new QStackedWidget(central);
    auto *placeholder = new QLabel(tr("Not connected. File → Connect… opens the connection dialog; "
                                      "payops-console --db mysql://USER@HOST/DB skips it."),
                                   m_stack);
    placeholder->setObjectName(QStringLiteral("placeholder"));
    placeholder->setAlignment(Qt::AlignCenter);
    placeholder->setWordWrap(true);
    m_stack->addWidget(placeholder);
    body->addWidget(m_nav);
    body->addWidget(m_stack, 1);
    outer->addLayout(body, 1);
    setCentralWidget(central);
    m_localInstances = new console::LocalInstances(this);
    m_stormRunner = new console::StormRunner(this);

    auto *connectAction = new QAction(tr("&Connect…"), this);
    connectAction->setObjectName(QStringLiteral("actionConnect"));
    connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectionDialog);
    auto *refreshAction = new QAction(tr("&Refresh"), this);
    refreshAction->setObjectName(QStringLiteral("actionRefresh"));
    refreshAction->setShortcut(QKeySequence::Refresh);
    connect(refreshAction, &QAction::triggered, this, &MainWindow::refresh);
    auto *settingsAction = new QAction(tr("&Settings…"), this);
    settingsAction->setObjectName(QStringLiteral("actionSettings"));
    connect(settingsAction, &QAction::triggered, this, &MainWindow::openSettings);
    auto *quitAction = new QAction(tr("&Quit"), this);
    quitAction->setShortcut(QKeySequence::Quit);
    connect(quitAction, &QAction::triggered, qApp, &QApplication::quit);
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    fileMenu->addAction(connectAction);
    fileMenu->addAction(refreshAction);
    fileMenu->addAction(settingsAction);
    auto *reportAction = new QAction(tr("Incident re&port…"), this);
    reportAction->setObjectName(QStringLiteral("actionIncidentReport"));
    reportAction->setToolTip(tr("A PDF of one time window, the same as payops report writes."));
    connect(reportAction, &QAction::triggered, this, &MainWindow::openReportDialog);
    fileMenu->addAction(reportAction);
    fileMenu->addSeparator();
    fileMenu->addAction(quitAction);

    m_connectionLabel = new QLabel(tr("no database"), this);
    m_connectionLabel->setObjectName(QStringLiteral("connectionLabel"));
    m_accountLabel = new QLabel(this);
    m_accountLabel->setObjectName(QStringLiteral("accountLabel"));
    // One line for every page that reads from a replica: where from and how far behind.
    m_readSourceLabel = new QLabel(this);
    m_readSourceLabel->setObjectName(QStringLiteral("readSourceLabel"));
    m_readSourceLabel->hide();
    statusBar()->addPermanentWidget(m_readSourceLabel);
    statusBar()->addPermanentWidget(m_accountLabel);
    statusBar()->addPermanentWidget(m_connectionLabel);

    m_playbook = new PlaybookDock(this);
    addDockWidget(Qt::RightDockWidgetArea, m_playbook);
    m_playbook->hide(); // until its first check says whether the database is a sandbox
    connect(m_playbook, &PlaybookDock::navigate, this, &MainWindow::showPage);
    connect(m_playbook, &PlaybookDock::openOrder, this, &MainWindow::openOrder);
    connect(m_playbook, &PlaybookDock::reportRequested, this, &MainWindow::openReportDialog);
    m_playbook->setSimulation(m_localInstances, m_stormRunner);
    m_findingsNotifier = new FindingsNotifier(this);
    connect(m_findingsNotifier, &FindingsNotifier::navigate, this, &MainWindow::showPage);
    QAction *playbookAction = m_playbook->toggleViewAction();
    playbookAction->setObjectName(QStringLiteral("actionPlaybook"));
    playbookAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    menuBar()->addMenu(tr("&View"))->addAction(playbookAction);

    connect(m_nav, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row < m_pages.size())
            m_stack->setCurrentWidget(m_pages.at(row));
    });
    connect(retry, &QPushButton::clicked, this, &MainWindow::retryConnection);
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &MainWindow::retryConnection);

    if (dsn)
        connectTo(*dsn);
}

MainWindow::~MainWindow() = default;

void MainWindow::clearPages()
{
    // The placeholder first: removing the page on show would show the next one, laying
    // out and polishing each page only to delete it.
    m_stack->setCurrentIndex(0);
    for (Page *p : std::as_const(m_pages)) {
        m_stack->removeWidget(p);
        delete p;
    }
    m_pages.clear();
}

void MainWindow::connectTo(const console::Target &target)
{
    const Dsn &dsn = target.dsn;
    clearPages();
    m_dsn = dsn;
    m_readingDsn = target.readingDsn();
    m_accountProbed = false;
    m_connectionLabel->setText(
        target.mapping ? tr("%1 · tables of %2").arg(dsn.toDisplayString(), target.mapping->path)
                       : dsn.toDisplayString());
    watchReadSource(target);
    // In the table's order, as the navigation lists them: a page's row is its place in both.
    for (const PageEntry &entry : pageTable())
        m_pages << entry.make(target, m_stack);
    for (Page *p : std::as_const(m_pages)) {
        m_stack->addWidget(p);
        connect(p, &Page::navigate, this, &MainWindow::showPage);
        connect(p, &Page::openOrder, this, &MainWindow::openOrder);
        connect(p, &Page::openOrderNumber, this, &MainWindow::openOrderNumber);
        connect(p->worker(), &console::Worker::connectionLost, this, &MainWindow::onConnectionLost);
        connect(p->worker(), &console::Worker::connectionRestored, this,
                &MainWindow::onConnectionRestored);
    }
    if (auto *simulation = static_cast<SimulationPage *>(page(Page::SimulationId)))
        simulation->attach(m_localInstances, m_stormRunner);
    if (auto *inspections = static_cast<InspectionPage *>(page(Page::InspectionId)))
        connect(inspections, &InspectionPage::newFindings, m_findingsNotifier,
                &FindingsNotifier::notify);
    showPage(Page::OverviewId);
    m_playbook->setDatabase(target);
    probeAccount();
    m_mappingCheck->check(target);
    Q_EMIT connected();
}

void MainWindow::watchReadSource(const console::Target &target)
{
    delete m_readSource;
    m_readSource = nullptr;
    m_readSourceLabel->setVisible(target.readDsn.has_value());
    if (!target.readDsn)
        return;
    m_readSourceLabel->setText(tr("reading from %1 …").arg(target.readDsn->toDisplayString()));
    m_readSource = new console::ReadSourceMonitor(target.dsn, *target.readDsn, this);
    connect(m_readSource, &console::ReadSourceMonitor::measured, this,
            [this](const ReadSource &source) {
                // The few words the status bar has room for; the whole line, the replica's
                // address included, in the tooltip and above the overview's tiles.
                m_readSourceLabel->setText(
                    source.stale()
                        ? palette::strong(palette::Role::Warning, source.summary().toHtmlEscaped())
                        : source.summary().toHtmlEscaped());
                m_readSourceLabel->setToolTip(source.describe());
                if (auto *overview = static_cast<OverviewPage *>(page(Page::OverviewId)))
                    overview->setReadSource(source);
            });
    connect(m_readSource, &console::ReadSourceMonitor::failed, this, [this](const QString &why) {
        m_readSourceLabel->setText(
            palette::strong(palette::Role::Danger, tr("replica unreadable: %1").arg(why)));
    });
    m_readSource->measure();
}

void MainWindow::probeAccount()
{
    m_accountLabel->setText(tr("checking grants …"));
    // On the primary: that is where the actions run.
    page(Page::OverviewId)
        ->actionWorker()
        ->submit<console::Account>(
            QStringLiteral("account"), console::jobOf(console::probeAccount), this,
            [this](const console::Account &account) {
                m_accountProbed = true;
                const Privileges &granted = account.privileges;
                QStringList may;
                if (granted.flipSwitch)
                    may << tr("switch");
                if (granted.drain)
                    may << tr("drain");
                if (granted.compensate)
                    may << tr("compensate");
                if (granted.decideRequests)
                    may << tr("approve");
                m_accountLabel->setText(
                    may.isEmpty()
                        ? tr("%1 · read only").arg(account.user)
                        : tr("%1 · may %2").arg(account.user, may.join(QStringLiteral(", "))));
                m_accountLabel->setToolTip(
                    tr("Probed from the database's own grants; actions it does not allow are "
                       "disabled, and the database would refuse them anyway."));
                for (Page *p : std::as_const(m_pages))
                    p->setPrivileges(account.privileges);
                Q_EMIT privilegesKnown();
            },
            [this](const db::Error &error) {
                m_accountLabel->setText(tr("grants unknown: %1").arg(db::userMessage(error)));
                // Every action then says, where it is offered, which grant it needs.
                for (Page *p : std::as_const(m_pages))
                    p->setPrivileges(Privileges{});
            });
}

void MainWindow::openOrder(qint64 orderId)
{
    if (auto *evidence = static_cast<EvidencePage *>(page(Page::EvidenceId))) {
        evidence->showOrder(orderId);
        showPage(Page::EvidenceId);
    }
}

void MainWindow::openOrderNumber(const QByteArray &orderNo)
{
    if (auto *evidence = static_cast<EvidencePage *>(page(Page::EvidenceId))) {
        evidence->showOrderNumber(orderNo);
        showPage(Page::EvidenceId);
    }
}

Page *MainWindow::page(Page::Id id) const
{
    return m_pages.value(pageRow(id));
}

void MainWindow::showPage(Page::Id id)
{
    if (Page *p = page(id)) {
        m_nav->setCurrentRow(int(pageRow(id)));
        m_stack->setCurrentWidget(p);
    }
}

void MainWindow::refresh()
{
    for (Page *p : std::as_const(m_pages))
        p->refresh();
}

void MainWindow::openConnectionDialog()
{
    ConnectionDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted && dialog.dsn())
        connectTo(dialog.target());
}

void MainWindow::openSettings()
{
    // The dialog writes through the one settings object; each page follows what it uses.
    SettingsDialog dialog(console::ConsoleSettings::instance(), this);
    dialog.exec();
}

void MainWindow::openReportDialog()
{
    if (!m_dsn) {
        statusBar()->showMessage(tr("Connect to a database first: the report is read from it."),
                                 5000);
        return;
    }
    // Not modal: the report is printed in the background while the console stays in use. It
    // reads where the pages read, and writes nothing there.
    auto *dialog = new ReportDialog(*m_readingDsn, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ReportDialog::finished, this, [this](const QString &path) {
        if (!path.isEmpty())
            m_playbook->setReportWritten();
    });
    dialog->show();
}

void MainWindow::onConnectionLost(const QString &reason)
{
    if (!m_lost) {
        m_lost = true;
        m_retrySeconds = 1;
    }
    m_banner->show();
    m_bannerText->setText(
        tr("Connection to the database lost: %1. Retrying in %2 s — everything on screen is kept.")
            .arg(reason, QString::number(m_retrySeconds)));
    if (!m_retryTimer.isActive())
        m_retryTimer.start(m_retrySeconds * 1000);
}

void MainWindow::retryConnection()
{
    if (!m_lost || m_pages.isEmpty())
        return;
    // Backoff doubles up to 30 s; the overview's refresh is the probe, since it reads a bit
    // of everything. Its failure calls onConnectionLost again, which rearms the timer.
    m_retrySeconds = qMin(30, m_retrySeconds * 2);
    m_retryTimer.stop();
    page(Page::OverviewId)->refresh();
}

void MainWindow::onConnectionRestored()
{
    if (!m_lost)
        return;
    m_lost = false;
    m_retryTimer.stop();
    m_banner->hide();
    if (!m_accountProbed)
        probeAccount();
    statusBar()->showMessage(tr("Connection restored."), 5000);
    refresh();
}

} // namespace payops
