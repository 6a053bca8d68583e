#include "db/dberror.h"
#include "log/application.h"
#include "log/logging.h"
#include "log/translation.h"
#include "service/callbackservice.h"
#include "service/serviceoptions.h"

#include <QCoreApplication>
#include <QProcessEnvironment>
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
    payops::installTranslations();

    const payops::ServiceCommandLine command =
        payops::parseServiceCommandLine(app.arguments(), QProcessEnvironment::systemEnvironment());
    if (command.action == payops::ServiceCommandLine::Action::Help) {
        QTextStream(stdout) << command.helpText;
        return 0;
    }
    if (command.action == payops::ServiceCommandLine::Action::Version) {
        QTextStream(stdout) << QCoreApplication::applicationName() << ' '
                            << QCoreApplication::applicationVersion() << Qt::endl;
        return 0;
    }
    const payops::LogLevelChoice level = payops::chooseLogLevel(command.logLevel);
    payops::setupLogging(QStringLiteral("payops-callbackd"), level.level);
    if (!level.error.isEmpty())
        return usageError(level.error);
    if (!command.error.isEmpty())
        return usageError(command.error);
    if (!command.warning.isEmpty())
        spdlog::warn("{}", command.warning.toStdString());
    const payops::ServiceOptions &options = command.options;

    payops::CallbackService service(options);
    int port = 0;
    try {
        port = service.start();
    } catch (const std::exception &failure) {
        spdlog::error("{}", payops::db::userMessage(failure).toStdString());
        return 2;
    }
    const QString address = payops::ServiceOptions::hostAndPort(options.host, port);
    QTextStream(stdout) << "payops-callbackd " << service.instanceId() << " listening on "
                        << address << " (handler " << options.handler << ")" << Qt::endl;
    spdlog::info("instance {} listening on {} with handler {}", service.instanceId().toStdString(),
                 address.toStdString(), options.handler.toStdString());

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
