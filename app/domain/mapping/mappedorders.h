#pragma once

#include "domain/mapping/mapping.h"
#include "domain/statement/reconciliation.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <optional>

namespace payops::mapping {

// The team's orders and payments as payops reads them: states by payops's names, money in fen.
// Plain reads for the console and the command line; each throws db::Error.

// SQL: `column` (already qualified and quoted) in fen. Yuan is a DECIMAL with two places, so
// times 100 is exact: never through floating point.
QString fenExpression(const QString &column, Unit unit);

// SQL: payops's name of the state in `column` (qualified and quoted), or the raw value, as
// text, when no state names it.
QString stateNameExpression(const QSqlDatabase &db, const OrdersMapping &orders,
                            const QString &column);

// Reconciliation's side on the team's tables: their [payments] and orders, or, without
// [payments], payops's callback log in the DSN's database beside their orders. An order's
// first payment (by paid_at, then pay_no) is the one that paid it; a later one for the same
// order is a double payment.
PaymentSide mappedPaymentSide(const QSqlDatabase &db, const Mapping &mapping);
// The side a reconciliation compares with: mappedPaymentSide() when `mapping` is given, else
// payops's own payments and orders.
PaymentSide paymentSide(const QSqlDatabase &db, const std::optional<Mapping> &mapping);

struct MappedStateCount
{
    QString state;      // payops's name, or the raw value when no state names it
    bool named = false; // false: a value the mapping does not name
    qint64 orders = 0;
};

// Orders by state, created at or after `since` (every order when it is invalid): one GROUP BY
// on the created_at index, so that a periodic refresh over a recent window costs what that
// window holds. Named states come in the mapping's order, each even at 0; raw values after.
// Returns std::nullopt when `cancel` was set before the count.
std::optional<QList<MappedStateCount>> mappedStateCounts(const QSqlDatabase &db,
                                                         const Mapping &mapping,
                                                         const QDateTime &since = {},
                                                         const std::atomic<bool> *cancel = nullptr);

struct MappedOrder
{
    qint64 id = 0;
    qint64 user = 0;
    qint64 amountFen = 0;
    QString state; // as mappedStateCounts names it
    bool stateNamed = false;
    QDateTime createdAt;
    QDateTime paidAt; // invalid when not mapped or not paid
};

struct MappedPayment
{
    QByteArray payNo;
    qint64 amountFen = 0;
    QString channel;
    QDateTime paidAt;
    QString status; // the callback log's status; "PAID" for a row of [payments]
};

// One row of a side effect's table for the order, and what payops did to it.
struct MappedSideEffectRow
{
    QString sideEffect; // its name in the mapping
    qint64 id = 0;
    QStringList key;  // the key columns' values, in the mapping's order
    qint64 value = 0; // fen, or points
    bool points = false;
    QDateTime createdAt;
    bool live = false;
    bool used = false;
    QString compensated; // "FREEZE" or "REVERSE" from mapped_compensation, else empty
};

struct MappedCallback
{
    qint64 id = 0;
    QByteArray payNo;
    qint64 amountFen = 0;
    QString status;
    QString reason;
    QDateTime createdAt;
};

struct MappedTrace
{
    qint64 id = 0;
    QByteArray payNo;
    QString instance;
    QString outcome;
    int httpStatus = 0;
    QDateTime receivedAt;
};

struct MappedOrderEvidence
{
    bool found = false;
    MappedOrder order;
    // From [payments], or payops's callback log when the mapping has none.
    QList<MappedPayment> payments;
    QList<MappedSideEffectRow> sideEffects; // by side effect, then id
    // What payops's own tables hold for this order id. When they hold nothing (payops never saw
    // its callbacks), the payments above are what the team's tables say happened.
    QList<MappedCallback> callbacks;
    QList<MappedTrace> traces;
};

// Everything about one order on the team's tables and payops's own, read by the order's
// indexes. Throws db::Error.
MappedOrderEvidence loadMappedOrderEvidence(const QSqlDatabase &db, const Mapping &mapping,
                                            qint64 orderId);

} // namespace payops::mapping
