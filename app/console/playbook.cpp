#include "playbook.h"

#include "consolesettings.h"
#include "db/connection.h"
#include "db/dbworker.h"
#include "db/migrator.h"
#include "displayformat.h"
#include "domain/callback/instanceliveness.h"
#include "domain/mapping/mappedwatch.h"

#include <QCoreApplication>
#include <QSqlQuery>
#include <QStringList>

#include <algorithm>

namespace payops::console {

namespace {

// The step's reasons are read on screen: translated under one context, as lupdate finds them.
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(payops::console::Playbook)
};

StepStatus status(PlaybookStep step, StepState state, const QString &reason)
{
    return StepStatus{step, state, reason};
}

// Detect and inspect read the duplicate watch; a database without it cannot answer them.
StepStatus noWatch(PlaybookStep step)
{
    return status(
        step, StepState::NotAvailable,
        Text::tr("This database has no duplicate watch: migrate it with payops migrate."));
}

QString scopeText(const PlaybookFacts &facts)
{
    return Text::tr("%1 duplicate group(s) on %2 order(s), ¥%3 at risk")
        .arg(QString::number(facts.liveGroups()), QString::number(facts.openOrders()),
             formatYuan(facts.moneyAtRiskFen()));
}

// The steps that act on payops's own callback handling, read on a team's tables (docs/mapping.md):
// the team's own handler pays their orders, and payops's switch, backlog and sandbox are not in
// its path unless payops gateways stand in front of it (see mappedStopBleeding). Each says so
// rather than look done or left to do.
StepStatus mappedSimulate()
{
    return status(PlaybookStep::Simulate, StepState::NotAvailable,
                  Text::tr("The simulation pays orders in payops's own tables, not in the "
                           "team's."));
}

// Unless payops-callbackd stands in front of their handler as a gateway (docs/gateway.md):
// then the switch holds the callbacks back, and they are drained to the handler after.
StepStatus mappedStopBleeding()
{
    return status(PlaybookStep::StopBleeding, StepState::NotAvailable,
                  Text::tr("Your own handler pays these orders, with no payops gateway in front "
                           "of it: payops's switch does not reach it. Pause it in your service."));
}

StepStatus mappedDrain(const PlaybookFacts &facts)
{
    const qint64 waiting = facts.inspection.gatewayBacklog;
    const PlaybookStep step = PlaybookStep::Drain;
    if (facts.gatewaysAlive == 0 && waiting == 0) {
        QString reason = Text::tr("Your own handler receives these orders' callbacks: payops "
                                  "recorded none of them to drain.");
        if (facts.inspection.backlog > 0)
            reason += QLatin1Char(' ') + Text::tr("(%1 of payops's own wait on the Backlog page.)")
                                             .arg(facts.inspection.backlog);
        return status(step, StepState::NotAvailable, reason);
    }
    if (facts.inspection.switchState.mode == CallbackMode::RecordOnly)
        return status(step, StepState::ToDo,
                      Text::tr("%1 callback(s) wait for your handler: resume forwarding, then "
                               "drain them to it (Backlog page).")
                          .arg(waiting));
    if (waiting > 0)
        return status(step, StepState::ToDo,
                      Text::tr("%1 callback(s) wait for your handler's final answer: drain them "
                               "to it (Backlog page).")
                          .arg(waiting));
    return status(step, StepState::Done,
                  Text::tr("The gateways forward normally; no callback waits for your handler."));
}

// On a team's tables the fix payops can see is the database's: a unique key on (order, key...)
// per side effect refuses a second live copy whatever the handler does. payops never alters
// the team's schema (docs/mapping.md), so it checks the keys and leaves adding them to their DBA.
StepStatus mappedFix(const PlaybookFacts &facts)
{
    QStringList missing;
    int present = 0;
    for (const Defence &d : facts.posture) {
        if (!d.name.startsWith(QLatin1String("mapped_key_")))
            continue;
        if (d.state == DefenceState::Present)
            ++present;
        else
            missing << d.name.mid(int(qstrlen("mapped_key_")));
    }
    if (missing.isEmpty() && present > 0)
        return status(PlaybookStep::Fix, StepState::Done,
                      Text::tr("Each side effect's table has a unique key on (order, key): the "
                               "database refuses a second copy."));
    return status(PlaybookStep::Fix, present > 0 ? StepState::InProgress : StepState::ToDo,
                  Text::tr("No unique key on (order, key) for: %1. Your DBA adds them after "
                           "compensating; payops never alters your schema.")
                      .arg(missing.join(QStringLiteral(", "))));
}

StepStatus simulate(const PlaybookFacts &facts, const PlaybookContext &context)
{
    const PlaybookStep step = PlaybookStep::Simulate;
    if (facts.mapped)
        return mappedSimulate();
    if (!facts.sandbox)
        return status(step, StepState::NotAvailable,
                      Text::tr("Not a sandbox: the simulation creates and pays orders, so it runs "
                               "on a sandbox only."));
    if (context.stormRunning)
        return status(step, StepState::InProgress, Text::tr("The storm is firing callbacks."));
    if (facts.recentPhantom)
        return status(step, StepState::Done,
                      Text::tr("Reproduced: an unsafe-demo instance released its lock before its "
                               "commit in the last hour."));
    if (facts.unsafeAlive > 0)
        return status(step, StepState::InProgress,
                      Text::tr("%1 unsafe-demo instance(s) running; fire a storm at them.")
                          .arg(facts.unsafeAlive));
    return status(step, StepState::ToDo, Text::tr("No unsafe-demo instance is running."));
}

StepStatus detect(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::Detect;
    if (facts.watchMissing)
        return noWatch(step);
    if (facts.incidentSeen())
        return status(step, StepState::Done,
                      facts.liveGroups() > 0
                          ? scopeText(facts)
                          : Text::tr("%1 duplicate copies found, all compensated since.")
                                .arg(facts.compensatedCopies()));
    if (!facts.watchComplete())
        return status(step, StepState::InProgress,
                      Text::tr("First count of the duplicates: %1 % of the orders read.")
                          .arg(facts.percentScanned()));
    return status(step, StepState::ToDo,
                  facts.mapped
                      ? Text::tr("Watching: no side effect of the mapping issued twice so far.")
                      : Text::tr("Watching: no coupon or points row issued twice so far."));
}

StepStatus stopBleeding(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::StopBleeding;
    if (facts.mapped && facts.gatewaysAlive == 0)
        return mappedStopBleeding();
    const SwitchState &sw = facts.inspection.switchState;
    if (sw.mode == CallbackMode::RecordOnly) {
        if (facts.unacknowledged > 0)
            return status(step, StepState::InProgress,
                          Text::tr("RECORD_ONLY (version %1): %2 of %3 live instance(s) have not "
                                   "confirmed it yet.")
                              .arg(QString::number(sw.version),
                                   QString::number(facts.unacknowledged),
                                   QString::number(facts.instancesAlive)));
        return status(
            step, StepState::Done,
            facts.instancesAlive == 0
                ? Text::tr("RECORD_ONLY (version %1); no instance is running.").arg(sw.version)
                : Text::tr("RECORD_ONLY (version %1), confirmed by all %2 live instance(s).")
                      .arg(QString::number(sw.version), QString::number(facts.instancesAlive)));
    }
    // Back to NORMAL is right once the fix is in: nothing can pay twice any more. On a team's
    // tables that is their unique keys: payops cannot see how their handler locks.
    if (facts.keysPresent() && (facts.mapped || facts.handlerFixed()))
        return status(step, StepState::Done,
                      Text::tr("NORMAL again, with the fix in: nothing can pay twice any more."));
    return status(step, StepState::ToDo,
                  Text::tr("NORMAL: callbacks are processed by a handler that can pay twice."));
}

StepStatus scope(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::Scope;
    if (!facts.incidentSeen())
        return status(step, StepState::ToDo, Text::tr("Nothing to scope: no duplicates found."));
    if (!facts.watchComplete())
        return status(step, StepState::InProgress,
                      Text::tr("Counting: %1 % of the orders read; the figures grow until then.")
                          .arg(facts.percentScanned()));
    if (facts.liveGroups() == 0)
        return status(step, StepState::Done,
                      Text::tr("No live duplicates left; %1 copies were compensated.")
                          .arg(facts.compensatedCopies()));
    return status(step, StepState::Done, scopeText(facts));
}

StepStatus proveRootCause(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::ProveRootCause;
    if (facts.evidenceOrder == 0)
        return status(step, StepState::ToDo, Text::tr("No affected order to look at yet."));
    if (facts.evidenceEarlyMicros > 0)
        return status(
            step, StepState::Done,
            Text::tr("Order %1: %2 released its lock %3 ms before its commit.")
                .arg(QString::number(facts.evidenceOrder), facts.evidenceInstance,
                     QString::number(double(facts.evidenceEarlyMicros) / 1000.0, 'f', 1)));
    // On a team's tables payops-callbackd may never have seen the order: its rows and the
    // team's payments are then the evidence, and the handler's own logs the proof.
    if (facts.mapped && facts.evidenceInstance.isEmpty())
        return status(step, StepState::ToDo,
                      Text::tr("Order %1: no payops trace (your handler paid it). Set its "
                               "copies' times beside your handler's logs.")
                          .arg(facts.evidenceOrder));
    return status(
        step, StepState::ToDo,
        Text::tr("Order %1's traces show no lock released before its commit; open its evidence.")
            .arg(facts.evidenceOrder));
}

StepStatus compensate(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::Compensate;
    const qint64 live = facts.liveGroups();
    const qint64 superseded = facts.compensatedCopies();
    if (live == 0)
        return superseded > 0
                   ? status(step, StepState::Done,
                            Text::tr("Every duplicate compensated (%1 copies).").arg(superseded))
                   : status(step, StepState::ToDo, Text::tr("Nothing to compensate."));
    if (facts.pendingRequests > 0)
        return status(step, StepState::InProgress,
                      Text::tr("%1 four-eyes request(s) wait for another operator.")
                          .arg(facts.pendingRequests));
    if (superseded > 0)
        return status(step, StepState::InProgress,
                      Text::tr("%1 copies compensated; %2 left.")
                          .arg(QString::number(superseded), scopeText(facts)));
    return status(step, StepState::ToDo, scopeText(facts));
}

StepStatus fix(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::Fix;
    if (facts.mapped)
        return mappedFix(facts);
    const bool keys = facts.keysPresent();
    const bool handler = facts.handlerFixed();
    QString handlerText;
    if (facts.sandbox)
        handlerText = handler
                          ? Text::tr("no unsafe-demo instance runs")
                          : Text::tr("%1 unsafe-demo instance(s) still run").arg(facts.unsafeAlive);
    else if (handler)
        handlerText = Text::tr("the last hour's traces hold the lock across the commit");
    else if (facts.defence(QStringLiteral("lock_across_commit")) == DefenceState::Unknown)
        handlerText = Text::tr("no callback in the last hour shows how the handler locks");
    else
        handlerText = Text::tr(
            "the last hour's traces release the lock before the commit: deploy the safe handler");
    const QString keysText =
        keys ? Text::tr("Side-effect keys in place") : Text::tr("Side-effect keys missing");
    const QString reason = keysText + QStringLiteral("; ") + handlerText + QLatin1Char('.');
    if (keys && handler)
        return status(step, StepState::Done, reason);
    return status(step, keys || handler ? StepState::InProgress : StepState::ToDo, reason);
}

StepStatus drain(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::Drain;
    if (facts.mapped)
        return mappedDrain(facts);
    const qint64 backlog = facts.inspection.backlog;
    const qint64 matched = facts.inspection.unmatched.withOrder;
    if (!(facts.keysPresent() && facts.handlerFixed()))
        return status(step, StepState::ToDo,
                      Text::tr("%1 recorded callback(s) wait. Drain after the fix: processing them "
                               "before it would pay "
                               "twice again.")
                          .arg(backlog));
    if (facts.inspection.switchState.mode == CallbackMode::RecordOnly)
        return status(step, StepState::ToDo,
                      Text::tr("%1 recorded callback(s) wait: resume processing, then drain them.")
                          .arg(backlog));
    if (backlog > 0 || matched > 0)
        return status(
            step, StepState::ToDo,
            Text::tr("%1 recorded callback(s) and %2 matched late one(s) wait for a drain.")
                .arg(QString::number(backlog), QString::number(matched)));
    return status(step, StepState::Done,
                  Text::tr("Processing normally; no recorded callback waits."));
}

StepStatus inspectGreen(const PlaybookFacts &facts)
{
    const PlaybookStep step = PlaybookStep::InspectGreen;
    if (facts.watchMissing)
        return noWatch(step);
    if (!facts.watchComplete())
        return status(
            step, StepState::InProgress,
            Text::tr("The first count of duplicates is at %1 %.").arg(facts.percentScanned()));
    const InspectionFindings &found = facts.inspection;
    if (found.clean())
        return status(step, StepState::Done, Text::tr("payops inspect: clean."));
    QStringList findings;
    if (found.hasDuplicates())
        findings << scopeText(facts);
    if (found.unmatched.withOrder > 0)
        findings << Text::tr("%1 late payment(s) to apply").arg(found.unmatched.withOrder);
    if (!found.doublePayments.isEmpty())
        findings << Text::tr("%1 order(s) paid twice by the customer, a refund owed")
                        .arg(found.doublePayments.orders);
    return status(step, StepState::ToDo,
                  Text::tr("payops inspect finds: %1.").arg(findings.join(QStringLiteral("; "))));
}

// Whether a report was written is the console's to know: a report is a file, and a finance
// account that writes one may not write to the database.
StepStatus exportReport(const PlaybookFacts &facts, const PlaybookContext &context)
{
    const PlaybookStep step = PlaybookStep::ExportReport;
    if (context.reportWritten)
        return status(step, StepState::Done,
                      Text::tr("An incident report was written from this console."));
    if (!facts.incidentSeen())
        return status(step, StepState::ToDo,
                      Text::tr("No duplicates seen yet: nothing to report."));
    if (facts.watchComplete() && facts.inspection.clean())
        return status(step, StepState::ToDo,
                      Text::tr("Clean: write the report for finance (File, Incident report)."));
    return status(step, StepState::ToDo, Text::tr("Write it once the inspection is green."));
}

// The affected order whose evidence step 5 shows: the lowest with an open duplicate, else the
// last one compensated (compensation's primary key, newest first).
qint64 evidenceOrderOf(const QSqlDatabase &db, const mapping::Mapping *mapping)
{
    const QList<qint64> open =
        mapping ? mapping::openMappedOrders(db, *mapping, 1) : openDuplicateOrders(db, 1);
    if (!open.isEmpty())
        return open.first();
    return db::scalar(db, mapping ? QStringLiteral("SELECT order_id FROM mapped_compensation "
                                                   "ORDER BY id DESC LIMIT 1")
                                  : QStringLiteral("SELECT order_id FROM compensation "
                                                   "ORDER BY id DESC LIMIT 1"))
        .toLongLong();
}

} // namespace

