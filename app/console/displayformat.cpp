#include "displayformat.h"

#include <QDateTime>
#include <QLocale>
#include <QTimeZone>

namespace payops::console {

namespace {

QString twoDigits(const QLocale &locale, quint64 value)
{
    const QString digits = locale.toString(value);
    return digits.size() < 2 ? locale.zeroDigit() + digits : digits;
}

QString unsignedYuan(const QLocale &locale, quint64 fen)
{
    return locale.toString(fen / 100) + locale.decimalPoint() + twoDigits(locale, fen % 100);
}

// |fen| without overflow, also for the smallest qint64.
quint64 magnitude(qint64 fen)
{
    return fen < 0 ? quint64(0) - quint64(fen) : quint64(fen);
}

QString dateFormat(const QLocale &locale)
{
    if (locale.language() == QLocale::C)
        return QStringLiteral("yyyy-MM-dd");
    QString format = locale.dateFormat(QLocale::ShortFormat);
    if (!format.contains(QLatin1String("yyyy")))
        format.replace(QLatin1String("yy"), QLatin1String("yyyy"));
    return format;
}

} // namespace

QString formatYuan(qint64 fen)
{
    const QLocale locale;
    const QString text = unsignedYuan(locale, magnitude(fen));
    return fen < 0 ? locale.negativeSign() + text : text;
}

QString formatMoney(qint64 fen)
{
    const QLocale locale;
    const QString text = QStringLiteral("¥") + unsignedYuan(locale, magnitude(fen));
    return fen < 0 ? locale.negativeSign() + text : text;
}

QString displayTime(qint64 micros)
{
    if (micros == 0)
        return {};
    const QLocale locale;
    const QDateTime moment = QDateTime::fromMSecsSinceEpoch(micros / 1000, QTimeZone::utc());
    return locale.toString(moment, dateFormat(locale) + QStringLiteral(" HH:mm:ss.zzz"));
}

} // namespace payops::console
