#pragma once

#include "compensation.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace payops {

// Four eyes: a compensation worth more than the threshold waits as a request until another
// operator account approves it. Who asked and who decided are the database's own account
// names (triggers of migration 0005), and the database refuses an approval by the requester.
struct CompensationRequest
{
    qint64 id = 0;
    QString status; // PENDING, APPROVED, REJECTED, EXECUTED
    CompensationScope scope;
    int coupons = 0;
    int writeOffs = 0;
    int pointsRows = 0;
    qint64 amountFen = 0;
    QString reason;
    QString ticket;
    QString requestedBy;
    QDateTime requestedAt; // UTC
    QString decidedBy;
    QDateTime decidedAt;   // UTC; invalid while pending
};

// One run of executeCompensation, as its rows in `compensation` tell it.
struct CompensationBatch
{
    QString batchId;
    QDateTime at; // UTC, of its first action
    QString by;
    QString reason;
    QString ticket;
    int actions = 0;
    qint64 amountFen = 0;
};
// The newest batches first. Throws db::Error.
QList<CompensationBatch> loadCompensationBatches(const QSqlDatabase &db, int limit = 50);

// payops_meta 'four_eyes_threshold_fen'; 0 or missing: no compensation needs a second operator.
qint64 fourEyesThresholdFen(const QSqlDatabase &db);
inline bool needsSecondOperator(const CompensationPlan &plan, qint64 thresholdFen)
{
    return thresholdFen > 0 && plan.moneyFen > thresholdFen;
}

// Files the plan as a pending request and returns its id. Throws db::Error.
qint64 requestCompensation(const QSqlDatabase &db, const CompensationPlan &plan, const CompensationScope &scope,
                           const QString &reason, const QString &ticket);

// The newest requests first. Throws db::Error.
QList<CompensationRequest> loadCompensationRequests(const QSqlDatabase &db, int limit = 200);
std::optional<CompensationRequest> loadCompensationRequest(const QSqlDatabase &db, qint64 id);

struct Approval
{
    CompensationRequest request;
    CompensationPlan plan; // what to carry out now, planned after the approval
    QString refusal;       // why nothing was approved; empty when approved
};

// Whether a plan may run under the request. A first approval carries out exactly the amount
// asked: duplicates that grew, or shrank because some were compensated meanwhile, mean the
// approver would pass something nobody asked for. A run carried on after a stop holds only
// what is left of it, so there it may be less, never more.
bool planFitsRequest(const CompensationPlan &plan, const CompensationRequest &request);

// Plans the request's scope as it is now and approves it, unless it is no longer pending
// or the plan does not fit the amount asked (then nothing changes and `refusal` says
// why). An APPROVED request whose run stopped or failed is carried on: its approval stands,
// and the plan holds only what is still to do. The caller carries the plan out with
// executeCompensation and then calls markRequestExecuted; runCompensation does all of it.
// Throws db::Error, among others when the approver is the requester.
Approval approveCompensationRequest(const QSqlDatabase &db, qint64 id, const CompensationSettings &settings);
// Returns false when the request was no longer pending. Throws db::Error.
bool rejectCompensationRequest(const QSqlDatabase &db, qint64 id);
void markRequestExecuted(const QSqlDatabase &db, qint64 id);

} // namespace payops
