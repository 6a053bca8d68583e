#pragma once

#include "domain/mapping/mapping.h"
#include "domain/statement/reconciliation.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <optional>
#include <set>
#include <utility>

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
// payops's own payments and orders, or a gateway's payments (ownOrGatewayPaymentSide()).
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

// Orders by state over a moving window of creation time (the console's State machine page),
// kept in memory between advances so that, with [orders] updated_at, a periodic refresh costs
// what changed rather than what the window holds. The first advance reads the window's orders
// once (id, state, created_at, on the created_at index); each later one reads only the orders
// whose updated_at, or created_at, is at or after the previous advance's start less
// kLateSeconds (a transaction that commits late carries the earlier time of its statement; the
// server's oldest open transaction takes it further back when the account may see it), and
// moves each from its old state's count to its new one. Orders created before the window's
// start leave it. Without updated_at, or for a window holding more than `maxOrders` orders
// (each kept costs some 100 bytes), each advance is mappedStateCounts() over the window. Lives
// on one thread (a page's worker). advance() throws db::Error; a first read cut short starts
// again, a later one reads the same changes again.
class MappedStateTally
{
public:
    static constexpr int kLateSeconds = 60;
    static constexpr qint64 kMaxOrders = 1'000'000;

    explicit MappedStateTally(qint64 windowSeconds, qint64 maxOrders = kMaxOrders);

    qint64 windowSeconds() const { return m_windowSeconds; }
    // A wider window is read again from the start on the next advance; a narrower one drops
    // what falls outside it.
    void setWindowSeconds(qint64 seconds);

    // The counts as mappedStateCounts() gives them; std::nullopt when `cancel` was set.
    std::optional<QList<MappedStateCount>> advance(const QSqlDatabase &db, const Mapping &mapping,
                                                   const std::atomic<bool> *cancel = nullptr);
    // Orders the last advance read from the team's table (0 for one GROUP BY).
    qint64 rowsRead() const { return m_rowsRead; }

private:
    struct Order
    {
        qint64 created = 0; // seconds since the epoch
        int value = 0;      // index in m_values
    };

    bool readOrders(const QSqlDatabase &db, const Mapping &mapping, const QString &column,
                    qint64 from, qint64 windowStart, const std::atomic<bool> *cancel,
                    qint64 limit = 0);
    void clear();
    void put(qint64 id, const Order &order);
    void remove(qint64 id);

    qint64 m_windowSeconds;
    qint64 m_maxOrders;
    qint64 m_largeWindow = 0;  // the narrowest window found to hold more than m_maxOrders
    qint64 m_loadedWindow = 0; // the window the orders were first read for; 0: not read yet
    qint64 m_readFrom = 0;     // server seconds: where the next advance reads changes from
    qint64 m_rowsRead = 0;
    QHash<qint64, Order> m_orders;
    std::set<std::pair<qint64, qint64>> m_byCreated; // (created, id): the window's edge
    QStringList m_values;                            // the status column's raw values met
    QList<qint64> m_counts;                          // orders per value of m_values
};

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
