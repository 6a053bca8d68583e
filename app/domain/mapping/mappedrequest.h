#pragma once

#include "domain/money/compensationrequest.h"
#include "mappedcompensation.h"

#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <functional>
#include <optional>

namespace payops::mapping {

// Four eyes on the team's own tables (docs/mapping.md, decision 0062), as runCompensation
// (domain/money/compensationworkflow.h) holds them on payops's own: one compensation as an
// operator asks for it, on the console or on the command line.
struct MappedJob
{
    MappedScope scope;           // what a new compensation covers
    qint64 approveRequestId = 0; // instead: approve and carry out another operator's request
    // What 100 points are worth for a new compensation; an approval counts at the request's.
    qint64 fenPerHundredPoints = 100;
    QString reason;
    QString ticket;
    // The dry run the operator confirmed: a new compensation carries out (or files) that plan,
    // not a later one nobody saw. An approval always plans anew.
    std::optional<MappedCompensationPlan> confirmed;
    const std::atomic<bool> *stop = nullptr; // stops the run after its current batch
    // On the thread that runs the job, before the first batch: the plan about to be carried
    // out, and the request when approving one.
    std::function<void(const MappedCompensationPlan &plan, const CompensationRequest *approved)>
        starting;
    std::function<void(int done, int total)> progress;
};

// What became of a job: refused, filed as a request, or carried out (perhaps stopped).
struct MappedResult
{
    QString refusal;           // why nothing changed; empty otherwise
    qint64 filedRequestId = 0; // above the threshold: the request filed instead
    MappedFourEyes fourEyes;   // a new compensation's
    std::optional<CompensationRequest> approved;
    MappedCompensationPlan plan; // what was carried out or filed; a refused approval's as it is now
    MappedCompensationOutcome outcome;
};

// Why a mapping may not carry out `request`, or empty: the request is for payops's own
// tables, or was planned through a mapping file with another SHA-256 (another file, or the
// same file changed since).
QString mappedRequestRefusal(const CompensationRequest &request, const Mapping &mapping);

// - a new compensation above the four-eyes threshold is filed as a request recording the
//   mapping (its SHA-256, its side effects and their tables), the orders in scope and the
//   points' value, and changes nothing else; otherwise it is carried out;
// - an approval is refused for the requester (as the database would refuse it), for a request
//   mappedRequestRefusal() refuses, or when the scope planned again through the mapping no
//   longer fits the amount asked; otherwise the request is approved, carried out with its id
//   on every row, and marked executed once the run finished. A stopped run leaves it APPROVED:
//   approving it again carries on with what is left.
// Throws db::Error.
MappedResult runMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                                   const MappedJob &job);

} // namespace payops::mapping
