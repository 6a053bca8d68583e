#pragma once

#include <QHash>
#include <QList>
#include <QMap>
#include <QSqlDatabase>
#include <QString>

namespace payops::console {

// One kind of transition attempt, as order_state_log records it.
struct TransitionCount
{
    QString from;
    QString to;
    bool accepted = false;
    QString reason;
    qint64 count = 0;
};

// What happened to orders in the last windowSeconds: orders created and transition attempts.
struct RecentActivity
{
    qint64 windowSeconds = 0;
    qint64 ordersCreated = 0;
    QList<TransitionCount> transitions; // sorted by from, to, accepted, reason
    qint64 rowsRead = 0; // by the advance that made this: what is new, and a constant

    // Accepted transitions into `state` (PENDING: the orders created).
    qint64 entered(const QString &state) const;
    // Rejected attempts from `from` to `to`, such as PAID->PAID: repeated callbacks refused.
    qint64 refused(const QString &from, const QString &to) const;
};

// The console's counts of recent activity, kept in memory and brought up to date by reading
// only what was written since the last advance: the overview and the state machine ask every
// few seconds, and counting a window of the tables each time would cost the window's rows on
// every refresh (at 500 callbacks a second, 1.8 million for an hour).
//
// Transitions are read by primary key above the last id seen. An id below it that was not
// there yet (its transaction committed after a later one) is a hole, read again on each
// advance for kLateSeconds, then given up (a rolled-back insert leaves a hole for good).
// Orders are read by creation time from kLookbackSeconds before the previous read, and told
// apart by id: merchant order ids need not grow with time.
//
// Counts are per minute, so the window's edge moves a minute at a time. Lives on one thread
// (a page's worker). advance() throws db::Error; the next advance goes on from the last
// statement that succeeded (a first read cut short starts again).
class ActivityTally
{
public:
    static constexpr int kLateSeconds = 60;
    static constexpr int kLookbackSeconds = 3;

    explicit ActivityTally(qint64 windowSeconds);

    qint64 windowSeconds() const { return m_windowSeconds; }
    // A wider window is read again from the start on the next advance; a narrower one drops
    // what falls outside it.
    void setWindowSeconds(qint64 seconds);

    RecentActivity advance(const QSqlDatabase &db);

private:
    struct Hole
    {
        qint64 first;
        qint64 last;
        qint64 seenAt; // server seconds
    };

    qint64 readTransitions(const QSqlDatabase &db, qint64 now);
    qint64 readHoles(const QSqlDatabase &db, qint64 now);
    qint64 readOrders(const QSqlDatabase &db, qint64 now);
    void countTransition(qint64 minute, const QString &key);
    void prune(qint64 now);

    qint64 m_windowSeconds;
    qint64 m_loadedWindow = 0; // the window the counts were first read for; 0: not read yet
    qint64 m_lastLogId = 0;
    QList<Hole> m_holes;
    QMap<qint64, QHash<QString, qint64>> m_transitionsByMinute;
    qint64 m_ordersReadAt = 0; // server time of the last read of orders
    QHash<qint64, qint64>
        m_recentOrders; // id -> created: counted orders the next read may meet again
    QMap<qint64, qint64> m_ordersByMinute;
};

} // namespace payops::console
