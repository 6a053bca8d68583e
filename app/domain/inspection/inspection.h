#pragma once

#include "domain/callback/callbackswitch.h"
#include "domain/callback/unmatchedcallbacks.h"
#include "domain/money/duplicates/doublepayments.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"

#include <QJsonObject>
#include <QSqlDatabase>

namespace payops {

// What `payops inspect` reports and the playbook's "inspect green" step checks: one decision
// of clean or findings, so that the console can never call green what cron alerts on.
struct InspectionFindings
{
    LiveDuplicateCount duplicates;
    SwitchState switchState;
    qint64 backlog = 0;        // RECORDED payments waiting for payops drain
    qint64 gatewayBacklog = 0; // a gateway's callbacks without a final answer: drain --upstream
    UnmatchedCount unmatched;
    DoublePayments doublePayments;

    // Live duplicates, payments waiting to be applied and customers who paid twice (a refund
    // owed) are findings: each is money someone has to move. The backlog and unmatched
    // callbacks still without their order are reported but are not: the first waits for an
    // operator's drain after a deliberate degrade, the second for an order that is normally
    // seconds late, and neither has anything to run yet.
    bool clean() const
    {
        return duplicates.isEmpty() && unmatched.withOrder == 0 && doublePayments.isEmpty();
    }
};

// Reads the findings beside watch figures the caller has just refreshed (and found complete):
// the switch row, the backlog's own index range and the unmatched callbacks. Throws db::Error.
InspectionFindings readInspection(const QSqlDatabase &db, const DuplicateWatchFigures &figures);

// One inspection whole: the watch's figures it read the duplicates from, and its findings.
struct InspectionReport
{
    DuplicateWatchFigures figures;
    InspectionFindings findings;
    qint64 pointsPerYuan = 100; // the cash value of points in money at risk

    qint64 duplicateGroups() const
    {
        return findings.duplicates.couponGroups + findings.duplicates.pointGroups;
    }
    qint64 extraCopies() const
    {
        return findings.duplicates.couponExtraRows + findings.duplicates.pointExtraRows;
    }
    qint64 moneyAtRiskFen() const { return figures.couponFen() + figures.pointFen(pointsPerYuan); }
    // What `payops inspect --json` prints and inspection_run keeps as its findings.
    QJsonObject toJson() const;
};

} // namespace payops
