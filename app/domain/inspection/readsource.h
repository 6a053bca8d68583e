#pragma once

#include <QCoreApplication>
#include <QJsonObject>
#include <QMap>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace payops {

// A MariaDB GTID position ("0-1-42,1-2-7"): per replication domain, the sequence number of
// the last transaction. Sequence numbers grow within a domain whichever server wrote them, so
// the difference of two positions is a count of transactions.
struct GtidPosition
{
    QMap<quint32, quint64> sequenceByDomain;

    static GtidPosition parse(const QString &text);
    // Transactions `ahead` has that this one has not: per domain, the difference where it is
    // ahead, summed.
    qint64 behind(const GtidPosition &ahead) const;
};

// The replica side of a read connection: its GTID position and, when the account may read
// SHOW SLAVE STATUS, how far its applier is behind in seconds.
struct ReplicaSide
{
    Q_DECLARE_TR_FUNCTIONS(payops::ReplicaSide)

public:
    QString position; // @@gtid_current_pos
    std::optional<qint64> secondsBehind;
    // Why secondsBehind is unknown: replication stopped, not a replica, or the grant the
    // account lacks to read it.
    QString secondsUnknown;
};

// Where the console's and the CLI's reads come from when they are given a replica
// (--read-db), and how stale it is: a replica the primary is ahead of shows figures that are
// no longer true, and an operator deciding on them has to know.
struct ReadSource
{
    Q_DECLARE_TR_FUNCTIONS(payops::ReadSource)

public:
    QString dsn;             // the read connection's display string
    QString primaryPosition; // @@gtid_binlog_pos of the primary; empty without one
    ReplicaSide replica;
    std::optional<qint64> transactionsBehind; // unknown without a primary to compare with
    int staleAfterSeconds = 30;

    // More than staleAfterSeconds behind, or behind in transactions while the seconds are
    // unknown (replication stopped): the figures read there are not today's.
    bool stale() const;
    // One line for a report or a banner: "reading from mysql://…: 12 transaction(s) behind,
    // 4 s behind".
    QString describe() const;
    // The few words a status bar has room for: "replica: 12 transaction(s) behind", and
    // "— stale" past the threshold.
    QString summary() const;
    // What `payops inspect --json` prints as read_source.
    QJsonObject toJson() const;
};

// The primary's position; cheap (a variable), any account may read it.
QString readPrimaryPosition(const QSqlDatabase &primary);
// Whether the replica has applied every transaction of `position` (a primary's
// readPrimaryPosition()), waiting up to `timeoutSeconds` with MASTER_GTID_WAIT when it has not
// yet; 0 only looks. Needs no grant beyond connecting. A server that is not a replica, or a
// replica whose receiving stopped, has not, unless it already holds the position. Throws
// db::Error.
bool awaitPosition(const QSqlDatabase &replica, const QString &position, int timeoutSeconds);
// The replica's position and its applier's delay. Throws db::Error when the connection fails;
// a SHOW SLAVE STATUS the account may not run only leaves the seconds unknown, and says why.
ReplicaSide readReplicaSide(const QSqlDatabase &replica);
// The primary's position first, then the replica's: a replica that moves on between the two
// reads is then shown a little behind at worst, never ahead.
ReadSource measureReadSource(const QSqlDatabase &replica, const QSqlDatabase *primary,
                             int staleAfterSeconds);
// Without a primary's position the transactions behind stay unknown.
ReadSource combineReadSource(const QString &dsn, const std::optional<QString> &primaryPosition,
                             const ReplicaSide &replica, int staleAfterSeconds);

} // namespace payops
