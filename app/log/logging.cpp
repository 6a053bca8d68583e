#include "logging.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <cstdio>

namespace payops {
namespace {

QString g_logFilePath;
// The file sink's own logger, in spdlog's registry (whose lookup is thread-safe) under this name.
constexpr const char *kDetailLogger = "payops-detail";

// Logs name payments, orders and database errors: the folder and its files are the owner's
// only, including those an earlier version created with the umask's modes.
constexpr mode_t kPrivateFolderMode = 0700;
constexpr mode_t kPrivateFileMode = 0600;

bool makePrivateFolder(const QString &dir)
{
    return QDir().mkpath(dir) &&
           ::chmod(QFile::encodeName(dir).constData(), kPrivateFolderMode) == 0;
}

spdlog::file_event_handlers privateFileHandlers()
{
    spdlog::file_event_handlers handlers;
    handlers.after_open = [](const spdlog::filename_t &, std::FILE *file) {
        ::fchmod(::fileno(file), kPrivateFileMode);
    };
    return handlers;
}

void routeQtMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    auto level = spdlog::level::info;
    switch (type) {
    case QtDebugMsg:
        level = spdlog::level::debug;
        break;
    case QtInfoMsg:
        level = spdlog::level::info;
        break;
    case QtWarningMsg:
        level = spdlog::level::warn;
        break;
    case QtCriticalMsg:
        level = spdlog::level::err;
        break;
    case QtFatalMsg:
        level = spdlog::level::critical;
        break;
    }
    const char *category = context.category ? context.category : "qt";
    spdlog::log(level, "[{}] {}", category, message.toStdString());
    if (type == QtFatalMsg) {
        spdlog::default_logger()->flush();
        std::abort();
    }
}

} // namespace

std::optional<int> parseLogLevel(const QString &name)
{
    const auto level = spdlog::level::from_str(name.trimmed().toLower().toStdString());
    // from_str answers "off" for anything it does not know; only accept "off" when asked for.
    if (level == spdlog::level::off &&
        name.trimmed().compare(QLatin1String("off"), Qt::CaseInsensitive) != 0)
        return std::nullopt;
    return static_cast<int>(level);
}

LogLevelChoice chooseLogLevel(const QString &commandLineValue)
{
    LogLevelChoice choice;
    QString source = QStringLiteral("--log-level");
    QString value = commandLineValue;
    if (value.isEmpty()) {
        value = qEnvironmentVariable("PAYOPS_LOG_LEVEL");
        source = QStringLiteral("PAYOPS_LOG_LEVEL");
    }
    if (value.isEmpty())
        return choice;
    if (const auto level = parseLogLevel(value))
        choice.level = *level;
    else
        choice.error =
            QStringLiteral("%1: '%2' is not a log level (trace, debug, info, warn, error, off)")
                .arg(source, value);
    return choice;
}

void setupLogging(const QString &appName, int level)
{
    std::vector<spdlog::sink_ptr> sinks;
    spdlog::drop(kDetailLogger);
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_pattern("%^%l%$: %v");
    sinks.push_back(console);

    const QString dir =
        QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/logs");
    g_logFilePath.clear();
    // In a folder only the owner can enter, the moment between fopen() and fchmod() shows
    // the file to nobody else.
    if (makePrivateFolder(dir)) {
        const QString path = dir + QLatin1Char('/') + appName + QStringLiteral(".log");
        try {
            auto file = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
                path.toStdString(), 5 * 1024 * 1024, 3, false, privateFileHandlers());
            file->set_formatter(std::make_unique<spdlog::pattern_formatter>(
                "%Y-%m-%dT%H:%M:%S.%eZ %P/%t %l %v", spdlog::pattern_time_type::utc));
            sinks.push_back(file);
            g_logFilePath = path;
            auto detail = std::make_shared<spdlog::logger>(kDetailLogger, file);
            detail->set_level(static_cast<spdlog::level::level_enum>(level));
            detail->flush_on(spdlog::level::warn);
            spdlog::register_logger(detail);
        } catch (const spdlog::spdlog_ex &) {
            // A read-only home must not stop an operator's command: log to the console only.
        }
    }
    auto logger =
        std::make_shared<spdlog::logger>(appName.toStdString(), sinks.begin(), sinks.end());
    logger->set_level(static_cast<spdlog::level::level_enum>(level));
    logger->flush_on(spdlog::level::warn);
    // The default logger is also a registered one, which the periodic flush reaches: an
    // operator tailing the file sees info lines within a second, not at the next warning.
    spdlog::set_default_logger(logger);
    spdlog::flush_every(std::chrono::seconds(1));
    qInstallMessageHandler(routeQtMessage);
}

QString logFilePath()
{
    return g_logFilePath;
}

void logDetail(const QString &line)
{
    if (const auto detail = spdlog::get(kDetailLogger))
        detail->warn("{}", line.toStdString());
}

} // namespace payops
