#pragma once

#include <QDateTime>
#include <QString>
#include <QVariant>

namespace payops::console {

// Times travel as text between payops and the server (select CAST(column AS CHAR)):
// DATETIME(6) keeps microseconds that QDateTime would round to the millisecond, carrying
// 03.9996 into second 04, and text is never shifted by the client's time zone. Every payops
// session runs in UTC, so the text is UTC.

// Microseconds since the epoch from 'YYYY-MM-DD HH:MM:SS[.ffffff]'; 0 for NULL or garbage.
qint64 microsFromSql(const QVariant &value);
// The UTC text the server compares against a DATETIME column.
QString sqlTimeText(const QDateTime &utc);

// How far back the console looks. seconds == 0 means everything.
struct TimeWindow
{
    qint64 seconds = 0;
    bool isAll() const { return seconds <= 0; }
    // The lower bound as SQL text, relative to now.
    QString fromText() const
    {
        return sqlTimeText(QDateTime::currentDateTimeUtc().addSecs(-seconds));
    }
};

} // namespace payops::console
