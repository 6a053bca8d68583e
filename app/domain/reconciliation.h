#pragma once

#include <QCoreApplication>
#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <array>
#include <optional>

namespace payops {

// What reconciling a platform statement by pay_no finds. "With us" is a payment we applied: a
// pay_callback_log row whose order is paid by it (orders.pay_no is its pay_no, the order PAID,
// REFUNDING or REFUNDED).
enum class FindingKind {
    MissingOurs,       // 漏单: the platform took a payment (SUCCESS line) that is not with us
    MissingPlatform,   // 多单: a payment with us, of the statement's channel and period, the platform does not list
    AmountMismatch,    // listed and with us, for another amount
    StatusMismatch,    // the platform's status (REFUND when it lists a refund) is not our order's
    DuplicatePlatform, // a pay_no on more than one payment line; one finding per line after the first
    DoublePayment,     // the customer paid an order twice: this pay_no was refused order_already_paid, a refund is owed
};
inline constexpr int kFindingKinds = 6;

// "missing_ours", "missing_platform", ... as stored and printed.
QString findingKindName(FindingKind kind);

struct ReconciliationFinding
{
    FindingKind kind = FindingKind::MissingOurs;
    QByteArray payNo;
    std::optional<qint64> orderId;           // ours, else the order number the platform gives
    std::optional<qint64> platformAmountFen; // none for 多单
    std::optional<qint64> ourAmountFen;      // none when we have no payment under this pay_no
    std::optional<qint64> lineNo;            // none for 多单
    QString platformStatus;                  // the line's status, when a line is involved
    QString ourStatus;                       // the order's status for a status mismatch, else the callback's
};

struct Reconciliation
{
    Q_DECLARE_TR_FUNCTIONS(payops::Reconciliation)

public:
    qint64 runId = 0;
    qint64 statementId = 0;
    // False when the statement declares no period and none of its lines has a time: 多单
    // cannot be looked for.
    bool periodKnown = true;
    QList<ReconciliationFinding> findings; // by kind, then line or pay_no
    std::array<qint64, kFindingKinds> counts{};

    qint64 count(FindingKind kind) const { return counts[static_cast<int>(kind)]; }
    bool clean() const { return findings.isEmpty(); }
};

// Reconciles a stored statement against the payments as they are now, in a handful of
// set-based statements (joins on pay_no, a range of pay_callback_log's (channel,
// platform_paid_at) index for 多单) read in one snapshot without locking a row, and stores the
// run and its findings (reconciliation_run, reconciliation_result). Throws db::Error.
Reconciliation reconcileStatement(const QSqlDatabase &db, qint64 statementId);

} // namespace payops
