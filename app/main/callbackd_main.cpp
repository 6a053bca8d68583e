#include "db/dsn.h"
#include "log/application.h"
#include "log/logging.h"
#include "service/callbackservice.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QTextStream>

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <pthread.h>
#include <thread>

namespace {

int usageError(const QString &message)
{
    spdlog::error("{}", message.toStdString());
    return 2;
}

} // namespace

int main(int argc, char *argv[])
{
    // SIGTERM and SIGINT are taken by one thread with sigwait, so no handler ever runs in
    // the middle of a request. Blocked here, before any thread exists, they stay blocked in
    // every thread the service starts.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    QCoreApplication app(argc, argv);
    payops::setApplicationIdentity();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("The payment-callback endpoint payops operates."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {QStringLiteral("db"), QStringLiteral("Database DSN (default: PAYOPS_DB)."), QStringLiteral("dsn")},
        {QStringLiteral("listen"), QStringLiteral("HOST:PORT to listen on (port 0: any free port)."),
         QStringLiteral("host:port"), QStringLiteral("127.0.0.1:8080")},
        {QStringLiteral("secret-file"), QStringLiteral("File holding the HMAC signing secret."), QStringLiteral("file")},
        {QStringLiteral("handler"), QStringLiteral("safe, or unsafe-demo (the incident's bug; sandbox only)."),
         QStringLiteral("name"), QStringLiteral("safe")},
        {QStringLiteral("instance"), QStringLiteral("Instance name (default: HOSTNAME:PORT)."), QStringLiteral("name")},
        {QStringLiteral("threads"), QStringLiteral("Database workers, each with its own connection."),
         QStringLiteral("n"), QStringLiteral("8")},
        {QStringLiteral("take-over"), QStringLiteral("Start even if a live instance already has this --instance name.")},
        {QStringLiteral("lock-timeout"), QStringLiteral("Seconds to wait for a pay_no's lock before answering 503."),
         QStringLiteral("seconds"), QStringLiteral("5")},
        {QStringLiteral("commit-delay-ms"),
         QStringLiteral("unsafe-demo only: time between lock release and commit (widens the window)."),
         QStringLiteral("ms"), QStringLiteral("60")},
        {QStringLiteral("log-level"), QStringLiteral("trace, debug, info, warn, error or off."), QStringLiteral("level")},
    });
    const payops::HttpLimits defaults;
    for (const payops::HttpLimitOption &limit : payops::httpLimitOptions())
        parser.addOption({QString::fromLatin1(limit.name), QString::fromLatin1(limit.description), QStringLiteral("n"),
                          QString::number(defaults.*limit.field)});
    if (!parser.parse(app.arguments())) {
        payops::setupLogging(QStringLiteral("payops-callbackd"), 2);
        return usageError(parser.errorText());
    }
    if (parser.isSet(QStringLiteral("help")))
        parser.showHelp(0);
    if (parser.isSet(QStringLiteral("version")))
        parser.showVersion();
    const payops::LogLevelChoice level = payops::chooseLogLevel(parser.value(QStringLiteral("log-level")));
    payops::setupLogging(QStringLiteral("payops-callbackd"), level.level);
    if (!level.error.isEmpty())
        return usageError(level.error);

    payops::ServiceOptions options;
    QString dsnText = parser.value(QStringLiteral("db"));
    if (dsnText.isEmpty())
        dsnText = qEnvironmentVariable("PAYOPS_DB");
    QString error;
    const auto dsn = payops::Dsn::parse(dsnText, &error);
    if (!dsn)
        return usageError(dsnText.isEmpty() ? QStringLiteral("no database given: pass --db DSN or set PAYOPS_DB") : error);
    options.dsn = *dsn;

    const QString listen = parser.value(QStringLiteral("listen"));
    const qsizetype colon = listen.lastIndexOf(QLatin1Char(':'));
    bool portOk = false;
    options.port = colon > 0 ? listen.mid(colon + 1).toInt(&portOk) : -1;
    if (!portOk || options.port < 0 || options.port > 65535)
        return usageError(QStringLiteral("--listen must be HOST:PORT, not '%1'").arg(listen));
    options.host = listen.left(colon);

    const QString secretPath = parser.value(QStringLiteral("secret-file"));
    if (secretPath.isEmpty())
        return usageError(QStringLiteral("--secret-file is required"));
    QFile secretFile(secretPath);
    if (!secretFile.open(QIODevice::ReadOnly))
        return usageError(QStringLiteral("cannot read the secret file %1: %2").arg(secretPath, secretFile.errorString()));
    options.secret = secretFile.readAll().trimmed();
    if (options.secret.size() < 16)
        return usageError(QStringLiteral("the secret in %1 is shorter than 16 bytes").arg(secretPath));

    options.handler = parser.value(QStringLiteral("handler"));
    if (options.handler != QLatin1String("safe") && options.handler != QLatin1String("unsafe-demo"))
        return usageError(QStringLiteral("--handler must be safe or unsafe-demo"));
    options.instance = parser.value(QStringLiteral("instance"));
    if (options.instance.size() > 64)
        return usageError(QStringLiteral("--instance is longer than 64 characters"));
    const auto intOption = [&parser](const char *name, int minimum, int maximum, int *target) {
        bool ok = false;
        *target = parser.value(QLatin1String(name)).toInt(&ok);
        return ok && *target >= minimum && *target <= maximum;
    };
    if (!intOption("threads", 1, 256, &options.threads))
        return usageError(QStringLiteral("--threads must be 1-256"));
    if (!intOption("lock-timeout", 0, 600, &options.lockTimeoutSeconds))
        return usageError(QStringLiteral("--lock-timeout must be 0-600 seconds"));
    if (!intOption("commit-delay-ms", 0, 60000, &options.unsafeCommitDelayMs))
        return usageError(QStringLiteral("--commit-delay-ms must be 0-60000"));
    for (const payops::HttpLimitOption &limit : payops::httpLimitOptions()) {
        if (!intOption(limit.name, limit.minimum, limit.maximum, &(options.limits.*limit.field)))
            return usageError(QStringLiteral("--%1 must be %2-%3").arg(QLatin1String(limit.name)).arg(limit.minimum).arg(limit.maximum));
    }
    options.takeOver = parser.isSet(QStringLiteral("take-over"));

    payops::CallbackService service(options);
    int port = 0;
    try {
        port = service.start();
    } catch (const std::exception &failure) {
        spdlog::error("{}", failure.what());
        return 2;
    }
    QTextStream(stdout) << "payops-callbackd " << service.instanceId() << " listening on " << options.host << ':'
                        << port << " (handler " << options.handler << ")" << Qt::endl;
    spdlog::info("instance {} listening on {}:{} with handler {}", service.instanceId().toStdString(),
                 options.host.toStdString(), port, options.handler.toStdString());

    std::atomic<bool> served{false};
    std::thread signalWaiter([&] {
        const timespec tick{0, 200 * 1000 * 1000};
        while (!served.load()) {
            const int signal = sigtimedwait(&stopSignals, nullptr, &tick);
            if (signal == SIGTERM || signal == SIGINT) {
                spdlog::info("signal {}: finishing the callbacks in flight", signal);
                service.stop();
                return;
            }
        }
    });
    service.run();
    served.store(true);
    signalWaiter.join();
    spdlog::info("stopped");
    return 0;
}
