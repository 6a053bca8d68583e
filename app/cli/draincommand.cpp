#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/unmatchedcallbacks.h"
#include "domain/callback/upstreamdrain.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSysInfo>
#include <QTextStream>

#include <memory>

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
                     "arrived before their order, each exactly once; with --upstream forward a "
                     "gateway's recorded callbacks to the team's handler, each exactly once."),
                  QStringLiteral("--db DSN [--limit N] [--force] [--connections N] [--batch N] | "
                                 "--db DSN --unmatched [--limit N] [--force] | --db DSN "
                                 "--upstream URL [--channel wechatpay|alipay|pay] [--rate N] "
                                 "[--concurrency N] [--upstream-ca FILE] [--upstream-timeout S]"))
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
        parser.addOption({QStringLiteral("connections"),
                          tr("Apply the recorded callbacks over N connections at once (default: "
                             "%1).")
                              .arg(DrainOptions::kDefaultConnections),
                          QStringLiteral("n"), QString::number(DrainOptions::kDefaultConnections)});
        parser.addOption({QStringLiteral("batch"),
                          tr("Claim and apply N recorded callbacks per transaction (default: %1).")
                              .arg(DrainOptions::kDefaultBatch),
                          QStringLiteral("n"), QString::number(DrainOptions::kDefaultBatch)});
        parser.addOption(
            {QStringLiteral("unmatched"),
             tr("Apply the UNMATCHED callbacks whose order exists now; the others stay "
                "UNMATCHED and are counted.")});
        parser.addOption({QStringLiteral("upstream"),
                          tr("Forward a gateway's recorded and not yet answered callbacks to this "
                             "URL, the team's own handler."),
                          QStringLiteral("url")});
        parser.addOption({QStringLiteral("channel"),
                          tr("--upstream: forward only the callbacks that came in this format, "
                             "for a gateway with a handler per channel."),
                          QStringLiteral("format")});
        parser.addOption({QStringLiteral("rate"),
                          tr("--upstream: forward at most N callbacks a second (default: no "
                             "limit)."),
                          QStringLiteral("n"), QStringLiteral("0")});
        parser.addOption({QStringLiteral("concurrency"),
                          tr("--upstream: forward over N connections at once."),
                          QStringLiteral("n"), QStringLiteral("1")});
        parser.addOption({QStringLiteral("upstream-ca"),
                          tr("--upstream: verify its https certificate against this file."),
                          QStringLiteral("file")});
        parser.addOption({QStringLiteral("upstream-timeout"),
                          tr("--upstream: seconds to wait for each answer."),
                          QStringLiteral("seconds"), QStringLiteral("5")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        if (parser.isSet(QStringLiteral("upstream")))
            return drainUpstream(parser);
        bool ok = false;
        DrainOptions options;
        options.limit = parser.value(QStringLiteral("limit")).toInt(&ok);
        if (!ok || options.limit < 0)
            return fail(UsageOrConnection, tr("--limit must be a number of at least 0"));
        options.force = parser.isSet(QStringLiteral("force"));
        if (parser.isSet(QStringLiteral("unmatched")))
            options.source = DrainSource::Unmatched;
        const QString wrong = readConnectionsAndBatch(parser, &options);
        if (!wrong.isEmpty())
            return fail(UsageOrConnection, wrong);
        options.worker = workerName();
        QTextStream err(stderr);
        if (options.source == DrainSource::Recorded)
            options.progress = everySecond([&err](const DrainResult &progress) {
                err << tr("%1 done, %2 left: processed %3, rejected %4, ignored %5, unmatched %6 "
                          "(%7/s)")
                           .arg(QString::number(progress.handled()),
                                QString::number(progress.left()),
                                QString::number(progress.processed),
                                QString::number(progress.rejected),
                                QString::number(progress.ignored),
                                QString::number(progress.unmatched),
                                QString::number(progress.perSecond, 'f', 1))
                    << Qt::endl;
            });
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("drain"));
            if (!options.force && refuseWhileRecordOnly(connection.database()))
                return Refused;
            const DrainResult result = drainBacklog(*dsn, options);
            if (options.source == DrainSource::Unmatched) {
                // Counted again after the drain: another drainer may have applied some meanwhile.
                const UnmatchedCount left = countUnmatched(connection.database());
                say(tr("processed %1, rejected %2; %3 unmatched callback(s) left, %4 of them still "
                       "without their order")
                        .arg(QString::number(result.processed), QString::number(result.rejected),
                             QString::number(left.callbacks),
                             QString::number(left.withoutOrder())));
            } else {
                const qint64 left =
                    db::scalar(
                        connection.database(),
                        QStringLiteral(
                            "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'"))
                        .toLongLong();
                say(tr("processed %1, rejected %2, ignored %3, unmatched %4; %5 left in the "
                       "backlog (%6 callbacks a second over %7 connection(s))")
                        .arg(QString::number(result.processed), QString::number(result.rejected),
                             QString::number(result.ignored), QString::number(result.unmatched),
                             QString::number(left), QString::number(result.perSecond, 'f', 1),
                             QString::number(options.connections)));
            }
            if (result.stoppedBySwitch)
                return fail(Refused, tr("stopped: the switch turned RECORD_ONLY while draining"));
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }

