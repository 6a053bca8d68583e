#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/callbackswitch.h"
#include "domain/inspection/inspection.h"
#include "domain/inspection/inspectionrun.h"
#include "domain/inspection/readsource.h"
#include "domain/mapping/mappedwatch.h"
#include "domain/money/duplicates/duplicatewatch.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QTextStream>

#include <csignal>
#include <optional>
#include <type_traits>

namespace payops::cli {
namespace {

// Ctrl-C during a first pass: the pass stops after its current statement, keeps what it
// counted, and the next inspect goes on from there.
std::atomic<bool> g_interrupted{false};

void interrupt(int)
{
    g_interrupted.store(true);
}

// For cron: exits 1 when live duplicates exist or an unmatched callback's order has arrived (a
// payment waiting to be applied), so that a scheduler can alert on it; 2 when it could not
// tell. Unmatched callbacks whose order is still missing are reported but do not alert: a late
// order is normal for seconds, and the drain cannot act on them. Duplicates come from the
// duplicate watch, so a run reads what was added since the last one, not the history. Every
// run that reaches a result is stored in inspection_run (source cli); one that cannot be
// stored still prints and exits by its findings, with a warning: the alert matters more.
class InspectCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::InspectCommand)

public:
    InspectCommand()
        : Command(
              QStringLiteral("inspect"),
              tr("Count live duplicate side effects, orders paid twice by the customer "
                 "(refunds owed), "
                 "unmatched callbacks, the backlog and the switch, and store the run; exit 1 "
                 "on duplicates, "
                 "refunds owed or unmatched callbacks whose order exists now, 2 on an error. "
                 "The first run "
                 "on a database reads its history once (progress on stderr; Ctrl-C stops it, "
                 "the next run "
                 "goes on)."),
              QStringLiteral("--db DSN [--read-db DSN [--stale-after SECONDS]] [--mapping FILE] "
                             "[--json] [--points-per-yuan N]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(readDbOption());
        parser.addOption(m_staleAfter);
        parser.addOption(mappingOption());
        parser.addOption(m_json);
        parser.addOption(m_pointsPerYuan);
    }

    int execute(const QCommandLineParser &parser) override
    {
        std::optional<Dsn> readDsn;
        if (!readDsnFrom(parser, &readDsn))
            return UsageOrConnection;
        // Without --read-db the primary is required; with it, only to measure the lag.
        const bool primaryGiven =
            parser.isSet(dbOption()) || !qEnvironmentVariableIsEmpty("PAYOPS_DB");
        std::optional<Dsn> dsn;
        if (!readDsn || primaryGiven) {
            dsn = dsnFrom(parser);
            if (!dsn)
                return UsageOrConnection;
        }
        bool ok = false;
        const qint64 pointsPerYuan = parser.value(m_pointsPerYuan).toLongLong(&ok);
        if (!ok || pointsPerYuan <= 0)
            return fail(UsageOrConnection, tr("--points-per-yuan takes a positive whole number"));
        std::optional<mapping::Mapping> mapping;
        if (!mappingFrom(parser, &mapping))
            return UsageOrConnection;
        const int staleAfter = parser.value(m_staleAfter).toInt(&ok);
        if (!ok || staleAfter < 0)
            return fail(UsageOrConnection, tr("--stale-after takes a number of seconds"));
        if (readDsn)
            return inspectReplica(parser, *readDsn, dsn, mapping, pointsPerYuan, staleAfter);
        try {
            db::Connection connection(*dsn, QStringLiteral("inspect"));
            const QSqlDatabase db = connection.database();
            const QDateTime startedAt = serverTime(db);
            InspectionReport report;
            report.pointsPerYuan = pointsPerYuan;
            if (mapping) {
                const mapping::MappedWatchRefresh watch =
                    refreshWatch([&](const WatchRefreshOptions &options) {
                        return mapping::refreshMappedWatch(db, *mapping, options);
                    });
                if (const std::optional<int> failed = unusable(watch))
                    return *failed;
                report.findings = readInspection(db, *mapping, watch.figures);
            } else {
                const WatchRefresh watch = refreshWatch([&](const WatchRefreshOptions &options) {
                    return refreshDuplicateWatch(db, options);
                });
                if (const std::optional<int> failed = unusable(watch))
                    return *failed;
                report.figures = watch.figures;
                report.findings = readInspection(db, watch.figures);
            }
            const StoredRun stored =
                storeInspectionRun(db, InspectionRun::of(report, startedAt, QStringLiteral("cli")));
            if (!stored.stored())
                QTextStream(stderr) << tr("payops inspect: warning: this run was not stored: %1")
                                           .arg(stored.notStored)
                                    << Qt::endl;
            return print(parser, report, std::nullopt);
        } catch (const db::Error &error) {
            // 1 means findings here, so every failure is a 2.
            return fail(UsageOrConnection, db::userMessage(error));
        }
    }

private:
    // Prints the run's findings (and, read from a replica, where from and how stale) and
    // returns the exit code they call for.
    int print(const QCommandLineParser &parser, const InspectionReport &report,
              const std::optional<ReadSource> &source) const
    {
        const InspectionFindings &findings = report.findings;
        if (parser.isSet(m_json)) {
            QJsonObject json = report.toJson();
            if (source)
                json[QStringLiteral("read_source")] = source->toJson();
            QTextStream(stdout) << QJsonDocument(json).toJson(QJsonDocument::Compact) << Qt::endl;
        } else {
            if (source)
                say(source->describe());
            const SwitchState &state = findings.switchState;
            say(tr("switch: %1 (version %2)")
                    .arg(callbackModeName(state.mode), QString::number(state.version)));
            say(tr("backlog: %1 recorded callback(s)").arg(findings.backlog));
            if (findings.gatewayBacklog > 0)
                say(tr("gateway backlog: %1 callback(s) without the upstream's final "
                       "answer; forward them with payops drain --upstream URL")
                        .arg(findings.gatewayBacklog));
            say((findings.unmatched.withOrder > 0
                     ? tr("unmatched: %1; apply them with payops drain --unmatched")
                     : tr("unmatched: %1"))
                    .arg(findings.unmatched.describe()));
            say(tr("duplicates: %1")
                    .arg(findings.mapped ? describe(*findings.mapped, findings.mappedSampleOrders,
                                                    report.pointsPerYuan)
                                         : findings.duplicates.describe()));
            say((findings.doublePayments.isEmpty()
                     ? tr("paid twice: %1")
                     : tr("paid twice: %1; refund the second payment to each customer"))
                    .arg(findings.doublePayments.describe()));
        }
        return findings.clean() ? Success : Refused;
    }

    // Read from a replica, nothing is refreshed or stored (the replica is read-only): the
    // duplicate watch is read as the primary last refreshed it and replication brought it.
    int inspectReplica(const QCommandLineParser &parser, const Dsn &readDsn,
                       const std::optional<Dsn> &primaryDsn,
                       const std::optional<mapping::Mapping> &mapping, qint64 pointsPerYuan,
                       int staleAfter) const
    {
        try {
            db::Connection replica(readDsn, QStringLiteral("inspect-read"));
            const QSqlDatabase db = replica.database();
            std::optional<db::Connection> primary;
            if (primaryDsn)
                primary.emplace(*primaryDsn, QStringLiteral("inspect"));
            const QSqlDatabase primaryDb = primary ? primary->database() : QSqlDatabase();
            const ReadSource source =
                measureReadSource(db, primary ? &primaryDb : nullptr, staleAfter);
            InspectionReport report;
            report.pointsPerYuan = pointsPerYuan;
            bool complete = false;
            if (mapping) {
                const mapping::MappedWatchFigures figures = mapping::readMappedWatch(db, *mapping);
                complete = figures.complete();
                report.findings = readInspection(db, *mapping, figures);
            } else {
                report.figures = readDuplicateWatch(db);
                complete = report.figures.complete();
                report.findings = readInspection(db, report.figures);
            }
            if (!complete)
                return fail(UsageOrConnection,
                            tr("the replica has no complete count of duplicates yet: run payops "
                               "inspect on the primary once"));
            if (source.stale())
                QTextStream(stderr)
                    << tr("payops inspect: warning: %1").arg(source.describe()) << Qt::endl;
            return print(parser, report, source);
        } catch (const db::Error &error) {
            return fail(UsageOrConnection, db::userMessage(error));
        }
    }

    // A refresh that leaves no figures to report on: why, printed, and the exit code.
    template <typename Refresh> std::optional<int> unusable(const Refresh &watch) const
    {
        if (watch.missing)
            return fail(UsageOrConnection, watch.why);
        if (watch.cancelled)
            return fail(UsageOrConnection,
                        tr("interrupted at %1 % of the first count of duplicates; run "
                           "payops inspect again to go on from there")
                            .arg(watch.figures.percentScanned()));
        if (!watch.figures.complete())
            return fail(UsageOrConnection,
                        tr("the first count of duplicates is not done (%1 %): %2")
                            .arg(QString::number(watch.figures.percentScanned()), watch.why));
        if (!watch.why.isEmpty())
            QTextStream(stderr) << tr("payops inspect: %1").arg(watch.why) << Qt::endl;
        return std::nullopt;
    }

    // "coupon: 8 group(s), 8 extra copies worth 4000 fen; ...; e.g. order(s) 100001, ..."
    static QString describe(const mapping::MappedWatchFigures &figures,
                            const QList<qint64> &sampleOrders, qint64 pointsPerYuan)
    {
        QStringList parts;
        for (const mapping::MappedSideEffectFigures &f : figures.sideEffects)
            if (f.openGroups > 0)
                parts << tr("%1: %2 group(s), %3 extra copies worth %4 fen")
                             .arg(f.name, QString::number(f.openGroups),
                                  QString::number(f.extraCopies),
                                  QString::number(f.valueFen(pointsPerYuan)));
        if (parts.isEmpty())
            return tr("no live duplicates in the mapped tables");
        QStringList orders;
        for (qint64 id : sampleOrders)
            orders << QString::number(id);
        return tr("%1; e.g. order(s) %2")
            .arg(parts.join(QStringLiteral("; ")), orders.join(QStringLiteral(", ")));
    }

    // Runs a refresh of the watch with progress on stderr and Ctrl-C as its cancel.
    template <typename Run>
    auto refreshWatch(Run run) const -> std::invoke_result_t<Run, const WatchRefreshOptions &>
    {
        g_interrupted.store(false);
        const auto previous = std::signal(SIGINT, interrupt);
        QElapsedTimer lastReport;
        WatchRefreshOptions options;
        options.lockWaitSeconds = 30;
        options.cancel = &g_interrupted;
        options.progress =
            [&lastReport](const DuplicateWatchFigures &figures) {
                if (lastReport.isValid() && lastReport.elapsed() < 1000 && !figures.complete())
                    return;
                lastReport.start();
                QTextStream(stderr)
                    << tr("payops inspect: first count of duplicates: %1 % of the orders read")
                           .arg(figures.percentScanned())
                    << Qt::endl;
            };
        auto watch = run(options);
        std::signal(SIGINT, previous);
        return watch;
    }

    const QCommandLineOption m_staleAfter{
        QStringLiteral("stale-after"),
        tr("With --read-db: call the replica stale past this many seconds behind (default 30)."),
        QStringLiteral("SECONDS"), QStringLiteral("30")};
    const QCommandLineOption m_json{QStringLiteral("json"),
                                    tr("Print the figures as one JSON object.")};
    const QCommandLineOption m_pointsPerYuan{
        QStringLiteral("points-per-yuan"),
        tr("Cash value of points in money at risk (default 100 = 1 yuan)."), QStringLiteral("N"),
        QStringLiteral("100")};
};

} // namespace

std::unique_ptr<Command> makeInspectCommand()
{
    return std::make_unique<InspectCommand>();
}

} // namespace payops::cli
