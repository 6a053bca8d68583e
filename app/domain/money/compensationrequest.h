#pragma once

#include "compensation.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <optional>

namespace payops {

// What a request for the team's own tables records beside its orders (docs/mapping.md): it
// is approved only through a mapping file with the same SHA-256, which plans it again.
struct MappedRequest
{
    QString sha256;                 // the mapping file's, hex
    QStringList sideEffects;        // "name: database.table", as the mapping named them
    qint64 fenPerHundredPoints = 0; // the points' value the amount was counted at
};

// Four eyes: a compensation that would take what an account compensated alone over the
// window above the threshold waits as a request until another operator approves it. Who
// asked and who decided are the database's own names (triggers of migrations 0005 and 0014):
// the connection (USER()) and the authenticated account (CURRENT_USER()). The database
// refuses a decision by the requester's user name, from whatever host it connects.
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
    QString requestedBy;      // USER() of the request: user name and the host it came from
    QString requestedAccount; // the authenticated account, e.g. op3@%
    bool byThisUser = false;  // made under the user name of the connection that loaded it
    QDateTime requestedAt;    // UTC
    QString decidedBy;
    QString decidedAccount;
    QDateTime decidedAt;                 // UTC; invalid while pending
    std::optional<MappedRequest> mapped; // set: a compensation through a mapping
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
// The same for compensations through a mapping (mapped_compensation, docs/mapping.md); the
// amount is the fen of yuan and fen side effects, points rows count as actions only.
QList<CompensationBatch> loadMappedCompensationBatches(const QSqlDatabase &db, int limit = 50);

// payops_meta 'four_eyes_threshold_fen'; 0 or missing: no compensation needs a second operator.
qint64 fourEyesThresholdFen(const QSqlDatabase &db);
// What the connection's user name compensated alone (under no approved request) over the
// window, payops_meta 'four_eyes_window_hours'. Throws db::Error.
qint64 soloCompensatedFen(const QSqlDatabase &db);
// The threshold holds for what one user does alone over the window, not for one run: the
// run that takes the account above it needs a second operator (the database refuses it too).
inline bool needsSecondOperator(const CompensationPlan &plan, qint64 thresholdFen, qint64 soloFen)
{
    return thresholdFen > 0 && soloFen + plan.moneyFen > thresholdFen;
}

// Files the plan as a pending request and returns its id. Throws db::Error.
qint64 requestCompensation(const QSqlDatabase &db, const CompensationPlan &plan,
                           const CompensationScope &scope, const QString &reason,
                           const QString &ticket);

// The same for a compensation through a mapping: `frozen` and `reversed` rows of the team's
// tables for `amountFen`, the scope's orders (or everything). Throws db::Error.
qint64 requestMappedCompensation(const QSqlDatabase &db, const MappedRequest &mapped,
                                 const CompensationScope &scope, int frozen, int reversed,
                                 qint64 amountFen, const QString &reason, const QString &ticket);

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
bool planFitsRequest(qint64 plannedFen, const CompensationRequest &request);

// The steps every approval shares, whatever plans the scope (payops's own tables or a
// mapping). Why request `id` cannot be approved now (missing, or neither pending nor approved
// and carried on), or empty:
QString refusalToApprove(const std::optional<CompensationRequest> &request, qint64 id);
// Then, with the scope planned as it is now for `plannedFen`: refused unless it fits the
// amount asked; a pending request is approved, unless someone else decided it first. Returns
// the refusal, empty when the plan may run. Throws db::Error.
QString approvePlanned(const QSqlDatabase &db, const CompensationRequest &request,
                       qint64 plannedFen);

// Plans the request's scope as it is now and approves it, unless it is no longer pending
// or the plan does not fit the amount asked (then nothing changes and `refusal` says
// why). An APPROVED request whose run stopped or failed is carried on: its approval stands,
// and the plan holds only what is still to do. The caller carries the plan out with
// executeCompensation and then calls markRequestExecuted; runCompensation does all of it.
// Throws db::Error, among others when the approver is the requester.
Approval approveCompensationRequest(const QSqlDatabase &db, qint64 id,
                                    const CompensationSettings &settings);
// Returns false when the request was no longer pending. Throws db::Error.
bool rejectCompensationRequest(const QSqlDatabase &db, qint64 id);
void markRequestExecuted(const QSqlDatabase &db, qint64 id);

} // namespace payops
