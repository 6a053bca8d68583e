#include "sqltime.h"

#include <QTimeZone>

namespace payops::console {

qint64 microsFromSql(const QVariant &value)
{
    // Parsed by hand: QDateTime::fromString() costs microseconds per call, which a scan of
    // a hundred thousand rows turns into seconds.
    if (value.isNull())
        return 0;
    const QString text = value.toString();
    if (text.size() < 19)
        return 0;
    const auto number = [&text](int from, int length) {
        int n = 0;
        for (int i = from; i < from + length; ++i) {
            const int digit = text.at(i).unicode() - u'0';
            if (digit < 0 || digit > 9)
                return -1;
            n = n * 10 + digit;
        }
        return n;
    };
    const QDate date(number(0, 4), number(5, 2), number(8, 2));
    const int hour = number(11, 2);
    const int minute = number(14, 2);
    const int second = number(17, 2);
    if (!date.isValid() || hour < 0 || minute < 0 || second < 0)
        return 0;
    qint64 fraction = 0;
    if (text.size() > 20 && text.at(19) == QLatin1Char('.')) {
        const int digits = int(qMin<qsizetype>(6, text.size() - 20));
        fraction = number(20, digits);
        for (int i = digits; i < 6; ++i)
            fraction *= 10;
    }
    constexpr qint64 unixEpochJulianDay = 2440588;
    const qint64 seconds =
        (date.toJulianDay() - unixEpochJulianDay) * 86400 + hour * 3600 + minute * 60 + second;
    return seconds * 1'000'000 + fraction;
}

QString sqlTimeText(const QDateTime &utc)
{
    return utc.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

} // namespace payops::console
