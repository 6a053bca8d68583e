#pragma once

#include <QStringList>

namespace payops::cli {

// Exit codes of `payops`, stable for scripts and cron.
enum ExitCode : int {
    Success = 0,
    Refused = 1,           // the operation ran and was refused or failed (e.g. live duplicates)
    UsageOrConnection = 2, // bad flags, bad DSN, unreachable server, wrong credentials
};

// True for the commands that lay out text (the report's PDF needs fonts): main() makes a
// QGuiApplication for them, and a QCoreApplication for the rest, which need no display.
bool needsGuiApplication(const QStringList &arguments);

// Runs `payops <command> ...`; arguments exclude the program name.
int run(const QStringList &arguments);

} // namespace payops::cli
