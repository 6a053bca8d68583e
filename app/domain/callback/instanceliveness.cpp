#include "instanceliveness.h"

namespace payops {

QString instanceAliveSecondsSql()
{
    // A scalar subquery: read once per statement, whatever the number of rows it judges.
    return QStringLiteral("COALESCE((SELECT CAST(value AS UNSIGNED) FROM payops_meta "
                          "WHERE name = 'instance_alive_seconds' AND value REGEXP '^[0-9]{1,4}$' "
                          "AND CAST(value AS UNSIGNED) BETWEEN 1 AND 3600), %1)")
        .arg(kInstanceAliveSeconds);
}

QString instanceLiveSql(const QString &alias)
{
    const QString column = alias.isEmpty() ? QString() : alias + QLatin1Char('.');
    return QStringLiteral(
               "(%1stopped_at IS NULL AND %1last_seen_at >= NOW(3) - INTERVAL %2 SECOND)")
        .arg(column, instanceAliveSecondsSql());
}

} // namespace payops
