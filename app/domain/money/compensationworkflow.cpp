#include "compensationworkflow.h"

#include "db/connection.h"

#include <QCoreApplication>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct CompensationWorkflow
{
    Q_DECLARE_TR_FUNCTIONS(payops::CompensationWorkflow)
};

CompensationResult approveAndRun(const QSqlDatabase &db, const CompensationJob &job)
{
    CompensationResult result;
    result.refusal = refusalOfTheRequester(db, job.approveRequestId);
    if (!result.refusal.isEmpty())
        return result;
    const Approval approval = approveCompensationRequest(db, job.approveRequestId, job.settings);
    result.plan = approval.plan;
    if (!approval.refusal.isEmpty()) {
        result.refusal = approval.refusal;
        return result;
    }
    result.approved = approval.request;
    if (job.starting)
        job.starting(result.plan, &approval.request);
    result.run = executeCompensation(db, result.plan, job.reason, job.ticket, job.settings,
                                     job.stop, job.progress);
    // Copies a batch did not keep are still open: the request stays APPROVED, so that approving
    // it again runs them.
    if (!result.run.cancelled && result.run.notKept.isEmpty())
        markRequestExecuted(db, job.approveRequestId);
    return result;
}

} // namespace

// The database refuses the requester's approval with an error (the trigger of migration
// 0014 stays the guard); asking first makes it a refusal like the others, one that changes
// nothing and says whose request it is. By user name, as the trigger: the same account over
// another connection (socket, TCP) is the same person.
QString refusalOfTheRequester(const QSqlDatabase &db, qint64 id)
{
    const auto request = loadCompensationRequest(db, id);
    if (!request || request->status != QLatin1String("PENDING") || !request->byThisUser)
        return {};
    return CompensationWorkflow::tr(
               "request %1 was made by this account (%2): it needs another operator to approve it")
        .arg(QString::number(id), request->requestedBy);
}

CompensationPreview previewCompensation(const QSqlDatabase &db, const CompensationScope &scope,
                                        const CompensationSettings &settings)
{
    CompensationPreview preview;
    preview.plan = planCompensation(db, scope, settings);
    preview.thresholdFen = fourEyesThresholdFen(db);
    preview.soloFen = soloCompensatedFen(db);
    return preview;
}

CompensationResult runCompensation(const QSqlDatabase &db, const CompensationJob &job)
{
    if (job.approveRequestId > 0)
        return approveAndRun(db, job);
    const CompensationPreview preview =
        job.confirmed ? *job.confirmed : previewCompensation(db, job.scope, job.settings);
    CompensationResult result;
    result.plan = preview.plan;
    result.thresholdFen = preview.thresholdFen;
    result.soloFen = preview.soloFen;
    if (preview.needsRequest()) {
        result.filedRequestId =
            requestCompensation(db, preview.plan, job.scope, job.reason, job.ticket);
        return result;
    }
    if (job.starting)
        job.starting(result.plan, nullptr);
    result.run = executeCompensation(db, result.plan, job.reason, job.ticket, job.settings,
                                     job.stop, job.progress);
    return result;
}

} // namespace payops
