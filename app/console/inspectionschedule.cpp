#include "inspectionschedule.h"

#include "consolesettings.h"
#include "db/dbworker.h"
#include "displayformat.h"
#include "domain/mapping/mappedwatch.h"
#include "domain/money/duplicates/duplicatewatch.h"

#include <QCoreApplication>
#include <QStringList>

namespace payops::console {
namespace {

struct Text
{
    Q_DECLARE_TR_FUNCTIONS(payops::console::InspectionScheduler)
};

// A scheduled run gives the watch's first count this long, then stores nothing and tries
// again at its next tick: the count resumes where it stopped, and the console never holds a
// worker for the whole of a first pass.
constexpr int kFirstPassBudgetMs = 5000;

// The watch's first count within the budget, then the report read from its figures; nullopt
// (and `result` saying how far the count got) while the first count is not done.
template <typename Refresh, typename Read>
std::optional<InspectionReport> reportFromWatch(ScheduledInspection &result, const Refresh &watch,
                                                Read read)
{
    if (watch.missing)
        throw db::Error(watch.why);
    if (!watch.figures.complete()) {
        result.waitingForFirstCount = true;
        result.percentScanned = watch.figures.percentScanned();
        return std::nullopt;
    }
    InspectionReport report;
    read(report, watch.figures);
    return report;
}

ScheduledInspection inspectOnce(const QSqlDatabase &db,
                                const std::optional<mapping::Mapping> &mapping,
                                qint64 pointsPerYuan)
{
    ScheduledInspection result;
    const QDateTime startedAt = serverTime(db);
    WatchRefreshOptions options;
    options.firstPassBudgetMs = kFirstPassBudgetMs;
    // On a team's own tables the mapped watch counts per side effect, as payops inspect
    // --mapping does; findings and figures are stored the same way.
    const std::optional<InspectionReport> read =
        mapping
            ? reportFromWatch(
                  result, mapping::refreshMappedWatch(db, *mapping, options),
                  [&](InspectionReport &report, const mapping::MappedWatchFigures &figures) {
                      report.findings = readInspection(db, *mapping, figures);
                  })
            : reportFromWatch(result, refreshDuplicateWatch(db, options),
                              [&](InspectionReport &report, const DuplicateWatchFigures &figures) {
                                  report.figures = figures;
                                  report.findings = readInspection(db, figures);
                              });
    if (!read)
        return result;
    InspectionReport report = *read;
    report.pointsPerYuan = pointsPerYuan;
    result.run = InspectionRun::of(report, startedAt, QStringLiteral("console"));
    result.previous = previousInspectionRun(db, 0);
    result.stored = storeInspectionRun(db, result.run);
    result.run.id = result.stored.id;
    result.fresh = NewFindings::between(result.previous, result.run);
    return result;
}

} // namespace

NewFindings NewFindings::between(const std::optional<InspectionRun> &previous,
                                 const InspectionRun &current)
{
    const InspectionRun before = previous.value_or(InspectionRun{});
    NewFindings fresh;
    fresh.duplicates =
        current.duplicateGroups > before.duplicateGroups ||
        (current.duplicateGroups > 0 && current.duplicateExtraCopies > before.duplicateExtraCopies);
    fresh.latePayments = current.unmatchedWithOrder > before.unmatchedWithOrder;
    fresh.refundsOwed = current.doublePaymentCallbacks > before.doublePaymentCallbacks;
    return fresh;
}

QString NewFindings::describe(const InspectionRun &run) const
{
    QStringList parts;
    if (duplicates)
        parts << Text::tr("new duplicate side effects (%1 open group(s), %2 yuan at risk)")
                     .arg(QString::number(run.duplicateGroups), formatYuan(run.moneyAtRiskFen));
    if (latePayments)
        parts << Text::tr("%1 late payment(s) to apply").arg(run.unmatchedWithOrder);
    if (refundsOwed)
        parts << Text::tr("%1 order(s) paid twice by the customer (%2 yuan to refund)")
                     .arg(QString::number(run.doublePaymentOrders), formatYuan(run.refundOwedFen));
    return parts.join(QStringLiteral("; "));
}

InspectionScheduler::InspectionScheduler(const Dsn &dsn, std::optional<mapping::Mapping> mapping,
                                         QObject *parent)
    : QObject(parent)
    , m_worker(std::make_unique<db::DbWorker>(dsn))
    , m_mapping(std::move(mapping))
{
    m_timer.setObjectName(QStringLiteral("inspectionTimer"));
    connect(&m_timer, &QTimer::timeout, this, &InspectionScheduler::runNow);
    connect(&ConsoleSettings::instance(), &ConsoleSettings::changed, this,
            &InspectionScheduler::followSettings);
    followSettings();
}

InspectionScheduler::~InspectionScheduler() = default;

void InspectionScheduler::overrideInterval(std::chrono::milliseconds interval)
{
    m_overridden = true;
    applyInterval(interval);
}

void InspectionScheduler::followSettings()
{
    if (!m_overridden)
        applyInterval(std::chrono::minutes(ConsoleSettings::instance().inspectionMinutes()));
}

void InspectionScheduler::applyInterval(std::chrono::milliseconds interval)
{
    const bool wasActive = m_timer.isActive();
    const auto previous = m_timer.intervalAsDuration();
    if (interval.count() <= 0)
        m_timer.stop();
    else if (!wasActive || previous != interval)
        m_timer.start(interval);
    if (wasActive != m_timer.isActive() || previous != m_timer.intervalAsDuration())
        Q_EMIT scheduleChanged();
}

void InspectionScheduler::runNow()
{
    if (m_running)
        return;
    m_running = true;
    const qint64 pointsPerYuan = ConsoleSettings::instance().pointsPerYuan();
    m_worker->submit<ScheduledInspection>(
        QStringLiteral("scheduled-inspection"),
        [mapping = m_mapping, pointsPerYuan](const QSqlDatabase &db) {
            return inspectOnce(db, mapping, pointsPerYuan);
        },
        this,
        [this](const ScheduledInspection &result) {
            m_running = false;
            Q_EMIT finished(result);
        },
        [this](const db::Error &error) {
            m_running = false;
            Q_EMIT failed(db::userMessage(error));
        });
}

} // namespace payops::console
