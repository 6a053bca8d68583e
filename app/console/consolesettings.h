#pragma once

#include <QSettings>
#include <QString>

#include <memory>

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

// The console's settings file, ~/.config/payops/console.conf on Linux. Named explicitly: the
// binaries set no organisation name (it would move their shared data directory), and Qt's
// default would file the settings under "Unknown Organization".
std::unique_ptr<QSettings> openConsoleSettings();

// 12345 -> "123.45"
QString formatYuan(qint64 fen);

} // namespace payops::console
