#include "commands.h"

#include "cli.h"
#include "db/dberror.h"
#include "lab/sandbox.h"

#include <stdexcept>

namespace payops::cli {
namespace {

class SandboxCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::SandboxCommand)

public:
    SandboxCommand()
        : Command(QStringLiteral("sandbox"),
                  tr("Run the local sandbox database (private MariaDB with demo data)."),
                  QStringLiteral("start|stop|status [--dir DIR] [--port N] [--no-seed]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addPositionalArgument(QStringLiteral("action"), tr("start, stop or status"));
        parser.addOption(
            {QStringLiteral("dir"),
             tr("Directory of the sandbox (default: %1).").arg(LocalServer::defaultDirectory()),
             QStringLiteral("dir")});
        parser.addOption({QStringLiteral("port"),
                          tr("Also listen on 127.0.0.1:PORT (default: unix socket only)."),
                          QStringLiteral("port")});
        parser.addOption(
            {QStringLiteral("no-seed"), tr("Do not load the demo data into a new sandbox.")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        const QStringList positional = parser.positionalArguments();
        if (positional.size() != 1)
            return fail(UsageOrConnection, tr("say start, stop or status (payops sandbox --help)"));
        const QString dir = parser.value(QStringLiteral("dir")).isEmpty()
                                ? LocalServer::defaultDirectory()
                                : parser.value(QStringLiteral("dir"));
        int port = 0;
        if (parser.isSet(QStringLiteral("port"))) {
            bool ok = false;
            port = parser.value(QStringLiteral("port")).toInt(&ok);
            if (!ok || port < 1 || port > 65535)
                return fail(UsageOrConnection, tr("--port must be 1-65535"));
        }
        LocalServer server(dir);
        const QString &action = positional.first();
        try {
            if (action == QLatin1String("start"))
                return start(server, port, !parser.isSet(QStringLiteral("no-seed")));
            if (action == QLatin1String("stop")) {
                say(server.stop() ? tr("stopped the sandbox in %1").arg(dir)
                                  : tr("the sandbox in %1 was not running").arg(dir));
                return Success;
            }
            if (action == QLatin1String("status"))
                return status(server);
        } catch (const std::exception &error) {
            return fail(Refused, db::userMessage(error));
        }
        return fail(UsageOrConnection,
                    tr("unknown action '%1': say start, stop or status").arg(action));
    }

private:
    int start(LocalServer &server, int port, bool seed)
    {
        const auto progress = [this](const QString &line) { say(line); };
        const SandboxStartResult result = startSandbox(server, port, seed, progress);
        if (result.seeded)
            say(tr("demo data loaded"));
        say(tr("sandbox running in %1").arg(server.directory()));
        sayTcp(server, server.status().tcpPort);
        // The last line is the DSN alone, so that scripts can take it with `tail -n 1`.
        say(result.dsn.toString());
        return Success;
    }

    // root over TCP needs the generated password; it is printed like the DSN it belongs to.
    void sayTcp(const LocalServer &server, int port)
    {
        if (port <= 0)
            return;
        say(tr("also listening on 127.0.0.1:%1 as root, with the password kept in %2:")
                .arg(QString::number(port), server.tcpPasswordPath()));
        say(server.tcpRootDsn(port, sandboxDatabaseName()).toString(true));
    }

    int status(const LocalServer &server)
    {
        const LocalServer::Status status = server.status();
        switch (status.state) {
        case LocalServer::State::Running:
            say(tr("running (pid %1) in %2").arg(QString::number(status.pid), server.directory()));
            sayTcp(server, status.tcpPort);
            say(server.rootDsn(sandboxDatabaseName()).toString());
            return Success;
        case LocalServer::State::Stale:
            say(tr("stopped; %1 (the next start recovers from it)").arg(status.detail));
            return Refused;
        case LocalServer::State::Stopped:
            say(tr("stopped (%1)").arg(server.directory()));
            return Refused;
        }
        return Refused;
    }
};

} // namespace

std::unique_ptr<Command> makeSandboxCommand()
{
    return std::make_unique<SandboxCommand>();
}

} // namespace payops::cli
