#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/signature.h"
#include "lab/localserver.h"
#include "lab/platformnotification.h"
#include "lab/storm.h"

#include <QElapsedTimer>
#include <QTextStream>

#include <csignal>
#include <stdexcept>

namespace payops::cli {
namespace {

// Ctrl-C: the storm stops between two requests and the summary says what was sent. A second
// Ctrl-C is the default one again.
std::atomic<bool> g_stop{false};

void interrupt(int)
{
    g_stop.store(true);
    std::signal(SIGINT, SIG_DFL);
}

QString describe(const StormCounts &counts)
{
    return QCoreApplication::translate(
               "payops::cli::StormCommand",
               "%1/%2 callbacks done: sent %3, 2xx %4, 4xx %5, 5xx %6, no answer %7, "
               "retries %8, never 2xx %9")
        .arg(QString::number(counts.finished), QString::number(counts.planned),
             QString::number(counts.sent), QString::number(counts.answered2xx),
             QString::number(counts.answered4xx), QString::number(counts.answered5xx),
             QString::number(counts.noAnswer), QString::number(counts.retries),
             QString::number(counts.gaveUp));
}

// What follows describe() when the storm sent forged deliveries.
QString describeForged(const StormCounts &counts)
{
    if (counts.forged == 0)
        return {};
    return QCoreApplication::translate("payops::cli::StormCommand",
                                       "; forged %1, of which accepted %2")
        .arg(QString::number(counts.forged), QString::number(counts.forgedAccepted));
}

class StormCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::StormCommand)

public:
    StormCommand()
        : Command(
              QStringLiteral("storm"),
              tr("Sandbox only: fire signed success callbacks at endpoints the way a platform does "
                 "(copies, gaps, replays, retries, forged ones), in payops's JSON or as WeChat "
                 "Pay or Alipay notifications; exit 1 when stopped, when some never got the "
                 "platform's success answer or when a forged one was accepted."),
              QStringLiteral("--db DSN --targets URL,... [--channel payops|wechatpay|alipay] "
                             "[--secret-file F] [--keys-dir DIR] [--orders N] [--copies K] "
                             "[--gap-ms X] "
                             "[--pattern concurrent|gap|replay|mixed] [--create-orders] [--rate R] "
                             "[--retry-5xx] "
                             "[--max-attempts N] [--forged N]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption({QStringLiteral("targets"),
                          tr("Endpoints, comma-separated, each http://HOST:PORT; "
                             "the copies of an order go round-robin over them."),
                          QStringLiteral("urls")});
        parser.addOption(
            {QStringLiteral("channel"),
             tr("The wire format: payops (default; its JSON to /callbacks/pay), wechatpay "
                "(WeChat Pay API v3 notifications, encrypted and signed, to /callbacks/wechatpay) "
                "or alipay (Alipay's signed form to /callbacks/alipay)."),
             QStringLiteral("name"), QStringLiteral("payops")});
        parser.addOption({QStringLiteral("secret-file"),
                          tr("Channel payops: file holding the endpoints' HMAC signing secret."),
                          QStringLiteral("file")});
        parser.addOption(
            {QStringLiteral("keys-dir"),
             tr("Channels wechatpay and alipay: the folder of the platform keys and ids that "
                "payops sandbox start made (default: %1).")
                 .arg(sandboxKeysDirectory(LocalServer::defaultDirectory())),
             QStringLiteral("dir")});
        parser.addOption({QStringLiteral("orders"), tr("Orders that get callbacks (default 100)."),
                          QStringLiteral("n"), QStringLiteral("100")});
        parser.addOption({QStringLiteral("copies"),
                          tr("Deliveries per order (default 2; 1: no duplicates)."),
                          QStringLiteral("k"), QStringLiteral("2")});
        parser.addOption({QStringLiteral("gap-ms"),
                          tr("Time between the copies of one order, pattern gap "
                             "(default 40)."),
                          QStringLiteral("ms"), QStringLiteral("40")});
        parser.addOption(
            {QStringLiteral("pattern"),
             tr("concurrent (copies at the same instant on different connections), gap (copies "
                "--gap-ms apart), replay (copies %1 s later) or mixed (default).")
                 .arg(kStormReplayDelayMs / 1000),
             QStringLiteral("name"), QStringLiteral("mixed")});
        parser.addOption(
            {QStringLiteral("create-orders"),
             tr("Create fresh PENDING orders first (default: the newest existing PENDING ones).")});
        parser.addOption({QStringLiteral("rate"),
                          tr("Orders started per second (default 0: as fast as possible)."),
                          QStringLiteral("r"), QStringLiteral("0")});
        parser.addOption(
            {QStringLiteral("retry-5xx"),
             tr("Retry any answer but the platform's success (a non-2xx; for Alipay also one "
                "that does not say success) and no answer, with back-off (100 ms doubling, at most "
                "5 s), as platforms do.")});
        parser.addOption({QStringLiteral("max-attempts"),
                          tr("Attempts per callback with --retry-5xx (default 5)."),
                          QStringLiteral("n"), QStringLiteral("5")});
        parser.addOption({QStringLiteral("forged"),
                          tr("The first N orders also get one delivery with a bad signature, sent "
                             "once with their first copy, as an attacker would (default 0)."),
                          QStringLiteral("n"), QStringLiteral("0")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        StormPlan plan;
        if (const QString wrong = planFrom(parser, plan); !wrong.isEmpty())
            return fail(UsageOrConnection, wrong);
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;

        QList<qint64> orders;
        qint64 created = 0;
        try {
            db::Connection connection(*dsn, QStringLiteral("storm"));
            const QSqlDatabase db = connection.database();
            if (!db::isSandboxDatabase(db))
                return fail(UsageOrConnection,
                            tr("%1 is not marked as a sandbox: the storm pays orders out on "
                               "purpose and runs only on a sandbox")
                                .arg(dsn->database));
            if (parser.isSet(QStringLiteral("create-orders"))) {
                orders = createStormOrders(db, plan.orders);
                created = orders.size();
            } else {
                orders = pendingStormOrders(db, plan.orders);
                if (orders.size() < plan.orders)
                    return fail(
                        Refused,
                        tr("only %1 PENDING order(s), %2 asked for: pass --create-orders "
                           "to create fresh ones")
                            .arg(QString::number(orders.size()), QString::number(plan.orders)));
            }
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
        if (created > 0)
            QTextStream(stderr) << tr("payops storm: created %1 PENDING orders").arg(created)
                                << Qt::endl;

        g_stop.store(false);
        const auto previous = std::signal(SIGINT, interrupt);
        QElapsedTimer lastReport;
        QElapsedTimer elapsed;
        elapsed.start();
        StormCounts counts;
        try {
            counts = runStorm(
                plan, orders,
                [&lastReport](const StormCounts &live) {
                    if (lastReport.isValid() && lastReport.elapsed() < 1000)
                        return;
                    lastReport.start();
                    QTextStream(stderr)
                        << tr("payops storm: %1").arg(describe(live) + describeForged(live))
                        << Qt::endl;
                },
                g_stop);
        } catch (const std::invalid_argument &error) {
            std::signal(SIGINT, previous);
            return fail(UsageOrConnection, QString::fromStdString(error.what()));
        }
        std::signal(SIGINT, previous);
        counts.ordersCreated = created;

        // One whole sentence per case, so that a translation can order its parts freely.
        QString summary;
        if (counts.stopped)
            summary = created > 0 ? tr("stopped %1 storm on %2 order(s) (created) in %3 s: %4")
                                  : tr("stopped %1 storm on %2 order(s) in %3 s: %4");
        else
            summary = created > 0 ? tr("finished %1 storm on %2 order(s) (created) in %3 s: %4")
                                  : tr("finished %1 storm on %2 order(s) in %3 s: %4");
        say(summary.arg(stormPatternName(plan.pattern), QString::number(orders.size()),
                        QString::number(double(elapsed.elapsed()) / 1000.0, 'f', 1),
                        describe(counts) + describeForged(counts)));
        if (counts.stopped)
            return fail(Refused, tr("stopped before the end"));
        if (counts.forgedAccepted > 0)
            return fail(Refused, tr("%1 forged callback(s) got the platform's success answer")
                                     .arg(counts.forgedAccepted));
        if (counts.gaveUp > 0)
            return fail(Refused, tr("%1 callback(s) never got a 2xx answer").arg(counts.gaveUp));
        return Success;
    }

private:
    // Every flag checked before anything connects; each error names its flag.
    static QString planFrom(const QCommandLineParser &parser, StormPlan &plan)
    {
        plan.targets =
            parser.value(QStringLiteral("targets")).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (plan.targets.isEmpty())
            return tr("--targets is required: one or more http://HOST:PORT, comma-separated");
        for (QString &target : plan.targets) {
            target = target.trimmed();
            QString error;
            if (!parseStormTarget(target, &error))
                return tr("--targets: %1").arg(error);
        }
        const auto channel = wireFormatFromName(parser.value(QStringLiteral("channel")).toLatin1());
        if (!channel)
            return tr("--channel must be payops, wechatpay or alipay");
        plan.channel = *channel;
        if (plan.channel == WireFormat::Payops) {
            const QString secretPath = parser.value(QStringLiteral("secret-file"));
            if (const QString error = readSecretFile(secretPath, &plan.secret); !error.isEmpty())
                return error;
            if (plan.secret.isEmpty())
                return tr("the secret file %1 is empty").arg(secretPath);
        } else {
            const QString keysDir = parser.isSet(QStringLiteral("keys-dir"))
                                        ? parser.value(QStringLiteral("keys-dir"))
                                        : sandboxKeysDirectory(LocalServer::defaultDirectory());
            plan.keys = PlatformKeys::read(keysDir);
            if (const QString missing = missingPlatformKeys(plan.channel, plan.keys);
                !missing.isEmpty())
                return tr("--keys-dir %1: %2").arg(keysDir, missing);
        }

        struct IntFlag
        {
            const char *name;
            int *field;
            int minimum;
            int maximum;
        };
        // The bounds validateStormPlan keeps, said with the flag's name.
        for (const IntFlag &flag :
             {IntFlag{"orders", &plan.orders, 1, kStormMaxOrders},
              IntFlag{"copies", &plan.copies, 1, kStormMaxCopies},
              IntFlag{"gap-ms", &plan.gapMs, 0, kStormMaxGapMs},
              IntFlag{"max-attempts", &plan.maxAttempts, 1, kStormMaxAttempts},
              IntFlag{"forged", &plan.forged, 0, kStormMaxOrders}}) {
            bool ok = false;
            const int value = parser.value(QString::fromLatin1(flag.name)).toInt(&ok);
            if (!ok || value < flag.minimum || value > flag.maximum)
                return tr("--%1 must be a whole number from %2 to %3")
                    .arg(QLatin1String(flag.name), QString::number(flag.minimum),
                         QString::number(flag.maximum));
            *flag.field = value;
        }
        bool ok = false;
        plan.ratePerSecond = parser.value(QStringLiteral("rate")).toDouble(&ok);
        if (!ok || !(plan.ratePerSecond >= 0 && plan.ratePerSecond <= kStormMaxRate))
            return tr("--rate must be 0 (as fast as possible) to %1 orders a second")
                .arg(kStormMaxRate);
        const auto pattern = parseStormPattern(parser.value(QStringLiteral("pattern")));
        if (!pattern)
            return tr("--pattern must be concurrent, gap, replay or mixed");
        plan.pattern = *pattern;
        plan.retryNon2xx = parser.isSet(QStringLiteral("retry-5xx"));
        return validateStormPlan(plan);
    }
};

} // namespace

std::unique_ptr<Command> makeStormCommand()
{
    return std::make_unique<StormCommand>();
}

} // namespace payops::cli
