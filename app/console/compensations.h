#pragma once

#include "domain/money/compensationrequest.h"

#include <QList>
#include <QSqlDatabase>

namespace payops::console {

// The compensation page's record: the four-eyes threshold, the requests, the batches.
struct CompensationRecord
{
    qint64 thresholdFen = 0; // 0: no four-eyes threshold is set
    QList<CompensationRequest> requests;
    QList<CompensationBatch> batches;
};

// Throws db::Error. `mapped`: the batches through a mapping. The requests are every one,
// for payops's own tables and through mappings alike: the page says which it can approve.
CompensationRecord loadCompensationRecord(const QSqlDatabase &db, bool mapped = false);

} // namespace payops::console
