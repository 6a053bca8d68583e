#include "db/dsn.h"
#include "log/application.h"
#include "log/logging.h"
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
    parser.addOption(dbOption);
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
    return app.exec();
}
