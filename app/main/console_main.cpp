#include "db/dsn.h"
#include "log/application.h"
#include "log/logging.h"
#include "console/sandboxlauncher.h"
#include "dialogs/connectiondialog.h"
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

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
    parser.addOption(dbOption);
    parser.addOption(sandboxOption);
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
    payops::MainWindow window(dsn);
    window.show();
    // The sandbox starts on a thread of its own; the window is up and says so meanwhile.
    payops::console::SandboxLauncher sandbox;
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::started, &window,
                     [&window](const payops::Dsn &started) { window.connectTo(started); });
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::failed, &window, [&window](const QString &message) {
        QMessageBox::critical(&window, QStringLiteral("payops console"), message);
    });
    if (!dsn && parser.isSet(sandboxOption)) {
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
