#pragma once

#include "callbackswitch.h"
#include "duplicatecount.h"
#include "duplicatewatch.h"
#include "unmatchedcallbacks.h"

#include <QSqlDatabase>

namespace payops {

// What `payops inspect` reports and the playbook's "inspect green" step checks: one decision
// of clean or findings, so that the console can never call green what cron alerts on.
struct InspectionFindings
{
    LiveDuplicateCount duplicates;
    SwitchState switchState;
    qint64 backlog = 0; // RECORDED callbacks waiting for a drain
    UnmatchedCount unmatched;

    // Live duplicates and payments waiting to be applied are findings. The backlog and
    // unmatched callbacks still without their order are reported but are not: the first waits
    // for an operator's drain after a deliberate degrade, the second for an order that is
    // normally seconds late, and neither has anything to run yet.
    bool clean() const { return duplicates.isEmpty() && unmatched.withOrder == 0; }
};

// Reads the findings beside watch figures the caller has just refreshed (and found complete):
// the switch row, the backlog's own index range and the unmatched callbacks. Throws db::Error.
InspectionFindings readInspection(const QSqlDatabase &db, const DuplicateWatchFigures &figures);

} // namespace payops
