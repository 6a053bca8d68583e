#include "sqltime.h"

#include <QTimeZone>

namespace payops::console {

qint64 microsFromSql(const QVariant &value)
{
    if (value.isNull())
        return 0;
    const QString text = value.toString();
    const QDateTime seconds = QDateTime::fromString(text.left(19), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    if (!seconds.isValid())
        return 0;
    const QDateTime utc(seconds.date(), seconds.time(), QTimeZone::utc());
    qint64 fraction = 0;
    if (text.size() > 20 && text.at(19) == QLatin1Char('.')) {
        const QString digits = text.mid(20, 6).leftJustified(6, QLatin1Char('0'));
        fraction = digits.toLongLong();
    }
    return utc.toMSecsSinceEpoch() * 1000 + fraction;
}

QString sqlTimeText(const QDateTime &utc)
{
    return utc.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

QString displayTime(qint64 micros)
{
    if (micros == 0)
        return {};
    return QDateTime::fromMSecsSinceEpoch(micros / 1000, QTimeZone::utc())
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

} // namespace payops::console