private:
    // --connections and --batch into `options`; what is wrong with them, or empty.
    static QString readConnectionsAndBatch(const QCommandLineParser &parser, DrainOptions *options)
    {
        const bool given =
            parser.isSet(QStringLiteral("connections")) || parser.isSet(QStringLiteral("batch"));
        if (given && options->source == DrainSource::Unmatched)
            return tr("--unmatched drains one callback at a time: it takes neither --connections "
                      "nor --batch");
        bool connectionsOk = false;
        bool batchOk = false;
        options->connections = parser.value(QStringLiteral("connections")).toInt(&connectionsOk);
        options->batch = parser.value(QStringLiteral("batch")).toInt(&batchOk);
        if (!connectionsOk || options->connections < 1 ||
            options->connections > DrainOptions::kMaxConnections)
            return tr("--connections must be 1-%1").arg(DrainOptions::kMaxConnections);
        if (!batchOk || options->batch < 1 || options->batch > DrainOptions::kMaxBatch)
            return tr("--batch must be 1-%1").arg(DrainOptions::kMaxBatch);
        return QString();
    }

    // `say` for the first progress and then at most once a second: a drain of thousands a
    // second would otherwise flood the terminal. Called one call at a time (DrainOptions).
    static std::function<void(const DrainResult &)>
    everySecond(std::function<void(const DrainResult &)> say)
    {
        auto last = std::make_shared<QElapsedTimer>();
        return [last, say = std::move(say)](const DrainResult &progress) {
            if (last->isValid() && last->elapsed() < 1000)
                return;
            last->start();
            say(progress);
        };
    }

    static QString workerName()
    {
        return QStringLiteral("drain:%1:%2")
            .arg(QSysInfo::machineHostName(), QString::number(QCoreApplication::applicationPid()));
    }

    // True (having said why) when the switch is RECORD_ONLY.
    bool refuseWhileRecordOnly(const QSqlDatabase &db) const
    {
        if (readSwitch(db).mode != CallbackMode::RecordOnly)
            return false;
        fail(Refused, tr("the switch is RECORD_ONLY: draining now would process callbacks while "
                         "the endpoint is degraded. Turn it off first (payops degrade off), "
                         "or pass --force"));
        return true;
    }

    // A gateway's backlog, forwarded to the upstream (drainToUpstream); progress on stderr.
    int drainUpstream(const QCommandLineParser &parser)
    {
        UpstreamDrainOptions options;
        const QString wrong = checkUpstreamOptions(
            parser.value(QStringLiteral("upstream")), parser.value(QStringLiteral("upstream-ca")),
            parser.value(QStringLiteral("upstream-timeout")), &options.upstream);
        if (!wrong.isEmpty())
            return fail(UsageOrConnection, wrong);
        bool rateOk = false;
        bool concurrencyOk = false;
        options.rate = parser.value(QStringLiteral("rate")).toInt(&rateOk);
        options.concurrency = parser.value(QStringLiteral("concurrency")).toInt(&concurrencyOk);
        if (!rateOk || options.rate < 0)
            return fail(UsageOrConnection, tr("--rate must be a number of at least 0"));
        if (!concurrencyOk || options.concurrency < 1 || options.concurrency > 64)
            return fail(UsageOrConnection, tr("--concurrency must be 1-64"));
        if (parser.isSet(QStringLiteral("unmatched")) || parser.isSet(QStringLiteral("force")) ||
            parser.isSet(QStringLiteral("limit")))
            return fail(UsageOrConnection,
                        tr("--upstream takes neither --unmatched, --force nor --limit"));
        if (parser.isSet(QStringLiteral("connections")) || parser.isSet(QStringLiteral("batch")))
            return fail(UsageOrConnection, tr("--upstream takes neither --connections nor --batch: "
                                              "its connections are --concurrency"));
        if (parser.isSet(QStringLiteral("channel"))) {
            const QByteArray name = parser.value(QStringLiteral("channel")).toLatin1();
            options.channel = wireFormatFromName(name == "pay" ? QByteArray("payops") : name);
            if (!options.channel)
                return fail(UsageOrConnection,
                            tr("--channel takes wechatpay, alipay or pay, not '%1'")
                                .arg(parser.value(QStringLiteral("channel"))));
        }
        options.worker = workerName();
        QTextStream err(stderr);
        options.progress = [&err](const UpstreamDrainResult &progress) {
            err << tr("%1/%2: forwarded %3, failed %4, skipped %5 (%6/s)")
                       .arg(QString::number(progress.done()), QString::number(progress.candidates),
                            QString::number(progress.forwarded), QString::number(progress.failed),
                            QString::number(progress.skipped),
                            QString::number(progress.perSecond, 'f', 1))
                << Qt::endl;
        };
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            {
                db::Connection connection(*dsn, QStringLiteral("drain"));
                if (refuseWhileRecordOnly(connection.database()))
                    return Refused;
            }
            const UpstreamDrainResult result = drainToUpstream(*dsn, options);
            say(tr("forwarded %1, failed %2, skipped %3 of %4 to %5")
                    .arg(QString::number(result.forwarded), QString::number(result.failed),
                         QString::number(result.skipped), QString::number(result.candidates),
                         upstreamWithoutCredentials(options.upstream.url)));
            if (result.stoppedBySwitch)
                return fail(Refused, tr("stopped: the switch turned RECORD_ONLY while draining"));
            if (result.failed > 0)
                return fail(Refused, tr("%1 callback(s) got no final answer from the upstream; "
                                        "they stay for the next drain")
                                         .arg(result.failed));
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