QString stepStateName(StepState state)
{
    switch (state) {
    case StepState::ToDo:
        return Text::tr("to do");
    case StepState::InProgress:
        return Text::tr("in progress");
    case StepState::Done:
        return Text::tr("done");
    case StepState::NotAvailable:
        return Text::tr("not available");
    }
    return {};
}

qint64 PlaybookFacts::liveGroups() const
{
    if (mapped)
        return mappedWatch.groups();
    return watch.groups(CouponBit) + watch.groups(PointsBit);
}

qint64 PlaybookFacts::moneyAtRiskFen() const
{
    if (mapped)
        return mappedWatch.valueFen(pointsPerYuan);
    return watch.couponFen() + watch.pointFen(pointsPerYuan);
}

DefenceState PlaybookFacts::defence(const QString &name) const
{
    const auto found = std::find_if(posture.begin(), posture.end(),
                                    [&name](const Defence &d) { return d.name == name; });
    return found == posture.end() ? DefenceState::Unknown : found->state;
}

bool PlaybookFacts::keysPresent() const
{
    if (mapped)
        return mappedFix(*this).state == StepState::Done;
    return defence(QStringLiteral("uk_order_tpl")) == DefenceState::Present &&
           defence(QStringLiteral("uk_order_type")) == DefenceState::Present;
}

