#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/mapping/mappedrequest.h"
#include "domain/money/compensationrequest.h"
#include "domain/money/compensationworkflow.h"
#include "domain/money/money.h"

namespace payops::cli {
namespace {

class CompensateCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::CompensateCommand)

public:
    CompensateCommand()
        : Command(
              QStringLiteral("compensate"),
              tr("Compensate duplicate side effects: freeze, write off or reverse, with an audit "
                 "trail."),
              QStringLiteral("--db DSN (--dry-run | --reason TEXT --ticket ID | --approve REQUEST "
                             "--reason TEXT "
                             "--ticket ID) [--order ID ...] [--used-coupons write-off|receivable] "
                             "[--fen-per-100-points N] [--mapping FILE] | --read-db DSN --dry-run "
                             "[...]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(readDbOption());
        parser.addOption(
            {QStringLiteral("dry-run"), tr("Show what would be done and change nothing.")});
        parser.addOption(
            {QStringLiteral("reason"), tr("Why (required to act)."), QStringLiteral("text")});
        parser.addOption({QStringLiteral("ticket"), tr("Incident or ticket id (required to act)."),
                          QStringLiteral("id")});
        parser.addOption({QStringLiteral("order"),
                          tr("Only this order (repeatable; default: every order)."),
                          QStringLiteral("id")});
        parser.addOption(
            {QStringLiteral("used-coupons"),
             tr("What a used duplicate coupon becomes: write-off (default) or receivable."),
             QStringLiteral("policy"), QStringLiteral("write-off")});
        parser.addOption({QStringLiteral("fen-per-100-points"),
                          tr("Cash value of 100 points (default 100)."), QStringLiteral("fen"),
                          QStringLiteral("100")});
        parser.addOption(mappingOption());
        parser.addOption({QStringLiteral("approve"),
                          tr("Approve and run another operator's pending request (four eyes)."),
                          QStringLiteral("request")});
    }

    int execute(const QCommandLineParser &parser) override
    {
        CompensationSettings settings;
        const QString policy = parser.value(QStringLiteral("used-coupons"));
        if (policy != QLatin1String("write-off") && policy != QLatin1String("receivable"))
            return fail(UsageOrConnection, tr("--used-coupons must be write-off or receivable"));
        settings.usedCoupons = policy == QLatin1String("write-off") ? UsedCouponPolicy::WriteOff
                                                                    : UsedCouponPolicy::Receivable;
        bool ok = false;
        settings.fenPerHundredPoints =
            parser.value(QStringLiteral("fen-per-100-points")).toLongLong(&ok);
        if (!ok || settings.fenPerHundredPoints < 0)
            return fail(UsageOrConnection,
                        tr("--fen-per-100-points must be a number of at least 0"));
        QList<qint64> orders;
        for (const QString &text : parser.values(QStringLiteral("order"))) {
            const qint64 id = text.toLongLong(&ok);
            if (!ok || id <= 0)
                return fail(UsageOrConnection,
                            tr("--order must be a positive order id, not '%1'").arg(text));
            orders << id;
        }
        const bool dryRun = parser.isSet(QStringLiteral("dry-run"));
        const QString reason = parser.value(QStringLiteral("reason")).trimmed();
        const QString ticket = parser.value(QStringLiteral("ticket")).trimmed();
        if (!dryRun && (reason.isEmpty() || ticket.isEmpty()))
            return fail(UsageOrConnection,
                        tr("say --dry-run, or give --reason and --ticket to act"));
        qint64 approve = 0;
        if (parser.isSet(QStringLiteral("approve"))) {
            approve = parser.value(QStringLiteral("approve")).toLongLong(&ok);
            if (!ok || approve <= 0 || dryRun || !orders.isEmpty())
                return fail(UsageOrConnection,
                            tr("--approve takes a request id, with --reason and --ticket "
                               "and without --dry-run or --order"));
        }
        std::optional<mapping::Mapping> mapped;
        if (!mappingFrom(parser, &mapped))
            return UsageOrConnection;
        if (mapped && parser.isSet(QStringLiteral("used-coupons")))
            return fail(UsageOrConnection,
                        tr("--used-coupons is for payops's own tables; with --mapping a used "
                           "copy is left to finance"));
        // Only a plan may be read on a replica: a run plans on the primary, where it acts.
        if (!dryRun && parser.isSet(readDbOption()))
            return fail(UsageOrConnection,
                        tr("--read-db goes with --dry-run: a compensation plans on --db, where it "
                           "runs"));
        const auto dsn = dryRun ? readingDsnFrom(parser) : dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        if (dryRun && dsn->readOnlySession)
            say(tr("Planning on the read database %1, which may lag its primary: a real run "
                   "plans again on the primary (--db) and carries out that plan.")
                    .arg(dsn->toDisplayString()));
        if (mapped)
            return compensateMapped(*dsn, *mapped, orders, approve, dryRun, reason, ticket,
                                    settings.fenPerHundredPoints);
        try {
            db::Connection connection(*dsn, QStringLiteral("compensate"));
            const QSqlDatabase db = connection.database();
            CompensationJob job;
            job.scope =
                orders.isEmpty() ? CompensationScope::all() : CompensationScope{orders, {}, false};
            job.approveRequestId = approve;
            job.settings = settings;
            job.reason = reason;
            job.ticket = ticket;
            if (approve == 0) {
                job.confirmed = previewCompensation(db, job.scope, settings);
                say(job.confirmed->plan.summary());
                if (dryRun || job.confirmed->plan.isEmpty())
                    return Success;
            }
            job.starting = [this](const CompensationPlan &plan,
                                  const CompensationRequest *approved) {
                if (approved) {
                    say(tr("approved request %1 by %2")
                            .arg(QString::number(approved->id), approved->requestedBy));
                    say(plan.summary());
                }
            };
            job.progress = progress();
            const CompensationResult result = runCompensation(db, job);
            if (!result.refusal.isEmpty())
                return fail(Refused, result.refusal);
            if (result.filedRequestId > 0)
                return filed(result.plan.moneyFen, result.soloFen, result.thresholdFen,
                             result.filedRequestId, QString());
            const CompensationOutcome &outcome = result.run;
            say(tr("compensated %1, skipped %2 (done by someone else or changed since planned); "
                   "batch %3")
                    .arg(QString::number(outcome.done), QString::number(outcome.skipped),
                         outcome.batchId));
            for (qint64 user : outcome.negativeBalanceUsers)
                say(tr("  user %1's points balance is now negative").arg(user));
            if (!outcome.notKept.isEmpty())
                return failNotKept(outcome.notKept, &PlannedAction::targetTable);
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }

private:
    // A compensation above the four-eyes threshold was filed as request `id`: how another
    // operator approves it (`mappingArgument`: the --mapping it needs, or empty).
    int filed(qint64 moneyFen, qint64 soloFen, qint64 thresholdFen, qint64 id,
              const QString &mappingArgument) const
    {
        return fail(Refused,
                    tr("%1 fen, with the %2 fen this account compensated alone in the four-eyes "
                       "window, is above the threshold of %3 fen: request %4 waits for another "
                       "operator (payops compensate %5--approve %4 --reason ... --ticket ...)")
                        .arg(QString::number(moneyFen), QString::number(soloFen),
                             QString::number(thresholdFen), QString::number(id), mappingArgument));
    }

    // Copies whose batch another cluster node rolled back with no error: named one a line, and
    // the run fails, so that a runbook runs it again. `table`: what a copy is a row of.
    template <typename Copy> int failNotKept(const QList<Copy> &copies, QString Copy::*table) const
    {
        for (const Copy &copy : copies)
            say(tr("  not kept: %1 %2 of order %3")
                    .arg(copy.*table, QString::number(copy.targetId),
                         QString::number(copy.orderId)));
        return fail(Refused, tr("%n duplicate(s) not kept: another cluster node's transaction "
                                "rolled their batch back; run the compensation again",
                                nullptr, int(copies.size())));
    }

    // "  done / total" after each batch.
    std::function<void(int, int)> progress() const
    {
        return [this](int done, int total) {
            say(QStringLiteral("  %1 / %2").arg(QString::number(done), QString::number(total)));
        };
    }

    // What the plan or the run does to each side effect of the mapping, one line each.
    void sayPerSideEffect(const mapping::Mapping &mapping,
                          const mapping::MappedCompensationPlan &plan, const QString &freezeText,
                          const QString &reverseText) const
    {
        using mapping::MappedAction;
        for (const mapping::SideEffectMapping &se : mapping.sideEffects) {
            const MappedAction takeBack = se.compensate == mapping::Compensate::Freeze
                                              ? MappedAction::Freeze
                                              : MappedAction::Reverse;
            say(tr("%1: %2 %3 (%4), %5 used and left to finance (%6)")
                    .arg(se.name, QString::number(plan.count(se.name, takeBack)),
                         takeBack == MappedAction::Freeze ? freezeText : reverseText,
                         valueText(plan, se.name, takeBack),
                         QString::number(plan.count(se.name, MappedAction::Finance)),
                         valueText(plan, se.name, MappedAction::Finance)));
        }
    }

    static QString valueText(const mapping::MappedCompensationPlan &plan, const QString &name,
                             mapping::MappedAction action)
    {
        return tr("%1 yuan, %2 points")
            .arg(fenToYuan(plan.valueFen(name, action)),
                 QString::number(plan.points(name, action)));
    }

    // Compensation on a team's own tables through the mapping (docs/mapping.md): above the
    // four-eyes threshold it files a request, which --approve carries out through the same file.
    int compensateMapped(const Dsn &dsn, const mapping::Mapping &mapping,
                         const QList<qint64> &orders, qint64 approve, bool dryRun,
                         const QString &reason, const QString &ticket,
                         qint64 fenPerHundredPoints) const
    {
        try {
            db::Connection connection(dsn, QStringLiteral("compensate"));
            const QSqlDatabase db = connection.database();
            mapping::MappedJob job;
            job.scope = orders.isEmpty() ? mapping::MappedScope::all()
                                         : mapping::MappedScope{orders, false};
            job.approveRequestId = approve;
            job.fenPerHundredPoints = fenPerHundredPoints;
            job.reason = reason;
            job.ticket = ticket;
            if (approve == 0) {
                job.confirmed = mapping::planMappedCompensation(db, mapping, job.scope);
                sayPerSideEffect(mapping, *job.confirmed, tr("to freeze"), tr("to reverse"));
                if (dryRun || job.confirmed->isEmpty())
                    return Success;
            }
            job.starting = [this, &mapping](const mapping::MappedCompensationPlan &plan,
                                            const CompensationRequest *approved) {
                if (approved) {
                    say(tr("approved request %1 by %2")
                            .arg(QString::number(approved->id), approved->requestedBy));
                    sayPerSideEffect(mapping, plan, tr("to freeze"), tr("to reverse"));
                }
            };
            job.progress = progress();
            const mapping::MappedResult result = mapping::runMappedCompensation(db, mapping, job);
            if (!result.refusal.isEmpty())
                return fail(Refused, result.refusal);
            if (result.filedRequestId > 0)
                return filed(result.fourEyes.moneyFen, result.fourEyes.soloFen,
                             result.fourEyes.thresholdFen, result.filedRequestId,
                             QStringLiteral("--mapping ") + mapping.path + QLatin1Char(' '));
            const mapping::MappedCompensationOutcome &outcome = result.outcome;
            mapping::MappedCompensationPlan done;
            done.copies = outcome.done + outcome.finance;
            sayPerSideEffect(mapping, done, tr("frozen"), tr("reversed"));
            for (const mapping::MappedCopy &copy : outcome.finance)
                say(tr("  left to finance: %1 row %2 of order %3 (%4 fen, %5 points)")
                        .arg(copy.sideEffect, QString::number(copy.targetId),
                             QString::number(copy.orderId), QString::number(copy.valueFen),
                             QString::number(copy.points)));
            say(tr("skipped %1 (done by someone else or changed since planned); batch %2")
                    .arg(QString::number(outcome.skipped), outcome.batchId));
            if (!outcome.notKept.isEmpty())
                return failNotKept(outcome.notKept, &mapping::MappedCopy::sideEffect);
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeCompensateCommand()
{
    return std::make_unique<CompensateCommand>();
}

} // namespace payops::cli
