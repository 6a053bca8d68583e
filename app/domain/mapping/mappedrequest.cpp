#include "mappedrequest.h"

#include "domain/money/compensationworkflow.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace payops::mapping {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct MappedRequests
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::MappedRequests)
};

MappedResult approveAndRun(const QSqlDatabase &db, const Mapping &mapping, const MappedJob &job)
{
    MappedResult result;
    const qint64 id = job.approveRequestId;
    result.refusal = refusalOfTheRequester(db, id);
    if (!result.refusal.isEmpty())
        return result;
    const auto request = loadCompensationRequest(db, id);
    result.refusal = refusalToApprove(request, id);
    if (result.refusal.isEmpty())
        result.refusal = mappedRequestRefusal(*request, mapping);
    if (!result.refusal.isEmpty())
        return result;
    result.plan = planMappedCompensation(
        db, mapping, MappedScope{request->scope.orders, request->scope.everything});
    result.plan.fenPerHundredPoints = request->mapped->fenPerHundredPoints;
    result.plan.requestId = id;
    result.refusal = approvePlanned(db, *request, result.plan.moneyFen());
    if (!result.refusal.isEmpty())
        return result;
    result.approved = request;
    if (job.starting)
        job.starting(result.plan, &*request);
    result.outcome = executeMappedCompensation(db, mapping, result.plan, job.reason, job.ticket,
                                               200, job.stop, job.progress);
    // Copies a batch did not keep are still open: the request stays APPROVED, so that approving
    // it again runs them.
    if (!result.outcome.cancelled && result.outcome.notKept.isEmpty())
        markRequestExecuted(db, id);
    return result;
}

} // namespace

QString mappedRequestRefusal(const CompensationRequest &request, const Mapping &mapping)
{
    if (!request.mapped)
        return MappedRequests::tr("request %1 is for payops's own tables: approve it without a "
                                  "mapping")
            .arg(request.id);
    const QString sha = QString::fromLatin1(mapping.sha256);
    if (request.mapped->sha256 != sha)
        return MappedRequests::tr("request %1 was made through another mapping file (SHA-256 "
                                  "%2…), not %3 (%4…): approve it with the very file it was "
                                  "made with")
            .arg(QString::number(request.id), request.mapped->sha256.left(12),
                 QFileInfo(mapping.path).fileName(), sha.left(12));
    return {};
}

MappedResult runMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                                   const MappedJob &job)
{
    if (job.approveRequestId > 0)
        return approveAndRun(db, mapping, job);
    MappedResult result;
    result.plan = job.confirmed ? *job.confirmed : planMappedCompensation(db, mapping, job.scope);
    result.plan.fenPerHundredPoints = job.fenPerHundredPoints;
    result.fourEyes = mappedFourEyes(db, result.plan);
    if (result.plan.isEmpty())
        return result;
    if (result.fourEyes.needsRequest) {
        MappedRequest mapped{QString::fromLatin1(mapping.sha256), {}, job.fenPerHundredPoints};
        for (const SideEffectMapping &se : mapping.sideEffects)
            mapped.sideEffects << se.name + QStringLiteral(": ") + businessTable(db, mapping, se);
        result.filedRequestId = requestMappedCompensation(
            db, mapped, CompensationScope{job.scope.orders, {}, job.scope.everything},
            result.plan.count(MappedAction::Freeze), result.plan.count(MappedAction::Reverse),
            result.fourEyes.moneyFen, job.reason, job.ticket);
        return result;
    }
    if (job.starting)
        job.starting(result.plan, nullptr);
    result.outcome = executeMappedCompensation(db, mapping, result.plan, job.reason, job.ticket,
                                               200, job.stop, job.progress);
    return result;
}

} // namespace payops::mapping
