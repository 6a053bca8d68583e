#include "inspection.h"

#include "db/connection.h"

namespace payops {

InspectionFindings readInspection(const QSqlDatabase &db, const DuplicateWatchFigures &figures)
{
    InspectionFindings findings;
    findings.duplicates = figures.liveCount(openDuplicateOrders(db));
    findings.switchState = readSwitch(db);
    // idx_callback_status: the backlog's own rows, not the callback history.
    findings.backlog = db::scalar(db, QStringLiteral(
        "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")).toLongLong();
    findings.unmatched = countUnmatched(db);
    return findings;
}

} // namespace payops
