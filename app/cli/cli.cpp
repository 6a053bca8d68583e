#include "cli.h"

#include "commands.h"

#include <QCoreApplication>
#include <QTextStream>

namespace payops::cli {

std::vector<std::unique_ptr<Command>> allCommands()
{
    std::vector<std::unique_ptr<Command>> commands;
    commands.push_back(makeSandboxCommand());
    commands.push_back(makeMigrateCommand());
    commands.push_back(makeDegradeCommand());
    commands.push_back(makeDrainCommand());
    commands.push_back(makeInspectCommand());
    commands.push_back(makeCompensateCommand());
    commands.push_back(makeAuditCommand());
    commands.push_back(makeStormCommand());
    commands.push_back(makePostureCommand());
    commands.push_back(makeReconcileCommand());
    commands.push_back(makeReportCommand());
    commands.push_back(makeGrantCommand());
    commands.push_back(makeAccountsCommand());
    commands.push_back(makeMappingCommand());
    return commands;
}

namespace {

struct Cli
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::Cli)
};

void printUsage(QTextStream &out)
{
    out << Cli::tr("payops %1 - operate a payment-callback endpoint during an incident")
               .arg(QStringLiteral(PAYOPS_VERSION))
        << "\n\n"
        << Cli::tr("Usage: payops <command> [options]   (payops <command> --help for its options)")
        << "\n\n"
        << Cli::tr("Commands:") << '\n';
    for (const auto &command : allCommands())
        out << "  " << command->name().leftJustified(10) << ' ' << command->summary() << '\n';
    out << '\n'
        << Cli::tr(
               "Exit codes: 0 success, 1 refused or failed, 2 bad usage, bad DSN or no connection.")
        << '\n';
}

} // namespace

bool needsGuiApplication(const QStringList &arguments)
{
    return arguments.value(0) == QLatin1String("report");
}

int run(const QStringList &arguments)
{
    QTextStream out(stdout);
    QTextStream err(stderr);
    if (arguments.isEmpty()) {
        printUsage(err);
        return UsageOrConnection;
    }
    const QString &name = arguments.first();
    if (name == QLatin1String("-h") || name == QLatin1String("--help") ||
        name == QLatin1String("help")) {
        printUsage(out);
        return Success;
    }
    if (name == QLatin1String("--version") || name == QLatin1String("version")) {
        out << "payops " << PAYOPS_VERSION << '\n';
        return Success;
    }
    for (const auto &command : allCommands()) {
        if (command->name() == name)
            return command->run(arguments.mid(1));
    }
    err << Cli::tr("error: unknown command '%1' (payops --help lists the commands)").arg(name)
        << '\n';
    return UsageOrConnection;
}

} // namespace payops::cli
