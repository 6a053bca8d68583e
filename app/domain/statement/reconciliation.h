#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QList>
#include <QMap>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <array>
#include <functional>
#include <optional>

namespace payops {

// What reconciling a platform statement by pay_no finds. "With us" is a payment we applied: a
// pay_callback_log row whose order is paid by it (orders.pay_no is its pay_no, the order PAID,
// REFUNDING or REFUNDED).
enum class FindingKind {
    MissingOurs,     // 漏单: the platform took a payment (SUCCESS line) that is not with us
    MissingPlatform, // 多单: a payment with us, of the statement's channel and period, the platform
                     // does not list
    AmountMismatch,    // listed and with us, for another amount
    StatusMismatch,    // the platform's status (REFUND when it lists a refund) is not our order's
    DuplicatePlatform, // a pay_no on more than one payment line: one finding, at its first line,
                       // with the count
    DoublePayment, // the customer paid an order twice: this pay_no was refused order_already_paid,
                   // a refund is owed
};
inline constexpr int kFindingKinds = 6;

// "missing_ours", "missing_platform", ... as stored and printed. A pay_no gives at most one
// finding of each kind, whatever the number of its lines: a pay_no listed 500,000 times is one
// duplicate_platform (counting them) and at most one missing_ours, amount_mismatch or
// double_payment, at the first line that shows it.
QString findingKindName(FindingKind kind);

struct ReconciliationFinding
{
    FindingKind kind = FindingKind::MissingOurs;
    QByteArray payNo;
    std::optional<qint64> orderId; // ours, else the order number the platform gives
    // orderId in decimal; without one, the merchant's order number as the platform's line gives
    // it (a gateway's team numbers its orders as it likes); empty when neither.
    QByteArray orderNo;
    std::optional<qint64> platformAmountFen; // none for 多单
    std::optional<qint64> ourAmountFen;      // none when we have no payment under this pay_no
    std::optional<qint64> lineNo;            // none for 多单
    std::optional<qint64> listed; // duplicate_platform: how many payment lines name the pay_no
    QString platformStatus;       // the line's status, when a line is involved
    QString ourStatus;   // the order's status for a status mismatch and 多单, else the callback's
    QString orderStatus; // read back only: the status of the order it names, as it is now
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
    // The findings are stored, not held: readStoredFindings() reads them back.
    std::array<qint64, kFindingKinds> counts{};

    qint64 count(FindingKind kind) const { return counts[static_cast<int>(kind)]; }
    qint64 total() const;
    bool clean() const { return total() == 0; }
};

// "Our side" of a reconciliation: where the payments and orders a statement is matched against
// are read. Each is a table or a derived table the queries alias as p and o, with payops's own
// columns: payments (pay_no, order_id, amount_fen in fen, channel, platform_paid_at, id, status,
// reason; status 'REJECTED' with reason 'order_already_paid' for an order's second payment) and
// orders (id, pay_no: the payment that paid it, status: payops's state name). One matching
// serves payops's own tables and a team's, mapped (domain/mapping/mappedorders.h).
struct PaymentSide
{
    QString payments;
    QString orders;
    QVariant firstKey; // below every payments.id: where the 多单 pages start
    // False when the payments name no channel (their channel is ''): the 多单 search then reads
    // every payment of the period, whatever channel the statement is of.
    bool channelKnown = true;
    // A statement's channel ("wechat") as the payments store it, when not under that name: a
    // team's [payments.channels], e.g. {"wechat": {"wechatpay"}}. The 多单 search reads each.
    QMap<QString, QStringList> channelValues;
    // The payments' column that names their order (o.id), and how a stored finding
    // (reconciliation_result r) finds its order: by its order id, or where the orders are a
    // gateway's payments themselves, by its pay_no.
    QString orderLink = QStringLiteral("order_id");
    QString findingOrder = QStringLiteral("o.id = r.order_id");
    // A payment's order number as a finding shows it, over p.
    QString orderNo = QStringLiteral("CAST(p.order_id AS CHAR)");
};

// payops's own callback log and orders.
PaymentSide ownPaymentSide();
// A gateway's: it holds no orders, only the team's payments as the gateways took them
// (pay_callback_log, gateway = 1). A payment is with us once the team's handler gave its final
// answer (FORWARDED): PAID, or REFUNDED once a refund's outcome was forwarded too; one still
// held or failing is not, so the statement's line for it is missing_ours. Order numbers are
// the platform's out_trade_no.
PaymentSide gatewayPaymentSide();
// The side of payops's own tables: the gateway's when the latest callback came through a
// gateway, else payops's own.
PaymentSide ownOrGatewayPaymentSide(const QSqlDatabase &db);

// Reconciles a stored statement against the payments as they are now, in set-based statements
// (joins on pay_no, a range of (channel, platform_paid_at) for 多单: pay_callback_log's index,
// or the mapped payments' paid_at)
// read in one snapshot without locking a row, and stores the run and its findings
// (reconciliation_run, reconciliation_result). Everything is read and written a page at a
// time: memory stays flat whatever the statement's size or the number of findings. Throws
// db::Error.
Reconciliation reconcileStatement(const QSqlDatabase &db, qint64 statementId,
                                  const PaymentSide &side = ownPaymentSide());

// Called with each finding; false stops the reading.
using FindingSink = std::function<bool(const ReconciliationFinding &finding)>;

// Reads the stored findings of a run back, by kind, then in the order they were found (line or
// pay_no, 多单 by channel and time), a page at a time: nothing collects them. The statuses are
// not stored with a finding but read as they are now: platformStatus is its line's, ourStatus
// as for a finding found, orderStatus that of the order it names. Throws db::Error.
void readStoredFindings(const QSqlDatabase &db, qint64 runId, const FindingSink &sink);
// The same, with the statuses read from `side`: the one the run was reconciled against.
void readStoredFindings(const QSqlDatabase &db, const PaymentSide &side, qint64 runId,
                        const FindingSink &sink);

} // namespace payops
