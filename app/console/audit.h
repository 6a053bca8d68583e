#pragma once

#include "domain/money/auditlog.h"
#include "domain/money/auditquery.h"
#include "job.h"

#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace payops::console {

// Reports the rows a long audit job has gone through; called on the worker's thread.
using RowsProgress = std::function<void(qint64 rows)>;

// The audit page's check of the hash chain as a worker's job, stopped once `cancel` is set.
Job<AuditVerification> auditVerificationJob(std::shared_ptr<std::atomic<bool>> cancel,
                                            RowsProgress progress);

// How an export of the audit log ended.
struct AuditExport
{
    qint64 written = 0; // entries written; -1 when stopped (no file is left)
    QString failure;    // why nothing was exported, for a person; empty when it was
};

// The export of the entries `filter` selects to a CSV file at `path` as a worker's job,
// stopped once `cancel` is set. A failure, of the database or of the file, is the result's
// `failure`, not an error of the job.
Job<AuditExport> auditExportJob(AuditFilter filter, QString path,
                                std::shared_ptr<std::atomic<bool>> cancel, RowsProgress progress);

} // namespace payops::console
