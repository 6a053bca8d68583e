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
                  tr("Run the local sandbox database (private MariaDB with demo data), with test "
                     "keys for the WeChat Pay and Alipay formats and demo statements."),
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
        sayKeys(result.keys);
        if (!result.demoStatements.wechatBill.isEmpty())
            say(tr("demo statements (payops reconcile --db DSN --statement FILE): %1, %2")
                    .arg(result.demoStatements.wechatBill, result.demoStatements.alipayDetail));
        sayTcp(server, server.status().tcpPort);
        // The last line is the DSN alone, so that scripts can take it with `tail -n 1`.
        say(result.dsn.toString());
        return Success;
    }

    // The keys of the platforms' formats, and the flags that give payops-callbackd the
    // endpoint's side of them (the storm takes the platform's side from the same folder).
    void sayKeys(const SandboxKeys &keys)
    {
        const PlatformKeys ids = PlatformKeys::read(keys.directory);
        say(tr("test keys in %1 (made once, 0600): WeChat Pay platform key %2 (serial %3), "
               "APIv3 key %4, mchid %5, appid %6; Alipay key %7, app_id %8")
                .arg(keys.directory, keys.wechatPlatformPublicKey,
                     QString::fromLatin1(ids.wechatSerial), keys.wechatApiV3Key,
                     QString::fromLatin1(ids.wechatMchId), QString::fromLatin1(ids.wechatAppId),
                     keys.alipayPublicKey, QString::fromLatin1(ids.alipayAppId)));
        say(tr("payops-callbackd flags for /callbacks/wechatpay and /callbacks/alipay:"));
        say(callbackdKeyFlags(keys, ids).join(QLatin1Char(' ')));
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
