#include "activitytally.h"

#include "db/connection.h"

#include <QSqlQuery>
#include <QStringList>

namespace payops::console {

namespace {

constexpr int kChunkRows = 20000;
constexpr int kMaxHoles = 1000;
const QChar kSeparator(0x1f);

QString transitionKey(const QSqlQuery &row) // columns: from, to, accepted, reason
{
    return row.value(0).toString() + kSeparator + row.value(1).toString() + kSeparator +
           (row.value(2).toBool() ? QLatin1Char('1') : QLatin1Char('0')) + kSeparator +
           row.value(3).toString();
}

const QString kTransitionColumns =
    QStringLiteral("from_state, to_state, accepted, reason, UNIX_TIMESTAMP(created_at), id");

} // namespace

qint64 RecentActivity::entered(const QString &state) const
{
    if (state == QLatin1String("PENDING"))
        return ordersCreated;
    qint64 n = 0;
    for (const TransitionCount &t : transitions)
        if (t.accepted && t.to == state)
            n += t.count;
    return n;
}

qint64 RecentActivity::refused(const QString &from, const QString &to) const
{
    qint64 n = 0;
    for (const TransitionCount &t : transitions)
        if (!t.accepted && t.from == from && t.to == to)
            n += t.count;
    return n;
}

ActivityTally::ActivityTally(qint64 windowSeconds)
    : m_windowSeconds(windowSeconds)
{
}

void ActivityTally::setWindowSeconds(qint64 seconds)
{
    m_windowSeconds = seconds;
}

RecentActivity ActivityTally::advance(const QSqlDatabase &db)
{
    if (m_windowSeconds > m_loadedWindow)
        *this = ActivityTally(m_windowSeconds);
    const qint64 now = db::scalar(db, QStringLiteral("SELECT UNIX_TIMESTAMP()")).toLongLong();
    RecentActivity activity;
    activity.windowSeconds = m_windowSeconds;
    try {
        activity.rowsRead = readHoles(db, now) + readTransitions(db, now) + readOrders(db, now);
    } catch (...) {
        if (m_loadedWindow == 0) // a first read cut short starts again, rather than count twice
            *this = ActivityTally(m_windowSeconds);
        throw;
    }
    m_loadedWindow = m_windowSeconds;
    prune(now);

    const qint64 firstMinute = (now - m_windowSeconds) / 60;
    QMap<QString, qint64> totals;
    for (auto minute = m_transitionsByMinute.lowerBound(firstMinute);
         minute != m_transitionsByMinute.cend(); ++minute)
        for (auto it = minute->cbegin(); it != minute->cend(); ++it)
            totals[it.key()] += it.value();
    for (auto it = totals.cbegin(); it != totals.cend(); ++it) {
        const QStringList parts = it.key().split(kSeparator);
        activity.transitions << TransitionCount{parts.value(0), parts.value(1),
                                                parts.value(2) == QLatin1String("1"),
                                                parts.value(3), it.value()};
    }
    for (auto minute = m_ordersByMinute.lowerBound(firstMinute); minute != m_ordersByMinute.cend();
         ++minute)
        activity.ordersCreated += minute.value();
    return activity;
}

// The first read finds where the window starts through the time index, and from there every
// read is a range of the primary key.
qint64 ActivityTally::readTransitions(const QSqlDatabase &db, qint64 now)
{
    if (m_loadedWindow == 0) {
        // The lowest id in the window, not the oldest row's: ids need not follow created_at
        // (rows written later with an earlier time). Rows above it from before the window are
        // read too and fall out with their minute.
        const QVariant first = db::scalar(
            db,
            QStringLiteral(
                "SELECT MIN(id) FROM order_state_log WHERE created_at >= FROM_UNIXTIME(?)"),
            {now - m_windowSeconds});
        m_lastLogId =
            first.isNull()
                ? db::scalar(db, QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM order_state_log"))
                      .toLongLong()
                : first.toLongLong() - 1;
    }
    qint64 read = 0;
    for (;;) {
        QSqlQuery rows = db::exec(
            db,
            QStringLiteral("SELECT %1 FROM order_state_log WHERE id > ? ORDER BY id LIMIT %2")
                .arg(kTransitionColumns, QString::number(kChunkRows)),
            {m_lastLogId});
        int inChunk = 0;
        while (rows.next()) {
            ++inChunk;
            const qint64 id = rows.value(5).toLongLong();
            if (id > m_lastLogId + 1)
                m_holes << Hole{m_lastLogId + 1, id - 1, now};
            m_lastLogId = id;
            countTransition(rows.value(4).toLongLong() / 60, transitionKey(rows));
        }
        read += inChunk;
        if (inChunk < kChunkRows)
            return read;
    }
}

// Holes are read again in one statement of primary-key ranges; an id found there is counted
// and cut out of its hole.
qint64 ActivityTally::readHoles(const QSqlDatabase &db, qint64 now)
{
    QList<Hole> open;
    for (const Hole &hole : std::as_const(m_holes))
        if (now - hole.seenAt <= kLateSeconds)
            open << hole;
    while (open.size() > kMaxHoles)
        open.removeFirst();
    m_holes = open;
    if (m_holes.isEmpty())
        return 0;
    QStringList ranges;
    for (const Hole &hole : std::as_const(m_holes))
        ranges << QStringLiteral("id BETWEEN %1 AND %2")
                      .arg(QString::number(hole.first), QString::number(hole.last));
    QSqlQuery rows =
        db::exec(db, QStringLiteral("SELECT %1 FROM order_state_log WHERE %2 ORDER BY id")
                         .arg(kTransitionColumns, ranges.join(QStringLiteral(" OR "))));
    qint64 read = 0;
    while (rows.next()) {
        ++read;
        const qint64 id = rows.value(5).toLongLong();
        countTransition(rows.value(4).toLongLong() / 60, transitionKey(rows));
        for (int i = 0; i < m_holes.size(); ++i) {
            const Hole hole = m_holes.at(i);
            if (id < hole.first || id > hole.last)
                continue;
            m_holes.removeAt(i);
            if (id < hole.last)
                m_holes.insert(i, Hole{id + 1, hole.last, hole.seenAt});
            if (id > hole.first)
                m_holes.insert(i, Hole{hole.first, id - 1, hole.seenAt});
            break;
        }
    }
    return read;
}

// Orders by creation time through idx_orders_created (the id comes with the index entry),
// from a little before the previous read: one created earlier may commit later. Going from
// the previous read's time, not from the newest order seen, keeps a quiet table (or a bulk
// import long ago) from being read again at every refresh.
qint64 ActivityTally::readOrders(const QSqlDatabase &db, qint64 now)
{
    const qint64 since =
        m_loadedWindow == 0 ? now - m_windowSeconds : m_ordersReadAt - kLookbackSeconds;
    QSqlQuery rows = db::exec(
        db,
        QStringLiteral(
            "SELECT id, UNIX_TIMESTAMP(created_at) FROM orders FORCE INDEX (idx_orders_created) "
            "WHERE created_at >= FROM_UNIXTIME(?)"),
        {since});
    qint64 read = 0;
    QHash<qint64, qint64>
        seen; // what the next read can meet again: created since this one's lookback
    while (rows.next()) {
        ++read;
        const qint64 id = rows.value(0).toLongLong();
        const qint64 created = rows.value(1).toLongLong();
        if (created >= now - kLookbackSeconds)
            seen.insert(id, created);
        if (m_recentOrders.contains(id))
            continue;
        ++m_ordersByMinute[created / 60];
    }
    m_recentOrders = seen;
    m_ordersReadAt = now;
    return read;
}

void ActivityTally::countTransition(qint64 minute, const QString &key)
{
    ++m_transitionsByMinute[minute][key];
}

void ActivityTally::prune(qint64 now)
{
    const qint64 firstMinute = (now - m_loadedWindow) / 60;
    while (!m_transitionsByMinute.isEmpty() && m_transitionsByMinute.firstKey() < firstMinute)
        m_transitionsByMinute.erase(m_transitionsByMinute.begin());
    while (!m_ordersByMinute.isEmpty() && m_ordersByMinute.firstKey() < firstMinute)
        m_ordersByMinute.erase(m_ordersByMinute.begin());
}

} // namespace payops::console
