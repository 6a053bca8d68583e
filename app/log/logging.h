#pragma once

#include <QString>

#include <optional>

namespace payops {

// Parses trace|debug|info|warn|error|critical|off. Empty optional for anything else.
std::optional<int> parseLogLevel(const QString &name);

// The level to use: the command-line value if given, else PAYOPS_LOG_LEVEL, else info.
// Returns an error text when a given value is not a level.
struct LogLevelChoice
{
    int level = 2; // spdlog::level::info
    QString error;
};
LogLevelChoice chooseLogLevel(const QString &commandLineValue);

// One setup for every binary: a console sink on stderr and a rotating file sink under the
// platform's app-data location (<AppDataLocation>/logs/<appName>.log; folder 0700, files
// 0600), flushed every second. Qt's own messages are routed into the same logger so that
// nothing bypasses the format or the file.
void setupLogging(const QString &appName, int level);

// Path of the log file setupLogging() writes, or empty when it could not be opened.
QString logFilePath();

// A warning for the log file only, never stderr: details a person must not be shown, such as
// a refused statement and the server's own text behind a one-line error (db::userMessage).
void logDetail(const QString &line);

} // namespace payops
