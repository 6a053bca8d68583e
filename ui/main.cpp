#include "console/connectionprofile.h"
#include "console/consolesettings.h"
#include "console/sandboxlauncher.h"
#include "db/dsn.h"
#include "dialogs/connectiondialog.h"
#include "log/application.h"
#include "log/logging.h"
#include "log/translation.h"
#include "mainwindow.h"
#include "pages/pagetable.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QIcon>
#include <QMessageBox>
#include <QPixmapCache>
#include <QProcessEnvironment>
#include <QStatusBar>

#include <spdlog/spdlog.h>

namespace {

// The console's command line, built alike for --help and --version (answered before any
// window system is touched) and for a run.
class ConsoleCommandLine
{
    Q_DECLARE_TR_FUNCTIONS(ConsoleCommandLine)

public:
    ConsoleCommandLine()
    {
        parser.setApplicationDescription(tr("Operations console for payment-callback incidents."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOption(db);
        parser.addOption(readDb);
        parser.addOption(mapping);
        parser.addOption(sandbox);
        parser.addOption(page);
        parser.addOption(order);
        parser.addOption(logLevel);
    }

    QCommandLineParser parser;
    const QString pageList = payops::pageNames().join(QStringLiteral(", "));
    const QCommandLineOption db{QStringLiteral("db"),
                                tr("Connect to this database and skip the connection dialog."),
                                QStringLiteral("dsn")};
    const QCommandLineOption readDb{
        QStringLiteral("read-db"),
        tr("Read the pages from this database, usually a replica of --db; actions still run on "
           "--db. Default: PAYOPS_READ_DB, with PAYOPS_READ_DB_PASSWORD."),
        QStringLiteral("dsn")};
    const QCommandLineOption mapping{
        QStringLiteral("mapping"),
        tr("Read the team's own tables of that database, as this TOML mapping file describes "
           "them (docs/mapping.md). Default: PAYOPS_MAPPING."),
        QStringLiteral("file")};
    const QCommandLineOption logLevel{QStringLiteral("log-level"),
                                      tr("trace, debug, info, warn, error or off."),
                                      QStringLiteral("level")};
    const QCommandLineOption sandbox{QStringLiteral("sandbox"),
                                     tr("Start the local sandbox and connect to it.")};
    const QCommandLineOption page{QStringLiteral("page"), tr("Open this page: %1.").arg(pageList),
                                  QStringLiteral("page")};
    const QCommandLineOption order{QStringLiteral("order"), tr("Open the evidence of this order."),
                                   QStringLiteral("id")};
};

// --help and --version have to answer where there is no display (over ssh, in a package's
// smoke test): a QApplication aborts there, so these are found in argv before one is made.
bool asksForHelpOrVersion(int argc, char *argv[])
{
    static const QByteArrayList flags = {"-h", "-?", "--help", "--help-all", "-v", "--version"};
    for (int i = 1; i < argc; ++i) {
        const QByteArray argument(argv[i]);
        if (argument == "--")
            break;
        if (flags.contains(argument))
            return true;
    }
    return false;
}

// The sizes the package installs into the hicolor theme, from the console's own resources,
// so that the window has its icon also when it runs from the build directory. An installed
// theme icon of the same name wins, as the desktop's own entry does.
QIcon applicationIcon()
{
    QIcon bundled;
    for (const int size : {16, 24, 32, 48, 64, 128, 256})
        bundled.addFile(QStringLiteral(":/icons/hicolor/%1x%1/apps/payops.png").arg(size),
                        QSize(size, size));
    return QIcon::fromTheme(QStringLiteral("payops"), bundled);
}

} // namespace

int main(int argc, char *argv[])
{
    if (asksForHelpOrVersion(argc, argv)) {
        QCoreApplication app(argc, argv);
        payops::setApplicationIdentity();
        payops::installTranslations(payops::console::storedLanguage());
        ConsoleCommandLine commandLine;
        commandLine.parser.process(app); // prints the help or the version and exits
        return 0;
    }

    QApplication app(argc, argv);
    payops::setApplicationIdentity();
    // Before any widget exists: a widget keeps the words it was built with.
    payops::installTranslations(payops::console::storedLanguage());
    QApplication::setApplicationDisplayName(ConsoleCommandLine::tr("payops console"));
    QApplication::setWindowIcon(applicationIcon());
    // Wayland compositors find the window's icon and name through its desktop entry.
    QGuiApplication::setDesktopFileName(QStringLiteral("payops-console"));
    // The style's pixmap cache fills to its limit (10 MiB by default) over the first minutes of
    // a console left refreshing, and looks like a leak to whoever watches its memory during an
    // incident; the console's few widgets repaint as fast from a 2 MiB one.
    QPixmapCache::setCacheLimit(2048);

    ConsoleCommandLine commandLine;
    QCommandLineParser &parser = commandLine.parser;
    parser.process(app);

    const QString title = QApplication::applicationDisplayName();
    const payops::LogLevelChoice level = payops::chooseLogLevel(parser.value(commandLine.logLevel));
    payops::setupLogging(QStringLiteral("payops-console"), level.level);
    if (!level.error.isEmpty()) {
        QMessageBox::critical(nullptr, title, level.error);
        return 2;
    }

    QString dsnError;
    const std::optional<payops::Dsn> dsn =
        payops::console::startupDsn(parser.value(commandLine.db), parser.isSet(commandLine.sandbox),
                                    QProcessEnvironment::systemEnvironment(), &dsnError);
    if (!dsnError.isEmpty()) {
        QMessageBox::critical(nullptr, title, dsnError);
        return 2;
    }
    if (const QString warning =
            payops::Dsn::commandLinePasswordWarning(parser.value(commandLine.db));
        !warning.isEmpty())
        spdlog::warn("{}", warning.toStdString());
    QString readDsnError;
    const std::optional<payops::Dsn> readDsn = payops::Dsn::readFromOptionOrEnvironment(
        parser.value(commandLine.readDb), QProcessEnvironment::systemEnvironment(), &readDsnError);
    if (!readDsnError.isEmpty()) {
        QMessageBox::critical(nullptr, title, readDsnError);
        return 2;
    }
    QString mappingError;
    const std::optional<payops::mapping::Mapping> mapping =
        payops::console::startupMapping(parser.value(commandLine.mapping), &mappingError);
    if (!mappingError.isEmpty()) {
        QMessageBox::critical(nullptr, title, mappingError);
        return 2;
    }
    const payops::PageEntry *startPage = parser.isSet(commandLine.page)
                                             ? payops::findPage(parser.value(commandLine.page))
                                             : &payops::pageTable().front();
    if (!startPage) {
        QMessageBox::critical(
            nullptr, title,
            ConsoleCommandLine::tr("unknown page; one of: %1").arg(commandLine.pageList));
        return 2;
    }
    const qint64 orderId = parser.value(commandLine.order).toLongLong();
    payops::MainWindow window(std::nullopt);
    if (dsn) {
        payops::console::Target target{*dsn, mapping};
        target.readDsn = readDsn;
        window.connectTo(target);
    }
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
                         window.statusBar()->showMessage(
                             ConsoleCommandLine::tr("Local sandbox started."), 5000);
                         window.connectTo(started);
                     });
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::failed, &window,
                     [&window, title](const QString &message) {
                         QMessageBox::critical(&window, title, message);
                     });
    QObject::connect(&sandbox, &payops::console::SandboxLauncher::progress, &window,
                     [&window](const QString &text) { window.statusBar()->showMessage(text); });
    if (!dsn && parser.isSet(commandLine.sandbox)) {
        window.statusBar()->showMessage(ConsoleCommandLine::tr("Starting the local sandbox …"));
        sandbox.start();
    } else if (!dsn) {
        QMetaObject::invokeMethod(
            &window,
            [&window] {
                payops::ConnectionDialog dialog(&window);
                if (dialog.exec() == QDialog::Accepted && dialog.dsn())
                    window.connectTo(dialog.target());
            },
            Qt::QueuedConnection);
    }
    return app.exec();
}
