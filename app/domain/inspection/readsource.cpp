#include "readsource.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QJsonValue>
#include <QSqlRecord>

namespace payops {

GtidPosition GtidPosition::parse(const QString &text)
{
    GtidPosition position;
    for (const QString &gtid : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList parts = gtid.trimmed().split(QLatin1Char('-'));
        if (parts.size() != 3)
            continue;
        quint64 &sequence = position.sequenceByDomain[parts.at(0).toUInt()];
        sequence = std::max(sequence, parts.at(2).toULongLong());
    }
    return position;
}

qint64 GtidPosition::behind(const GtidPosition &ahead) const
{
    qint64 transactions = 0;
    for (auto it = ahead.sequenceByDomain.cbegin(); it != ahead.sequenceByDomain.cend(); ++it) {
        const quint64 here = sequenceByDomain.value(it.key(), 0);
        if (it.value() > here)
            transactions += qint64(it.value() - here);
    }
    return transactions;
}

bool ReadSource::stale() const
{
    if (replica.secondsBehind)
        return *replica.secondsBehind > staleAfterSeconds;
    return transactionsBehind.value_or(0) > 0;
}

QString ReadSource::describe() const
{
    QStringList parts;
    if (transactionsBehind)
        parts << tr("%n transaction(s) behind", nullptr, int(*transactionsBehind));
    else
        parts << tr("no primary to compare with");
    parts << (replica.secondsBehind ? tr("%1 s behind").arg(*replica.secondsBehind)
                                    : tr("seconds behind unknown: %1").arg(replica.secondsUnknown));
    const QString line = tr("reading from %1: %2").arg(dsn, parts.join(QStringLiteral(", ")));
    return stale() ? tr("%1 — stale (more than %2 s)").arg(line, QString::number(staleAfterSeconds))
                   : line;
}

QString ReadSource::summary() const
{
    const QString behind = transactionsBehind
                               ? tr("%n transaction(s) behind", nullptr, int(*transactionsBehind))
                               : tr("no primary to compare with");
    const QString line = tr("replica: %1").arg(behind);
    return stale() ? tr("%1 — stale").arg(line) : line;
}

QJsonObject ReadSource::toJson() const
{
    const auto optional = [](const std::optional<qint64> &value) {
        return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
    };
    QJsonObject json{{QStringLiteral("dsn"), dsn},
                     {QStringLiteral("replica_gtid"), replica.position},
                     {QStringLiteral("primary_gtid"), primaryPosition.isEmpty()
                                                          ? QJsonValue(QJsonValue::Null)
                                                          : QJsonValue(primaryPosition)},
                     {QStringLiteral("transactions_behind"), optional(transactionsBehind)},
                     {QStringLiteral("seconds_behind"), optional(replica.secondsBehind)},
                     {QStringLiteral("stale_after_seconds"), staleAfterSeconds},
                     {QStringLiteral("stale"), stale()}};
    if (!replica.secondsBehind)
        json[QStringLiteral("seconds_unknown")] = replica.secondsUnknown;
    return json;
}

QString readPrimaryPosition(const QSqlDatabase &primary)
{
    return db::scalar(primary, QStringLiteral("SELECT @@gtid_binlog_pos")).toString();
}

bool awaitPosition(const QSqlDatabase &replica, const QString &position, int timeoutSeconds)
{
    // @@gtid_current_pos first: MASTER_GTID_WAIT compares with gtid_slave_pos alone, so on the
    // primary itself, or a promoted replica, it would wait its whole time for what is there.
    const QString current =
        db::scalar(replica, QStringLiteral("SELECT @@gtid_current_pos")).toString();
    if (GtidPosition::parse(current).behind(GtidPosition::parse(position)) == 0)
        return true;
    if (timeoutSeconds <= 0)
        return false;
    // 0 once applied, -1 on the timeout (a negative timeout would wait for ever).
    const QVariant waited = db::scalar(replica, QStringLiteral("SELECT MASTER_GTID_WAIT(?, ?)"),
                                       {position, timeoutSeconds});
    return !waited.isNull() && waited.toInt() == 0;
}

ReplicaSide readReplicaSide(const QSqlDatabase &replica)
{
    ReplicaSide side;
    side.position = db::scalar(replica, QStringLiteral("SELECT @@gtid_current_pos")).toString();
    try {
        QSqlQuery status = db::exec(replica, QStringLiteral("SHOW SLAVE STATUS"));
        if (!status.next()) {
            side.secondsUnknown = ReplicaSide::tr("the server is not a replica");
            return side;
        }
        const QVariant seconds =
            status.value(status.record().indexOf(QStringLiteral("Seconds_Behind_Master")));
        if (seconds.isNull())
            side.secondsUnknown = ReplicaSide::tr("replication is stopped");
        else
            side.secondsBehind = seconds.toLongLong();
    } catch (const db::Error &error) {
        if (!error.isAccessDenied())
            throw;
        side.secondsUnknown = ReplicaSide::tr(
            "the account may not read SHOW SLAVE STATUS (it needs the grant REPLICA MONITOR)");
    }
    return side;
}

ReadSource combineReadSource(const QString &dsn, const std::optional<QString> &primaryPosition,
                             const ReplicaSide &replica, int staleAfterSeconds)
{
    ReadSource source;
    source.dsn = dsn;
    source.primaryPosition = primaryPosition.value_or(QString());
    source.replica = replica;
    source.staleAfterSeconds = staleAfterSeconds;
    if (primaryPosition)
        source.transactionsBehind =
            GtidPosition::parse(replica.position).behind(GtidPosition::parse(*primaryPosition));
    return source;
}

ReadSource measureReadSource(const QSqlDatabase &replica, const QSqlDatabase *primary,
                             int staleAfterSeconds)
{
    std::optional<QString> primaryPosition;
    if (primary)
        primaryPosition = readPrimaryPosition(*primary);
    const std::optional<Dsn> dsn = db::dsnOf(replica);
    return combineReadSource(dsn ? dsn->toDisplayString() : QString(), primaryPosition,
                             readReplicaSide(replica), staleAfterSeconds);
}

} // namespace payops