bool PlaybookFacts::handlerFixed() const
{
    // On a sandbox the console restarts the instances itself, and the posture's hour of traces
    // would still hold the unsafe run for an hour after the restart.
    if (sandbox)
        return unsafeAlive == 0;
    return defence(QStringLiteral("lock_across_commit")) == DefenceState::Present;
}

qint64 MappedCompensatedTally::advance(const QSqlDatabase &db)
{
    // One statement each: the head and the count from one read view.
    QSqlQuery query =
        m_auditLastId < 0
            ? db::exec(db, QStringLiteral("SELECT h.last_id, (SELECT COUNT(*) FROM "
                                          "mapped_compensation) FROM ops_audit_head h "
                                          "WHERE h.id = 1"))
            : db::exec(db,
                       QStringLiteral("SELECT h.last_id, (SELECT COUNT(*) FROM ops_audit_log l "
                                      "WHERE l.id > ? AND l.id <= h.last_id AND l.action IN "
                                      "('compensation.mapped_freeze', "
                                      "'compensation.mapped_reverse')) "
                                      "FROM ops_audit_head h WHERE h.id = 1"),
                       {m_auditLastId});
    if (!query.next())
        return m_count;
    m_count = (m_auditLastId < 0 ? 0 : m_count) + query.value(1).toLongLong();
    m_auditLastId = query.value(0).toLongLong();
    return m_count;
}

