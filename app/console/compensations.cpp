#include "compensations.h"

namespace payops::console {

CompensationRecord loadCompensationRecord(const QSqlDatabase &db)
{
    CompensationRecord record;
    record.thresholdFen = fourEyesThresholdFen(db);
    record.requests = loadCompensationRequests(db);
    record.batches = loadCompensationBatches(db);
    return record;
}

} // namespace payops::console
