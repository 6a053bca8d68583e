#include "db/dsn.h"
#include "log/application.h"
#include "log/logging.h"
#include "console/sandboxlauncher.h"
#include "dialogs/connectiondialog.h"
#include "mainwindow.h"
#include "pages/pagetable.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QStatusBar>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    payops::setApplicationIdentity();
    QApplication::setApplicationDisplayName(QStringLiteral("payops console"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Operations console for payment-callback incidents."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dbOption(QStringLiteral("db"),
                                      QStringLiteral("Connect to this database and skip the connection dialog."),
                                      QStringLiteral("dsn"));
    const QCommandLineOption logLevelOption(QStringLiteral("log-level"),
                                            QStringLiteral("trace, debug, info, warn, error or off."),
                                            QStringLiteral("level"));
    const QCommandLineOption sandboxOption(QStringLiteral("sandbox"),
                                           QStringLiteral("Start the local sandbox and connect to it."));
    const QString pageList = payops::pageNames().join(QStringLiteral(", "));
    const QCommandLineOption pageOption(QStringLiteral("page"), QStringLiteral("Open this page: %1.").arg(pageList),
                                        QStringLiteral("page"));
    const QCommandLineOption orderOption(QStringLiteral("order"),
                                         QStringLiteral("Open the evidence of this order."), QStringLiteral("id"));
    parser.addOption(dbOption);
    parser.addOption(sandboxOption);
    parser.addOption(pageOption);
    parser.addOption(orderOption);
    parser.addOption(logLevelOption);
    parser.process(app);

    const payops::LogLevelChoice level = payops::chooseLogLevel(parser.value(logLevelOption));
    payops::setupLogging(QStringLiteral("payops-console"), level.level);
    if (!level.error.isEmpty()) {
        QMessageBox::critical(nullptr, QStringLiteral("payops console"), level.error);
        return 2;
    }

    std::optional<payops::Dsn> dsn;
    if (parser.isSet(dbOption)) {
        QString error;
        dsn = payops::Dsn::parse(parser.value(dbOption), &error);
        if (!dsn) {
            QMessageBox::critical(nullptr, QStringLiteral("payops console"), error);
            return 2;
        }
    }
    const payops::PageEntry *startPage =
        parser.isSet(pageOption) ? payops::findPage(parser.value(pageOption)) : &payops::pageTable().front();
    if (!startPage) {
        QMessageBox::critical(nullptr, QStringLiteral("payops console"),
                              QStringLiteral("unknown page; one of: ") + pageList);
        return 2;
    }
    const qint64 orderId = parser.value(orderOption).toLongLong();
    payops::MainWindow window(dsn);
    // Applied whenever a database is connected, whichever way it was chosen.
    const auto openStartPage = [&window, startPage, orderId] {
        if (orderId > 0)
            window.openOrder(orderId);
        else
            window.showPage(startPage->id);
    };
    if (dsn)
        openStartPage();
    QObject::connect(&window, &payops::MainWindow::connected, &window, openStartPage);
    window.show();
    // The sandbox starts on a thread of its own; the window is up and says so meanwhile.
    payops::console::SandboxLauncher sandbox;
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::started, &window,
                     [&window](const payops::Dsn &started) {
                         window.statusBar()->showMessage(QStringLiteral("Local sandbox started."), 5000);
                         window.connectTo(started);
                     });
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::failed, &window, [&window](const QString &message) {
        QMessageBox::critical(&window, QStringLiteral("payops console"), message);
    });
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::progress, &window,
                     [&window](const QString &text) { window.statusBar()->showMessage(text); });
    if (!dsn && parser.isSet(sandboxOption)) {
        window.statusBar()->showMessage(QStringLiteral("Starting the local sandbox …"));
        sandbox.start();
    } else if (!dsn) {
        QMetaObject::invokeMethod(&window, [&window] {
            payops::ConnectionDialog dialog(&window);
            if (dialog.exec() == QDialog::Accepted && dialog.dsn())
                window.connectTo(*dialog.dsn());
        }, Qt::QueuedConnection);
    }
    return app.exec();
}
