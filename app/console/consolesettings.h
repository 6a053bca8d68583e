#pragma once

#include <QString>

namespace payops::console {

// The console's own settings, kept with QSettings under the application's identity.
struct ConsoleSettings
{
    int refreshSeconds = 5;       // overview and instances refresh interval
    qint64 pointsPerYuan = 100;   // cash value of points when counting money at risk
    int instanceAliveSeconds = 5; // a heartbeat older than this makes an instance stale

    static ConsoleSettings load();
    void save() const;

    // Money value of a number of points, in fen (integer; fractions of a fen are dropped).
    qint64 pointsToFen(qint64 points) const { return pointsPerYuan > 0 ? points * 100 / pointsPerYuan : 0; }
};

// 12345 -> "123.45"
QString formatYuan(qint64 fen);

} // namespace payops::console
