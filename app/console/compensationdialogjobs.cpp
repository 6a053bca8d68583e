#include "compensationdialogjobs.h"

namespace payops::console {

Job<ScopedPreview> compensationPreviewJob(Job<CompensationScope> scope,
                                          CompensationSettings settings)
{
    return [scope = std::move(scope), settings](const QSqlDatabase &db) {
        ScopedPreview p;
        p.scope = scope(db);
        p.preview = previewCompensation(db, p.scope, settings);
        return p;
    };
}

Job<CompensationResult> compensationRunJob(CompensationJob job,
                                           std::shared_ptr<std::atomic<bool>> stop)
{
    job.stop = stop.get();
    return [job = std::move(job), stop = std::move(stop)](const QSqlDatabase &db) {
        return runCompensation(db, job);
    };
}

Job<MappedPreview> mappedPreviewJob(mapping::Mapping mapping, mapping::MappedScope scope,
                                    qint64 fenPerHundredPoints)
{
    return [mapping = std::move(mapping), scope = std::move(scope),
            fenPerHundredPoints](const QSqlDatabase &db) {
        MappedPreview p;
        p.plan = mapping::planMappedCompensation(db, mapping, scope);
        p.fourEyes = mapping::mappedFourEyes(db, p.plan, fenPerHundredPoints);
        return p;
    };
}

Job<MappedRun> mappedRunJob(MappedRunRequest request, std::shared_ptr<std::atomic<bool>> stop)
{
    return [request = std::move(request), stop = std::move(stop)](const QSqlDatabase &db) {
        MappedRun run;
        run.fourEyes = mapping::mappedFourEyes(db, request.plan, request.fenPerHundredPoints);
        if (run.fourEyes.refused)
            return run;
        run.outcome =
            mapping::executeMappedCompensation(db, request.mapping, request.plan, request.reason,
                                               request.ticket, 200, stop.get(), request.progress);
        return run;
    };
}

} // namespace payops::console