PlaybookFacts readPlaybookFacts(const QSqlDatabase &db, qint64 pointsPerYuan,
                                const mapping::Mapping *mapping, MappedCompensatedTally *tally)
{
    PlaybookFacts facts;
    facts.pointsPerYuan = pointsPerYuan;
    facts.sandbox = db::isSandboxDatabase(db);
    facts.mapped = mapping != nullptr;

    // As the overview: a slice of the first pass at most, and another console's refresh waited
    // for briefly, so the playbook's figures are the overview's.
    WatchRefreshOptions options;
    options.lockWaitSeconds = 1;
    options.firstPassBudgetMs = 1000;
    if (mapping) {
        const mapping::MappedWatchRefresh watch =
            mapping::refreshMappedWatch(db, *mapping, options);
        facts.mappedWatch = watch.figures;
        facts.watchMissing = watch.missing;
        if (!watch.missing) {
            facts.inspection = readInspection(db, *mapping, watch.figures);
            MappedCompensatedTally once;
            facts.mappedCompensated = (tally ? tally : &once)->advance(db);
        }
    } else {
        const WatchRefresh watch = refreshDuplicateWatch(db, options);
        facts.watch = watch.figures;
        facts.watchMissing = watch.missing;
        if (!watch.missing)
            facts.inspection = readInspection(db, watch.figures);
    }

    // The heartbeat table: one row per instance ever started, a handful.
    QSqlQuery instances = db::exec(
        db,
        QStringLiteral("SELECT COALESCE(SUM(i.alive), 0), COALESCE(SUM(i.alive AND i.handler = "
                       "'unsafe-demo'), 0), "
                       "       COALESCE(SUM(i.alive AND i.switch_version_applied < s.version), 0), "
                       "       COALESCE(SUM(i.alive AND i.mode = 'gateway'), 0) "
                       "FROM (SELECT handler, switch_version_applied, mode, "
                       "             %1 AS alive "
                       "      FROM callback_instance) i JOIN callback_switch s ON s.id = 1")
            .arg(instanceLiveSql()));
    if (instances.next()) {
        facts.instancesAlive = instances.value(0).toLongLong();
        facts.unsafeAlive = instances.value(1).toLongLong();
        facts.unacknowledged = instances.value(2).toLongLong();
        facts.gatewaysAlive = instances.value(3).toLongLong();
    }
    // idx_request_status: the open requests only.
    facts.pendingRequests =
        db::scalar(db, QStringLiteral(
                           "SELECT COUNT(*) FROM compensation_request WHERE status = 'PENDING'"))
            .toLongLong();
    facts.posture = mapping ? inspectMappedPosture(db, *mapping) : inspectPosture(db);

    if (facts.sandbox) {
        // idx_trace_received: the last hour only, and the first phantom found ends it.
        facts.recentPhantom =
            db::scalar(db, QStringLiteral("SELECT EXISTS (SELECT 1 FROM callback_trace WHERE "
                                          "received_at >= UTC_TIMESTAMP(6) - INTERVAL 1 HOUR "
                                          "               AND handler = 'unsafe-demo' AND "
                                          "lock_released_at < committed_at)"))
                .toBool();
    }

    // Without migration 0020 a mapped database has no open groups to name an order by.
    if (!(mapping && facts.watchMissing))
        facts.evidenceOrder = evidenceOrderOf(db, mapping);
    if (facts.evidenceOrder > 0) {
        // idx_trace_order: the few callbacks of one order.
        QSqlQuery early = db::exec(
            db,
            QStringLiteral(
                "SELECT instance, TIMESTAMPDIFF(MICROSECOND, lock_released_at, committed_at) AS "
                "early "
                "FROM callback_trace WHERE order_id = ? AND lock_released_at < committed_at "
                "ORDER BY early DESC LIMIT 1"),
            {facts.evidenceOrder});
        if (early.next()) {
            facts.evidenceInstance = early.value(0).toString();
            facts.evidenceEarlyMicros = early.value(1).toLongLong();
        }
    }
    return facts;
}

QList<StepStatus> evaluatePlaybook(const PlaybookFacts &facts, const PlaybookContext &context)
{
    return {
        simulate(facts, context),
        detect(facts),
        stopBleeding(facts),
        scope(facts),
        proveRootCause(facts),
        compensate(facts),
        fix(facts),
        drain(facts),
        inspectGreen(facts),
        exportReport(facts, context),
    };
}

int countedSteps(const QList<StepStatus> &steps)
{
    return int(std::count_if(steps.begin(), steps.end(), [](const StepStatus &s) {
        return s.state != StepState::NotAvailable;
    }));
}

int doneSteps(const QList<StepStatus> &steps)
{
    return int(std::count_if(steps.begin(), steps.end(),
                             [](const StepStatus &s) { return s.state == StepState::Done; }));
}

SideEffectKeysResult applyPlaybookKeys(const db::StandaloneContext &context)
{
    db::Connection connection(context.dsn, QStringLiteral("playbook-keys"));
    return applySideEffectKeys(connection);
}

} // namespace payops::console
