#include "instanceliveness.h"

namespace payops {

QString instanceLiveSql(const QString &alias)
{
    const QString column = alias.isEmpty() ? QString() : alias + QLatin1Char('.');
    return QStringLiteral(
               "(%1stopped_at IS NULL AND %1last_seen_at >= NOW(3) - INTERVAL %2 SECOND)")
        .arg(column)
        .arg(kInstanceAliveSeconds);
}

} // namespace payops
