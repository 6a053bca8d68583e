#pragma once

#include "compensation.h"
#include "compensationrequest.h"

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>
#include <optional>

namespace payops {

// A dry run: what a compensation would do now, the four-eyes threshold it is held to, and
// how much of it the account already used alone over the window.
struct CompensationPreview
{
    CompensationPlan plan;
    qint64 thresholdFen = 0;
    qint64 soloFen = 0;

    // Above the threshold a new compensation is filed as a request instead of carried out.
    bool needsRequest() const { return needsSecondOperator(plan, thresholdFen, soloFen); }
};

// Plans `scope` and reads the threshold and the account's solo allowance used; changes
// nothing. Throws db::Error.
CompensationPreview previewCompensation(const QSqlDatabase &db, const CompensationScope &scope,
                                        const CompensationSettings &settings);

// Why the connection's user may not approve request `id`: it made the request. Empty
// otherwise. Throws db::Error.
QString refusalOfTheRequester(const QSqlDatabase &db, qint64 id);

// One compensation as an operator asks for it, on the console or on the command line.
struct CompensationJob
{
    CompensationScope scope;       // what a new compensation covers
    qint64 approveRequestId = 0;   // instead: approve and carry out another operator's request
    CompensationSettings settings; // the used-coupon choice, the points' value, the batch size
    QString reason;
    QString ticket;
    // The dry run the operator confirmed. A new compensation carries out that plan and takes
    // that four-eyes branch, not a later one nobody saw; without one it plans when it starts.
    // An approval always plans anew, and that plan is checked against the amount asked for.
    std::optional<CompensationPreview> confirmed;
    const std::atomic<bool> *stop = nullptr; // stops the run after its current batch
    // Called on the thread that runs the job: the plan about to be carried out (and the
    // request, when approving one) before the first batch, then the actions done after each.
    std::function<void(const CompensationPlan &plan, const CompensationRequest *approved)> starting;
    std::function<void(int done, int total)> progress;
};

// What became of a job: refused, filed as a request, or carried out (perhaps stopped).
struct CompensationResult
{
    QString refusal;           // why nothing changed; empty otherwise
    qint64 filedRequestId = 0; // above the threshold: the request filed instead
    qint64 thresholdFen = 0;
    qint64 soloFen = 0; // what the account had compensated alone over the window
    std::optional<CompensationRequest> approved; // the request approved (or carried on) and run
    CompensationPlan plan;   // what was carried out or filed; a refused approval's as it is now
    CompensationOutcome run; // compensated, skipped, negative balances, stopped
};

// The one compensation workflow of the console and the command line:
// - a new compensation above the four-eyes threshold is filed as a request and changes
//   nothing else; otherwise it is carried out in batches;
// - an approval by the account that made the request is refused, as the database would;
//   otherwise the request is approved (a refusal when it is no longer open, or when its
//   duplicates changed since it was asked for), its scope planned as it is now and carried
//   out, and the request marked executed once the run finished. A stopped run leaves the
//   request APPROVED: approving it again carries on with what is left.
// Every batch committed stays done, whether the run is stopped or fails. Throws db::Error.
CompensationResult runCompensation(const QSqlDatabase &db, const CompensationJob &job);

} // namespace payops
