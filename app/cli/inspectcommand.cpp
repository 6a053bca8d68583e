#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "ops/callbackswitch.h"
#include "ops/duplicatecount.h"

namespace payops::cli {
namespace {

// For cron: exits 1 when live duplicates exist, so that a scheduler can alert on it.
class InspectCommand final : public Command
{
public:
    InspectCommand()
        : Command(QStringLiteral("inspect"),
                  QStringLiteral("Count live duplicate side effects, the backlog and the switch; exit 1 on duplicates."),
                  QStringLiteral("--db DSN"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override { parser.addOption(dbOption()); }

    int execute(const QCommandLineParser &parser) override
    {
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("inspect"));
            const QSqlDatabase db = connection.database();
            const LiveDuplicateCount duplicates = countLiveDuplicates(db);
            const SwitchState state = readSwitch(db);
            say(QStringLiteral("switch: %1 (version %2)").arg(callbackModeName(state.mode)).arg(state.version));
            say(QStringLiteral("backlog: %1 recorded callback(s)")
                    .arg(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")).toLongLong()));
            say(QStringLiteral("duplicates: ") + duplicates.describe());
            return duplicates.isEmpty() ? Success : Refused;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeInspectCommand()
{
    return std::make_unique<InspectCommand>();
}

} // namespace payops::cli
