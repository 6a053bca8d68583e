#include "instances.h"

#include "db/connection.h"
#include "domain/callback/instanceliveness.h"
#include "sqltime.h"

#include <QSqlQuery>

namespace payops::console {

InstanceList loadInstances(const QSqlDatabase &db)
{
    InstanceList list;
    QSqlQuery sw =
        db::exec(db, QStringLiteral("SELECT version, mode FROM callback_switch WHERE id = 1"));
    if (sw.next()) {
        list.switchVersion = sw.value(0).toLongLong();
        list.mode = sw.value(1).toString();
    }
    QSqlQuery q =
        db::exec(db, QStringLiteral("SELECT id, host, pid, listen, build_version, handler, "
                                    "CAST(started_at AS CHAR), CAST(last_seen_at AS CHAR), "
                                    "       TIMESTAMPDIFF(SECOND, last_seen_at, UTC_TIMESTAMP(3)), "
                                    "switch_version_applied, mode_applied, "
                                    "       stopped_at IS NOT NULL, %1, mode, upstream, "
                                    "upstream_state, "
                                    "       TIMESTAMPDIFF(SECOND, upstream_checked_at, "
                                    "UTC_TIMESTAMP(3)) "
                                    "FROM callback_instance ORDER BY id")
                         .arg(instanceLiveSql()));
    list.aliveSeconds =
        db::scalar(db, QStringLiteral("SELECT %1").arg(instanceAliveSecondsSql())).toInt();
    while (q.next()) {
        InstanceRow row;
        row.id = q.value(0).toString();
        row.host = q.value(1).toString();
        row.pid = q.value(2).toLongLong();
        row.listen = q.value(3).toString();
        row.buildVersion = q.value(4).toString();
        row.handler = q.value(5).toString();
        row.startedMicros = microsFromSql(q.value(6));
        row.lastSeenMicros = microsFromSql(q.value(7));
        row.secondsSinceSeen = q.value(8).toLongLong();
        row.switchVersionApplied = q.value(9).toLongLong();
        row.modeApplied = q.value(10).toString();
        row.stopped = q.value(11).toBool();
        row.alive = q.value(12).toBool();
        row.mode = q.value(13).toString();
        row.upstream = q.value(14).toString();
        row.upstreamState = q.value(15).toString();
        row.secondsSinceUpstreamCheck = q.value(16).isNull() ? -1 : q.value(16).toLongLong();
        list.rows << row;
    }
    return list;
}

} // namespace payops::console
