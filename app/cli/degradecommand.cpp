#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/callbackswitch.h"

namespace payops::cli {
namespace {

class DegradeCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::DegradeCommand)

public:
    DegradeCommand()
        : Command(QStringLiteral("degrade"),
                  tr("Switch the callback endpoint into record-only mode (on) or back (off)."),
                  QStringLiteral("on|off --db DSN --reason TEXT [--wait SECONDS]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addPositionalArgument(
            QStringLiteral("on|off"),
            tr("on: RECORD_ONLY, callbacks are only recorded; off: NORMAL."));
        parser.addOption(dbOption());
        parser.addOption({QStringLiteral("reason"), tr("Why (required; goes into the audit log)."),
                          QStringLiteral("text")});
        parser.addOption({QStringLiteral("wait"),
                          tr("Seconds to wait for every live instance to apply the new version "
                             "(default 10; 0 does not wait)."),
                          QStringLiteral("seconds"), QStringLiteral("10")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        const QStringList positional = parser.positionalArguments();
        if (positional.size() != 1 || (positional.first() != QLatin1String("on") &&
                                       positional.first() != QLatin1String("off")))
            return fail(UsageOrConnection, tr("say on or off (payops degrade --help)"));
        const QString reason = parser.value(QStringLiteral("reason")).trimmed();
        if (reason.isEmpty())
            return fail(UsageOrConnection,
                        tr("--reason is required: say why, it goes into the audit log"));
        bool ok = false;
        const int waitSeconds = parser.value(QStringLiteral("wait")).toInt(&ok);
        if (!ok || waitSeconds < 0 || waitSeconds > 3600)
            return fail(UsageOrConnection, tr("--wait must be 0-3600 seconds"));
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        const CallbackMode mode = positional.first() == QLatin1String("on")
                                      ? CallbackMode::RecordOnly
                                      : CallbackMode::Normal;

        try {
            db::Connection connection(*dsn, QStringLiteral("degrade"));
            const FlipResult flip = flipSwitch(connection.database(), mode, reason);
            if (flip.changed)
                say(tr("switch is now %1 (version %2, was %3)")
                        .arg(callbackModeName(flip.after.mode), QString::number(flip.after.version),
                             callbackModeName(flip.before.mode)));
            else
                say(tr("switch already was %1 (version %2); nothing changed")
                        .arg(callbackModeName(flip.after.mode),
                             QString::number(flip.after.version)));
            if (waitSeconds == 0)
                return Success;
            const auto instances = waitForAcknowledgement(
                connection.database(), flip.after.version, waitSeconds * 1000,
                [this](const InstanceAck &ack) {
                    say(tr("  %1 applies version %2")
                            .arg(ack.instance, QString::number(ack.versionApplied)));
                });
            QStringList late;
            for (const InstanceAck &ack : instances) {
                if (!ack.acknowledged)
                    late << tr("%1 (still at version %2)")
                                .arg(ack.instance, QString::number(ack.versionApplied));
            }
            if (instances.isEmpty())
                say(tr("no live instance is running"));
            if (!late.isEmpty())
                return fail(Refused, tr("not acknowledged within %1 s: %2")
                                         .arg(QString::number(waitSeconds),
                                              late.join(QStringLiteral(", "))));
            if (!instances.isEmpty())
                say(tr("all %1 live instance(s) apply version %2")
                        .arg(QString::number(instances.size()),
                             QString::number(flip.after.version)));
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeDegradeCommand()
{
    return std::make_unique<DegradeCommand>();
}

} // namespace payops::cli
