#pragma once

#include <QHash>
#include <QList>
#include <QMap>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <functional>

namespace payops {

// Read-past-a-watermark with late ids, shared by the duplicate watch on payops's own tables
// (watchfeed.cpp) and the one on a team's mapped tables (domain/mapping/mappedwatch.cpp): a
// table is read in primary-key ranges past its watermark, and the ids it skipped are kept as
// gaps (a transaction may commit an id lower than one already seen) and read again until no
// transaction open when they were seen is still open, or they are kWatchLateSeconds old.

struct WatchGap
{
    qint64 first = 0;
    qint64 last = 0;
    QString seenAt;        // empty: seen by this refresh
    bool lastLook = false; // no transaction can fill it any more, or it is kWatchLateSeconds old
};

struct WatchSourceState
{
    qint64 seen = 0;
    QList<WatchGap> gaps; // by first id
};

// A row read: its id, and the order and kinds (a bit mask; 0: none) it asks to recount.
struct WatchSourceRow
{
    qint64 id = 0;
    qint64 orderId = 0;
    int kinds = 0;
};

// Orders whose groups are to be counted again, each with the kinds to count.
using WatchOrders = QMap<qint64, int>;

// One table the watch reads, and where its gaps are kept.
struct WatchSource
{
    QString name;       // for the log
    QString idColumn;   // as SQL, e.g. a quoted column
    QString gapTable;   // duplicate_watch_gap or mapped_watch_gap
    QString gapKey;     // SQL condition on gapTable selecting this source's gaps
    QString gapColumns; // gapTable's columns naming the source, and their values as SQL
    QString gapValues;
    QString watermarkUpdate; // a statement with %1 for the new watermark
    // The rows matching a condition on idColumn (ORDER BY and LIMIT may follow it).
    std::function<QList<WatchSourceRow>(const QString &where)> rows;
};

// The moment (UTC, as text) before which every gap is settled, or null when the account may
// not tell (no PROCESS privilege, or MySQL). Read once per refresh.
QVariant watchSettledBefore(const QSqlDatabase &db);

// The source's gaps, each marked for its last look against `settled`.
QList<WatchGap> readWatchGaps(const QSqlDatabase &db, const WatchSource &source,
                              const QVariant &settled);
// The gaps of several sources kept in one gap table, in one statement: those `gapKey` selects,
// by the value (as text) of `sourceOf`, an SQL expression over the gap table's columns.
QHash<QString, QList<WatchGap>> readWatchGapsOf(const QSqlDatabase &db, const QString &gapTable,
                                                const QString &gapKey, const QString &sourceOf,
                                                const QVariant &settled);

// Reads the missing ids again; what is found is added to `orders` and leaves the gap, and a
// gap on its last look is given up after it. The statements on the gap table that must land
// with the recount are appended to `updates`.
void readLateWatchRows(const WatchSource &source, WatchSourceState &state, WatchOrders &orders,
                       QStringList &updates, qint64 &rowsRead);

// Reads past the watermark, notes the ids it skipped as gaps, and moves the watermark (in
// `updates`). Returns whether a full batch came back (there may be more).
bool readNewWatchRows(const WatchSource &source, WatchSourceState &state, int batchRows,
                      WatchOrders &orders, QStringList &updates, qint64 &rowsRead);

} // namespace payops
