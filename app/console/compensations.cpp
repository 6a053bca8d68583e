#include "compensations.h"

namespace payops::console {

CompensationRecord loadCompensationRecord(const QSqlDatabase &db, bool mapped)
{
    CompensationRecord record;
    record.thresholdFen = fourEyesThresholdFen(db);
    if (mapped) {
        record.batches = loadMappedCompensationBatches(db);
        return record;
    }
    record.requests = loadCompensationRequests(db);
    record.batches = loadCompensationBatches(db);
    return record;
}

} // namespace payops::console
