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
        p.plan.fenPerHundredPoints = fenPerHundredPoints;
        p.fourEyes = mapping::mappedFourEyes(db, p.plan);
        return p;
    };
}

Job<mapping::MappedResult> mappedRunJob(mapping::Mapping mapping, mapping::MappedJob job,
                                        std::shared_ptr<std::atomic<bool>> stop)
{
    job.stop = stop.get();
    return [mapping = std::move(mapping), job = std::move(job), stop = std::move(stop)](
               const QSqlDatabase &db) { return mapping::runMappedCompensation(db, mapping, job); };
}

} // namespace payops::console
