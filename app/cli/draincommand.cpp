#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/unmatchedcallbacks.h"

#include <QCoreApplication>
#include <QSysInfo>

namespace payops::cli {
namespace {

class DrainCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::DrainCommand)

public:
    DrainCommand()
        : Command(QStringLiteral("drain"),
                  tr("Process the callbacks recorded in record-only mode, or with --unmatched "
                     "those that "
                     "arrived before their order, each exactly once."),
                  QStringLiteral("--db DSN [--unmatched] [--limit N] [--force]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption({QStringLiteral("limit"),
                          tr("Process at most N callbacks (default: all)."), QStringLiteral("n"),
                          QStringLiteral("0")});
        parser.addOption(
            {QStringLiteral("force"), tr("Drain even while the switch is RECORD_ONLY.")});
        parser.addOption(
            {QStringLiteral("unmatched"),
             tr("Apply the UNMATCHED callbacks whose order exists now; the others stay "
                "UNMATCHED and are counted.")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        bool ok = false;
        DrainOptions options;
        options.limit = parser.value(QStringLiteral("limit")).toInt(&ok);
        if (!ok || options.limit < 0)
            return fail(UsageOrConnection, tr("--limit must be a number of at least 0"));
        options.force = parser.isSet(QStringLiteral("force"));
        if (parser.isSet(QStringLiteral("unmatched")))
            options.source = DrainSource::Unmatched;
        options.worker = QStringLiteral("drain:%1:%2")
                             .arg(QSysInfo::machineHostName(),
                                  QString::number(QCoreApplication::applicationPid()));
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("drain"));
            if (!options.force &&
                readSwitch(connection.database()).mode == CallbackMode::RecordOnly)
                return fail(
                    Refused,
                    tr("the switch is RECORD_ONLY: draining now would process callbacks while "
                       "the endpoint is degraded. Turn it off first (payops degrade off), "
                       "or pass --force"));
            const DrainResult result = drainBacklog(connection.database(), options);
            if (options.source == DrainSource::Unmatched) {
                // Counted again after the drain: another drainer may have applied some meanwhile.
                const UnmatchedCount left = countUnmatched(connection.database());
                say(tr("processed %1, rejected %2; %3 unmatched callback(s) left, %4 of them still "
                       "without their order")
                        .arg(result.processed)
                        .arg(result.rejected)
                        .arg(left.callbacks)
                        .arg(left.withoutOrder()));
            } else {
                const qint64 left =
                    db::scalar(
                        connection.database(),
                        QStringLiteral(
                            "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'"))
                        .toLongLong();
                say(tr("processed %1, rejected %2, ignored %3, unmatched %4; %5 left in the "
                       "backlog")
                        .arg(result.processed)
                        .arg(result.rejected)
                        .arg(result.ignored)
                        .arg(result.unmatched)
                        .arg(left));
            }
            if (result.stoppedBySwitch)
                return fail(Refused, tr("stopped: the switch turned RECORD_ONLY while draining"));
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeDrainCommand()
{
    return std::make_unique<DrainCommand>();
}

} // namespace payops::cli
