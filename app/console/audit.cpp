#include "audit.h"

#include "db/dberror.h"

#include <stdexcept>

namespace payops::console {

Job<AuditVerification> auditVerificationJob(std::shared_ptr<std::atomic<bool>> cancel,
                                            RowsProgress progress)
{
    return [cancel = std::move(cancel), progress = std::move(progress)](const QSqlDatabase &db) {
        return verifyAuditChain(db, cancel.get(), progress);
    };
}

Job<AuditExport> auditExportJob(AuditFilter filter, QString path,
                                std::shared_ptr<std::atomic<bool>> cancel, RowsProgress progress)
{
    return [filter = std::move(filter), path = std::move(path), cancel = std::move(cancel),
            progress = std::move(progress)](const QSqlDatabase &db) {
        AuditExport result;
        try {
            result.written = exportAuditCsv(db, filter, path, cancel.get(), progress);
        } catch (const std::runtime_error &error) {
            result.failure = db::userMessage(error);
        }
        return result;
    };
}

} // namespace payops::console
