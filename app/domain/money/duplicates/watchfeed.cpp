#include "watchfeed.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "duplicatewatch.h"
#include "watchrecount.h"

#include <QCoreApplication>
#include <QHash>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct WatchFeed
{
    Q_DECLARE_TR_FUNCTIONS(payops::WatchFeed)
};

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

struct WatchSource
{
    int id; // duplicate_watch_gap.source
    QString table;
    QString seenColumn; // its watermark in duplicate_watch_state
};

const QList<WatchSource> &watchSources()
{
    static const QList<WatchSource> sources{
        {1, QStringLiteral("user_coupon"), QStringLiteral("coupon_seen_id")},
        {2, QStringLiteral("point_log"), QStringLiteral("point_seen_id")},
        {3, QStringLiteral("compensation"), QStringLiteral("compensation_seen_id")},
    };
    return sources;
}

struct Gap
{
    qint64 first = 0;
    qint64 last = 0;
    QString seenAt;        // empty: seen by this refresh
    bool lastLook = false; // no transaction can fill it any more, or it is kWatchLateSeconds old
};

struct SourceState
{
    qint64 seen = 0;
    QList<Gap> gaps; // by first id
};

struct SourceRow
{
    qint64 id = 0;
    qint64 orderId = 0;
    int kinds = 0;
};

// The rows of a source matching `where`, each with the order and kinds it asks to recount.
QList<SourceRow> readRows(const QSqlDatabase &db, const WatchSource &source, const QString &where)
{
    QList<SourceRow> rows;
    if (source.table != QLatin1String("compensation")) {
        const int kinds = source.table == QLatin1String("user_coupon") ? CouponBit : PointsBit;
        QSqlQuery query = db::exec(
            db, QStringLiteral("SELECT id, order_id FROM %1 WHERE %2").arg(source.table, where));
        while (query.next())
            rows << SourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(), kinds};
        return rows;
    }
    // A compensation supersedes a copy (in the same transaction as its row): the group is
    // counted again to see that copy stop being live.
    QSqlQuery query = db::exec(
        db,
        QStringLiteral("SELECT id, order_id, target_table FROM compensation WHERE %1").arg(where));
    while (query.next()) {
        const QString target = query.value(2).toString();
        const int kinds = target == QLatin1String("user_coupon") ? CouponBit
                          : target == QLatin1String("point_log") ? PointsBit
                                                                 : CouponBit | PointsBit;
        rows << SourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(), kinds};
    }
    return rows;
}

QString gapInsert(const WatchSource &source, const QList<Gap> &gaps)
{
    QStringList rows;
    for (const Gap &gap : gaps) {
        // seenAt is the server's own DATETIME text, digits and separators only.
        const QString seenAt = gap.seenAt.isEmpty() ? QStringLiteral("UTC_TIMESTAMP(3)")
                                                    : QStringLiteral("'%1'").arg(gap.seenAt);
        rows << QStringLiteral("(%1, %2, %3, %4)")
                    .arg(source.id)
                    .arg(gap.first)
                    .arg(gap.last)
                    .arg(seenAt);
    }
    return QStringLiteral(
               "INSERT INTO duplicate_watch_gap (source, first_id, last_id, seen_at) VALUES ") +
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
                        .arg(column)
                        .arg(range.first)
                        .arg(range.second);
        conditions << some.join(QStringLiteral(" OR "));
    }
    return conditions;
}

bool insideGap(const QList<Gap> &gaps, qint64 id) // gaps sorted by first id, disjoint
{
    const auto after =
        std::upper_bound(gaps.cbegin(), gaps.cend(), id,
                         [](qint64 value, const Gap &gap) { return value < gap.first; });
    return after != gaps.cbegin() && id <= std::prev(after)->last;
}

// Reads the missing ids again; what is found is recounted and leaves the gap, and a gap on its
// last look is given up after it.
void readLateRows(const QSqlDatabase &db, const WatchSource &source, SourceState &state,
                  WatchOrders &orders, QStringList &updates, qint64 &rowsRead)
{
    if (state.gaps.isEmpty())
        return;
    QList<IdRange> spans;
    for (const Gap &gap : std::as_const(state.gaps)) {
        if (!spans.isEmpty() && gap.first - spans.last().second <= kSpanIds)
            spans.last().second = gap.last;
        else
            spans << qMakePair(gap.first, gap.last);
    }
    QList<qint64> found;
    for (const QString &where : rangeConditions(QStringLiteral("id"), spans)) {
        for (const SourceRow &row : readRows(db, source, where)) {
            ++rowsRead;
            if (!insideGap(state.gaps,
                           row.id)) // between two gaps: counted when the watermark passed it
                continue;
            orders[row.orderId] |= row.kinds;
            found << row.id;
        }
    }
    std::sort(found.begin(), found.end());
    QList<Gap> kept;
    QList<Gap> pieces;
    // The gap rows to delete, as runs of first ids: state.gaps is every gap the table holds
    // for this source, so a run of neighbours that all leave is one range of the primary key.
    QList<IdRange> leaving;
    bool previousLeft = false;
    for (const Gap &gap : std::as_const(state.gaps)) {
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
                pieces << Gap{next, *at - 1, gap.seenAt, false};
            next = *at + 1;
        }
        if (next <= gap.last)
            pieces << Gap{next, gap.last, gap.seenAt, false};
    }
    for (const QString &where : rangeConditions(QStringLiteral("first_id"), leaving))
        updates << QStringLiteral("DELETE FROM duplicate_watch_gap WHERE source = %1 AND (%2)")
                       .arg(source.id)
                       .arg(where);
    if (!pieces.isEmpty())
        updates << gapInsert(source, pieces);
    state.gaps = kept + pieces;
}

