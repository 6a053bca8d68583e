#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callbackswitch.h"
#include "domain/duplicatecount.h"
#include "domain/unmatchedcallbacks.h"

namespace payops::cli {
namespace {

// For cron: exits 1 when live duplicates exist or an unmatched callback's order has arrived (a
// payment waiting to be applied), so that a scheduler can alert on it. Unmatched callbacks
// whose order is still missing are reported but do not alert: a late order is normal for
// seconds, and the drain cannot act on them.
class InspectCommand final : public Command
{
public:
    InspectCommand()
        : Command(QStringLiteral("inspect"),
                  QStringLiteral("Count live duplicate side effects, unmatched callbacks, the backlog and the switch; exit 1 on "
                                 "duplicates or on unmatched callbacks whose order exists now."),
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
            const UnmatchedCount unmatched = countUnmatched(db);
            say(QStringLiteral("unmatched: ") + unmatched.describe()
                + (unmatched.withOrder > 0 ? QStringLiteral("; apply them with payops drain --unmatched") : QString()));
            say(QStringLiteral("duplicates: ") + duplicates.describe());
            return duplicates.isEmpty() && unmatched.withOrder == 0 ? Success : Refused;
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
