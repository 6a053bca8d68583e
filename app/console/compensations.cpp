#include "compensations.h"

namespace payops::console {

CompensationRecord loadCompensationRecord(const QSqlDatabase &db, bool mapped)
{
    CompensationRecord record;
    record.thresholdFen = fourEyesThresholdFen(db);
    record.requests = loadCompensationRequests(db);
    record.batches = mapped ? loadMappedCompensationBatches(db) : loadCompensationBatches(db);
    return record;
}

} // namespace payops::console
