#pragma once

#include "sqltime.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QVariantList>

namespace payops::console {

// Which orders a click on the state machine asks for.
struct OrderSelection
{
    enum class Kind { None, State, Edge };
    Kind kind = Kind::None;
    QString state; // Kind::State
    QString from;  // Kind::Edge
    QString to;
    bool rejected = false;
    TimeWindow window; // Kind::Edge: attempts within this window

    QString describe() const;
};

struct OrderRow
{
    qint64 id = 0;
    qint64 userId = 0;
    QString status;
    qint64 amountFen = 0;
    QByteArray payNo; // VARBINARY; shown as UTF-8
    qint64 createdMicros = 0;
    qint64 paidMicros = 0;
};

// The one reader of order rows, for the list and the evidence alike: `SELECT <the columns of
// OrderRow> FROM orders o` followed by `condition` (a WHERE clause over `o`, an ORDER BY, a
// LIMIT), with `binds` for its placeholders. Throws db::Error.
QList<OrderRow> readOrderRows(const QSqlDatabase &db, const QString &condition,
                              const QVariantList &binds);

// Keyset paging by order id, lowest first: the list never needs to know how many there are.
// Throws db::Error.
QList<OrderRow> loadOrderPage(const QSqlDatabase &db, const OrderSelection &selection,
                              qint64 afterId, int limit);

} // namespace payops::console
