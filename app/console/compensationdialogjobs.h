#pragma once

#include "domain/mapping/mappedrequest.h"
#include "domain/money/compensationworkflow.h"
#include "job.h"

#include <atomic>
#include <functional>
#include <memory>

namespace payops::console {

// A dry run with the scope it was planned for: "all in this filter" is resolved on the
// worker, in the same job as the plan, so the two agree.
struct ScopedPreview
{
    CompensationScope scope;
    CompensationPreview preview;
};

// The compensation dialog's dry run of what `scope` resolves to, under `settings`.
Job<ScopedPreview> compensationPreviewJob(Job<CompensationScope> scope,
                                          CompensationSettings settings);

// The dialog's run (or the request it files). The job holds `stop`, which job.stop points to,
// so that the flag outlives a dialog closed before the run ends.
Job<CompensationResult> compensationRunJob(CompensationJob job,
                                           std::shared_ptr<std::atomic<bool>> stop);

// The dry run of a compensation on a team's own tables, and the four-eyes check it will meet.
struct MappedPreview
{
    mapping::MappedCompensationPlan plan;
    mapping::MappedFourEyes fourEyes;
};
Job<MappedPreview> mappedPreviewJob(mapping::Mapping mapping, mapping::MappedScope scope,
                                    qint64 fenPerHundredPoints);

// The run, or the approval of a request through the mapping: runMappedCompensation(). The
// job holds `stop`, which job.stop points to, so that the flag outlives a dialog closed before
// the run ends.
Job<mapping::MappedResult> mappedRunJob(mapping::Mapping mapping, mapping::MappedJob job,
                                        std::shared_ptr<std::atomic<bool>> stop);

} // namespace payops::console