// Reads past the watermark, notes the ids it skipped as gaps, and moves the watermark. Returns
// whether a full batch came back (there may be more).
bool readNewRows(const QSqlDatabase &db, const WatchSource &source, SourceState &state,
                 int batchRows, WatchOrders &orders, QStringList &updates, qint64 &rowsRead)
{
    const QList<SourceRow> rows = readRows(
        db, source, QStringLiteral("id > %1 ORDER BY id LIMIT %2").arg(state.seen).arg(batchRows));
    if (rows.isEmpty())
        return false;
    QList<Gap> fresh;
    qint64 previous = state.seen;
    for (const SourceRow &row : rows) {
        if (row.id > previous + 1)
            fresh << Gap{previous + 1, row.id - 1, QString(), false};
        previous = row.id;
        orders[row.orderId] |= row.kinds;
    }
    rowsRead += rows.size();
    state.seen = previous;
    updates << QStringLiteral("UPDATE duplicate_watch_state SET %1 = %2 WHERE id = 1")
                   .arg(source.seenColumn)
                   .arg(previous);
    if (!fresh.isEmpty()) {
        updates << gapInsert(source, fresh);
        state.gaps << fresh;
    }
    std::sort(state.gaps.begin(), state.gaps.end(),
              [](const Gap &a, const Gap &b) { return a.first < b.first; });
    if (state.gaps.size() > kMaxGaps) {
        const qint64 cut = state.gaps.at(state.gaps.size() - kMaxGaps).first;
        qWarning("duplicate watch: more than %lld ids of %s are missing at once; giving up those "
                 "below %lld "
                 "(with the PROCESS privilege the watch sees which of them a transaction can still "
                 "commit)",
                 static_cast<long long>(kMaxGaps), qPrintable(source.table),
                 static_cast<long long>(cut));
        updates << QStringLiteral(
                       "DELETE FROM duplicate_watch_gap WHERE source = %1 AND first_id < %2")
                       .arg(source.id)
                       .arg(cut);
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
QVariant settledBefore(const QSqlDatabase &db)
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

QHash<int, SourceState> readSourceStates(const QSqlDatabase &db)
{
    const QVariant settled = settledBefore(db);
    QHash<int, SourceState> states;
    QSqlQuery seen =
        db::exec(db, QStringLiteral("SELECT coupon_seen_id, point_seen_id, compensation_seen_id "
                                    "FROM duplicate_watch_state WHERE id = 1"));
    if (!seen.next())
        throw db::Error(
            WatchFeed::tr("the duplicate watch has no state row; run payops migrate again"));
    for (int i = 0; i < 3; ++i)
        states[i + 1].seen = seen.value(i).toLongLong();
    const QString lastLook =
        settled.isNull()
            ? QStringLiteral("seen_at < UTC_TIMESTAMP(3) - INTERVAL %1 SECOND")
            : QStringLiteral("(seen_at < UTC_TIMESTAMP(3) - INTERVAL %1 SECOND OR seen_at < ?)");
    QSqlQuery gaps =
        db::exec(db,
                 QStringLiteral("SELECT source, first_id, last_id, CAST(seen_at AS CHAR), %1 "
                                "FROM duplicate_watch_gap ORDER BY source, first_id")
                     .arg(lastLook.arg(kWatchLateSeconds)),
                 settled.isNull() ? QVariantList() : QVariantList{settled});
    while (gaps.next())
        states[gaps.value(0).toInt()].gaps
            << Gap{gaps.value(1).toLongLong(), gaps.value(2).toLongLong(), gaps.value(3).toString(),
                   gaps.value(4).toBool()};
    return states;
}

} // namespace

WatchFeedResult feedDuplicateWatch(const QSqlDatabase &db, int batchRows,
                                   const std::atomic<bool> *cancel)
{
    WatchFeedResult result;
    QHash<int, SourceState> states = readSourceStates(db);
    for (bool first = true;; first = false) {
        if (cancel && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        WatchOrders orders;
        QStringList updates;
        bool more = false;
        for (const WatchSource &source : watchSources()) {
            SourceState &state = states[source.id];
            if (first)
                readLateRows(db, source, state, orders, updates, result.rowsRead);
            more |= readNewRows(db, source, state, batchRows, orders, updates, result.rowsRead);
        }
        if (!orders.isEmpty() || !updates.isEmpty())
            recountWatchedOrders(db, orders, updates);
        if (!more)
            return result;
    }
}

} // namespace payops
