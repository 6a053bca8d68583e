#pragma once

#include <QObject>
#include <QSettings>
#include <QString>

#include <array>
#include <memory>

namespace payops::console {

// The console's settings, one object for the whole console: a page reads a value when it
// needs it and follows changed(), so what the settings dialog accepts reaches every page at
// once, without the window knowing which page uses what. Each setting's key, default, range
// and wording are written once, in the table in consolesettings.cpp. Kept with QSettings
// under the application's identity; lives on the UI thread (a job for a worker takes the
// values it needs, never the object).
class ConsoleSettings final : public QObject
{
    Q_OBJECT

public:
    enum Key { RefreshSeconds, PointsPerYuan, InspectionMinutes, StaleSeconds, NUM_KEYS };

    // One row of the table.
    struct Spec
    {
        Key key;
        const char *name; // its key in the file is "console/<name>"
        int defaultValue;
        int minimum;
        int maximum;
        const char *label; // the settings dialog's wording, in the context "payops::SettingsDialog"
        const char *suffix; // (both untranslated)
    };
    using Values = std::array<int, NUM_KEYS>;

    static const Spec &spec(Key key);
    static QString fileKey(Key key);
    static ConsoleSettings &instance();
    ~ConsoleSettings() override;
    Q_DISABLE_COPY_MOVE(ConsoleSettings)

    int value(Key key) const { return m_values.at(key); }
    const Values &values() const { return m_values; }
    // Holds each value to its range and saves them; one changed() when any differs, emitted
    // once all are in place, so a page never sees half of a change.
    void setValues(const Values &values);
    void setValue(Key key, int value);

    // Refresh interval of the overview, the instances page and the backlog's summary.
    int refreshSeconds() const { return value(RefreshSeconds); }
    // Cash value of points when counting money at risk and compensating.
    int pointsPerYuan() const { return value(PointsPerYuan); }
    // Minutes between the console's own runs of the inspection (stored like payops inspect's);
    // 0 is off.
    int inspectionMinutes() const { return value(InspectionMinutes); }
    // Seconds a replica the console reads from (--read-db) may be behind before its figures
    // are called stale.
    int staleSeconds() const { return value(StaleSeconds); }

Q_SIGNALS:
    void changed();

private:
    ConsoleSettings();

    Values m_values{};
};

// The console's settings file, ~/.config/payops/console.conf on Linux. Named explicitly: the
// binaries set no organisation name (it would move their shared data directory), and Qt's
// default would file the settings under "Unknown Organization".
std::unique_ptr<QSettings> openConsoleSettings();

// The console's language: "" follows the system, otherwise a code of availableLanguages()
// (log/translation.h). Outside the table above, which holds numbers. Read once by main()
// before any widget exists, so a change applies at the next start.
QString storedLanguage();
void storeLanguage(const QString &code);

// Money value of a number of points, in fen (integer; fractions of a fen are dropped).
qint64 pointsToFen(qint64 points, qint64 pointsPerYuan);

} // namespace payops::console
