#include "mainwindow.h"

#include "databasesummary.h"
#include "db/dbworker.h"

#include <QAction>
#include <QApplication>
#include <QFont>
#include <QLabel>
#include <QMenuBar>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

namespace payops {

MainWindow::MainWindow(std::optional<Dsn> dsn, QWidget *parent)
    : QMainWindow(parent)
    , m_dsn(std::move(dsn))
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("payops console"));
    resize(1100, 720);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(32, 32, 32, 32);
    layout->setSpacing(16);
    m_headline = new QLabel(central);
    m_headline->setObjectName(QStringLiteral("headline"));
    QFont big = m_headline->font();
    big.setPointSizeF(big.pointSizeF() * 2.0);
    big.setBold(true);
    m_headline->setFont(big);
    m_details = new QLabel(central);
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_details->setWordWrap(true);
    layout->addWidget(m_headline);
    layout->addWidget(m_details, 1);
    setCentralWidget(central);

    auto *refreshAction = new QAction(tr("&Refresh"), this);
    refreshAction->setObjectName(QStringLiteral("actionRefresh"));
    refreshAction->setShortcut(QKeySequence::Refresh);
    connect(refreshAction, &QAction::triggered, this, &MainWindow::refresh);
    auto *quitAction = new QAction(tr("&Quit"), this);
    quitAction->setShortcut(QKeySequence::Quit);
    connect(quitAction, &QAction::triggered, qApp, &QApplication::quit);
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    fileMenu->addAction(refreshAction);
    fileMenu->addSeparator();
    fileMenu->addAction(quitAction);

    m_connectionLabel = new QLabel(this);
    m_connectionLabel->setObjectName(QStringLiteral("connectionLabel"));
    statusBar()->addPermanentWidget(m_connectionLabel);

    if (!m_dsn) {
        m_headline->setText(tr("Not connected"));
        m_details->setText(tr("Start the console with --db mysql://USER@HOST/DB, or run script/demo "
                              "to open it on the local sandbox."));
        m_connectionLabel->setText(tr("no database"));
        refreshAction->setEnabled(false);
        return;
    }
    m_worker = std::make_unique<db::DbWorker>(*m_dsn);
    refresh();
}

MainWindow::~MainWindow() = default;

void MainWindow::refresh()
{
    if (!m_worker)
        return;
    m_connectionLabel->setText(tr("connecting to %1 …").arg(m_dsn->toDisplayString()));
    m_worker->submit<DatabaseSummary>(
        QStringLiteral("summary"), loadDatabaseSummary, this,
        [this](const DatabaseSummary &summary) { showSummary(summary); },
        [this](const db::Error &error) { showError(error.message()); });
}

void MainWindow::showSummary(const DatabaseSummary &summary)
{
    m_connectionLabel->setText(tr("%1 as %2").arg(m_dsn->toDisplayString(), summary.currentUser));
    if (summary.schemaLevel.isEmpty()) {
        m_headline->setText(tr("Database %1 has no payops schema").arg(m_dsn->database));
        m_details->setText(tr("Run: payops migrate --db %1").arg(m_dsn->toDisplayString()));
        return;
    }
    m_headline->setText(summary.sandbox ? tr("%1 — sandbox").arg(m_dsn->database) : m_dsn->database);
    QString text = tr("<p>Server %1, schema level <b>%2</b>.</p><table cellpadding=4>")
                       .arg(summary.serverVersion.toHtmlEscaped(), summary.schemaLevel.toHtmlEscaped());
    for (auto it = summary.ordersByStatus.cbegin(); it != summary.ordersByStatus.cend(); ++it)
        text += QStringLiteral("<tr><td>%1</td><td align=right>%2</td></tr>")
                    .arg(it.key().toHtmlEscaped(), QLocale().toString(it.value()));
    text += QStringLiteral("</table>");
    m_details->setText(text);
}

void MainWindow::showError(const QString &message)
{
    m_connectionLabel->setText(tr("not connected"));
    m_headline->setText(tr("Cannot read the database"));
    m_details->setText(message.toHtmlEscaped());
}

} // namespace payops
