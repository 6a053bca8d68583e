#include "watchgaps.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "duplicatewatch.h"

#include <QSqlQuery>

#include <algorithm>

namespace payops {
namespace {

// Missing ids a table may have waiting at once; past the bound the oldest are given up. They
// are the ids of transactions open at a refresh, of rollbacks, and ids that INSERT ... SELECT
// reserved and never used (innodb_autoinc_lock_mode 1 takes them in growing blocks: a handler
// issuing two coupons that way leaves one unused id per order). Where the watch may read
// InnoDB's open transactions these wait a second or two (settledBefore); where it may not, at
// a few hundred orders a second the bound is reached within seconds.
constexpr qsizetype kMaxGaps = 2000;
// Id ranges per statement when reading the missing ids again or deleting gaps.
constexpr qsizetype kRangesPerStatement = 200;
// Gaps this close together are read again as one range: on a busy table with a gap every few
// ids, one range over them costs the server less than a range each.
constexpr qint64 kSpanIds = 64;

QString gapInsert(const WatchSource &source, const QList<WatchGap> &gaps)
{
    QStringList rows;
    for (const WatchGap &gap : gaps) {
        // seenAt is the server's own DATETIME text, digits and separators only.
        const QString seenAt = gap.seenAt.isEmpty() ? QStringLiteral("UTC_TIMESTAMP(3)")
                                                    : QStringLiteral("'%1'").arg(gap.seenAt);
        rows << QStringLiteral("(%1, %2, %3, %4)")
                    .arg(source.gapValues, QString::number(gap.first), QString::number(gap.last),
                         seenAt);
    }
    return QStringLiteral("INSERT INTO %1 (%2, first_id, last_id, seen_at) VALUES ")
               .arg(source.gapTable, source.gapColumns) +
           rows.join(QLatin1Char(','));
}

using IdRange = QPair<qint64, qint64>; // first, last

// `column BETWEEN first AND last` for each range, OR'ed, kRangesPerStatement to a condition.
QStringList rangeConditions(const QString &column, const QList<IdRange> &ranges)
{
    QStringList conditions;
    for (qsizetype from = 0; from < ranges.size(); from += kRangesPerStatement) {
        QStringList some;
        for (const IdRange &range : ranges.mid(from, kRangesPerStatement))
            some << QStringLiteral("%1 BETWEEN %2 AND %3")
                        .arg(column, QString::number(range.first), QString::number(range.second));
        conditions << some.join(QStringLiteral(" OR "));
    }
    return conditions;
}

bool insideGap(const QList<WatchGap> &gaps, qint64 id) // gaps sorted by first id, disjoint
{
    const auto after =
        std::upper_bound(gaps.cbegin(), gaps.cend(), id,
                         [](qint64 value, const WatchGap &gap) { return value < gap.first; });
    return after != gaps.cbegin() && id <= std::prev(after)->last;
}

} // namespace

void readLateWatchRows(const WatchSource &source, WatchSourceState &state, WatchOrders &orders,
                       QStringList &updates, qint64 &rowsRead)
{
    if (state.gaps.isEmpty())
        return;
    QList<IdRange> spans;
    for (const WatchGap &gap : std::as_const(state.gaps)) {
        if (!spans.isEmpty() && gap.first - spans.last().second <= kSpanIds)
            spans.last().second = gap.last;
        else
            spans << qMakePair(gap.first, gap.last);
    }
    QList<qint64> found;
    for (const QString &where : rangeConditions(source.idColumn, spans)) {
        for (const WatchSourceRow &row : source.rows(where)) {
            ++rowsRead;
            if (!insideGap(state.gaps,
                           row.id)) // between two gaps: counted when the watermark passed it
                continue;
            if (row.kinds != 0)
                orders[row.orderId] |= row.kinds;
            found << row.id;
        }
    }
    std::sort(found.begin(), found.end());
    QList<WatchGap> kept;
    QList<WatchGap> pieces;
    // The gap rows to delete, as runs of first ids: state.gaps is every gap the table holds
    // for this source, so a run of neighbours that all leave is one range of the primary key.
    QList<IdRange> leaving;
    bool previousLeft = false;
    for (const WatchGap &gap : std::as_const(state.gaps)) {
        auto at = std::lower_bound(found.cbegin(), found.cend(), gap.first);
        const bool changed = at != found.cend() && *at <= gap.last;
        const bool leaves = gap.lastLook || changed;
        if (leaves && previousLeft)
            leaving.last().second = gap.first;
        else if (leaves)
            leaving << qMakePair(gap.first, gap.first);
        previousLeft = leaves;
        if (gap.lastLook)
            continue;
        if (!changed) {
            kept << gap;
            continue;
        }
        qint64 next = gap.first;
        for (; at != found.cend() && *at <= gap.last; ++at) {
            if (*at > next)
                pieces << WatchGap{next, *at - 1, gap.seenAt, false};
            next = *at + 1;
        }
        if (next <= gap.last)
            pieces << WatchGap{next, gap.last, gap.seenAt, false};
    }
    for (const QString &where : rangeConditions(QStringLiteral("first_id"), leaving))
        updates << QStringLiteral("DELETE FROM %1 WHERE %2 AND (%3)")
                       .arg(source.gapTable, source.gapKey, where);
    if (!pieces.isEmpty())
        updates << gapInsert(source, pieces);
    state.gaps = kept + pieces;
}

bool readNewWatchRows(const WatchSource &source, WatchSourceState &state, int batchRows,
                      WatchOrders &orders, QStringList &updates, qint64 &rowsRead)
{
    const QList<WatchSourceRow> rows = source.rows(
        QStringLiteral("%1 > %2 ORDER BY %1 LIMIT %3")
            .arg(source.idColumn, QString::number(state.seen), QString::number(batchRows)));
    if (rows.isEmpty())
        return false;
    QList<WatchGap> fresh;
    qint64 previous = state.seen;
    for (const WatchSourceRow &row : rows) {
        if (row.id > previous + 1)
            fresh << WatchGap{previous + 1, row.id - 1, QString(), false};
        previous = row.id;
        if (row.kinds != 0)
            orders[row.orderId] |= row.kinds;
    }
    rowsRead += rows.size();
    state.seen = previous;
    updates << source.watermarkUpdate.arg(previous);
    if (!fresh.isEmpty()) {
        updates << gapInsert(source, fresh);
        state.gaps << fresh;
    }
    std::sort(state.gaps.begin(), state.gaps.end(),
              [](const WatchGap &a, const WatchGap &b) { return a.first < b.first; });
    if (state.gaps.size() > kMaxGaps) {
        const qint64 cut = state.gaps.at(state.gaps.size() - kMaxGaps).first;
        qWarning("duplicate watch: more than %lld ids of %s are missing at once; giving up those "
                 "below %lld "
                 "(with the PROCESS privilege the watch sees which of them a transaction can still "
                 "commit)",
                 static_cast<long long>(kMaxGaps), qPrintable(source.name),
                 static_cast<long long>(cut));
        updates << QStringLiteral("DELETE FROM %1 WHERE %2 AND first_id < %3")
                       .arg(source.gapTable, source.gapKey, QString::number(cut));
        state.gaps = state.gaps.mid(state.gaps.size() - kMaxGaps);
    }
    return rows.size() >= batchRows;
}

// A moment (UTC) no transaction InnoDB has open now started before: a gap seen before it
// belongs to transactions that have ended, so one more read finds all it will ever hold.
// information_schema.INNODB_TRX needs the PROCESS privilege, and SET STATEMENT is MariaDB's;
// without either this is null and gaps wait kWatchLateSeconds. trx_started is the server's
// local time in whole seconds (read against NOW() in the same zone; the truncation only makes
// the moment earlier), and the table is a cache up to 0.1 s old, hence the half-second margin.
QVariant watchSettledBefore(const QSqlDatabase &db)
{
    try {
        return db::scalar(
            db,
            QStringLiteral(
                "SET STATEMENT time_zone = 'SYSTEM' FOR SELECT CAST(UTC_TIMESTAMP(3) - INTERVAL "
                "GREATEST(COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(trx_started), NOW(6)), 0), "
                "500000) MICROSECOND AS CHAR) "
                "FROM information_schema.INNODB_TRX"));
    } catch (const db::Error &error) {
        if (!error.isAccessDenied() && error.serverCode() != 1064) // 1064: MySQL's parser
            throw;
        return QVariant();
    }
}

QList<WatchGap> readWatchGaps(const QSqlDatabase &db, const WatchSource &source,
                              const QVariant &settled)
{
    return readWatchGapsOf(db, source.gapTable, source.gapKey, QStringLiteral("''"), settled)
        .value(QString());
}

QHash<QString, QList<WatchGap>> readWatchGapsOf(const QSqlDatabase &db, const QString &gapTable,
                                                const QString &gapKey, const QString &sourceOf,
                                                const QVariant &settled)
{
    // `settled` as a literal, not a bind: a prepared statement costs the server two more
    // round trips, on every refresh.
    const QString lastLook =
        settled.isNull()
            ? QStringLiteral("seen_at < UTC_TIMESTAMP(3) - INTERVAL %1 SECOND")
                  .arg(kWatchLateSeconds)
            : QStringLiteral("(seen_at < UTC_TIMESTAMP(3) - INTERVAL %1 SECOND OR seen_at < %2)")
                  .arg(QString::number(kWatchLateSeconds), db::literal(db, settled.toString()));
    QSqlQuery query = db::exec(
        db, QStringLiteral("SELECT %1, first_id, last_id, CAST(seen_at AS CHAR), %2 FROM %3 "
                           "WHERE %4 ORDER BY first_id")
                .arg(sourceOf, lastLook, gapTable, gapKey));
    QHash<QString, QList<WatchGap>> gaps;
    while (query.next())
        gaps[query.value(0).toString()]
            << WatchGap{query.value(1).toLongLong(), query.value(2).toLongLong(),
                        query.value(3).toString(), query.value(4).toBool()};
    return gaps;
}

} // namespace payops
