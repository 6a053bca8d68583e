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

} // namespace payops::console
