#pragma once

#include "domain/callback/callbackswitch.h"
#include "domain/callback/unmatchedcallbacks.h"
#include "domain/mapping/mappedwatch.h"
#include "domain/money/duplicates/doublepayments.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"

#include <QJsonObject>
#include <QSqlDatabase>

#include <optional>

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
    // With a mapping file: the duplicates on the team's tables, in place of `duplicates`
    // (which stays empty); everything else still comes from payops's own tables.
    std::optional<mapping::MappedWatchFigures> mapped;
    QList<qint64> mappedSampleOrders; // up to ten orders with an open group, lowest first

    bool hasDuplicates() const { return mapped ? mapped->groups() > 0 : !duplicates.isEmpty(); }

    // Live duplicates, payments waiting to be applied and customers who paid twice (a refund
    // owed) are findings: each is money someone has to move. The backlog and unmatched
    // callbacks still without their order are reported but are not: the first waits for an
    // operator's drain after a deliberate degrade, the second for an order that is normally
    // seconds late, and neither has anything to run yet.
    bool clean() const
    {
        return !hasDuplicates() && unmatched.withOrder == 0 && doublePayments.isEmpty();
    }
};

// Reads the findings beside watch figures the caller has just refreshed (and found complete):
// the switch row, the backlog's own index range and the unmatched callbacks. Throws db::Error.
InspectionFindings readInspection(const QSqlDatabase &db, const DuplicateWatchFigures &figures);
// The same with the duplicates of a team's tables, from the mapped watch's figures the caller
// has just refreshed (and found complete). Throws db::Error.
InspectionFindings readInspection(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                  const mapping::MappedWatchFigures &figures);

// One inspection whole: the watch's figures it read the duplicates from, and its findings.
struct InspectionReport
{
    DuplicateWatchFigures figures;
    InspectionFindings findings;
    qint64 pointsPerYuan = 100; // the cash value of points in money at risk

    qint64 duplicateGroups() const
    {
        if (findings.mapped)
            return findings.mapped->groups();
        return findings.duplicates.couponGroups + findings.duplicates.pointGroups;
    }
    qint64 extraCopies() const
    {
        if (findings.mapped)
            return findings.mapped->extraCopies();
        return findings.duplicates.couponExtraRows + findings.duplicates.pointExtraRows;
    }
    qint64 moneyAtRiskFen() const
    {
        if (findings.mapped)
            return findings.mapped->valueFen(pointsPerYuan);
        return figures.couponFen() + figures.pointFen(pointsPerYuan);
    }
    // What `payops inspect --json` prints and inspection_run keeps as its findings.
    QJsonObject toJson() const;

private:
    QJsonObject ownJson() const; // without a mapping
};

} // namespace payops
