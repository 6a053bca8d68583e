#include "consolesettings.h"

#include "log/translation.h"

#include <QCoreApplication>
#include <QSettings>

namespace payops::console {
namespace {

using Spec = ConsoleSettings::Spec;

// Every setting of the console, once. The settings dialog shows one field per row, in this
// order.
constexpr std::array<Spec, ConsoleSettings::NUM_KEYS> specs{{
    {ConsoleSettings::RefreshSeconds, "refreshSeconds", 5, 1, 3600,
     QT_TRANSLATE_NOOP("payops::SettingsDialog",
                       "Refresh the overview, instances and backlog every"),
     QT_TRANSLATE_NOOP("payops::SettingsDialog", " s")},
    {ConsoleSettings::PointsPerYuan, "pointsPerYuan", 100, 1, 1000000,
     QT_TRANSLATE_NOOP("payops::SettingsDialog", "Cash value of points"),
     QT_TRANSLATE_NOOP("payops::SettingsDialog", " points = ¥1")},
    // Off by default: a console writes inspection_run only when someone asked it to.
    {ConsoleSettings::InspectionMinutes, "inspectionMinutes", 0, 0, 1440,
     QT_TRANSLATE_NOOP("payops::SettingsDialog", "Run the inspection every (0 = off)"),
     QT_TRANSLATE_NOOP("payops::SettingsDialog", " min")},
    {ConsoleSettings::StaleSeconds, "staleSeconds", 30, 1, 86400,
     QT_TRANSLATE_NOOP("payops::SettingsDialog", "Call a replica's figures stale past"),
     QT_TRANSLATE_NOOP("payops::SettingsDialog", " s behind")},
}};

// Each row sits at its key's place, so spec() may index: a row added out of order, or left
// out, does not build.
constexpr bool eachRowAtItsKey()
{
    for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs.at(i).key != ConsoleSettings::Key(i) || !specs.at(i).name ||
            specs.at(i).minimum > specs.at(i).defaultValue ||
            specs.at(i).defaultValue > specs.at(i).maximum)
            return false;
    return true;
}
static_assert(eachRowAtItsKey(),
              "one row per ConsoleSettings::Key, in the enum's order, default within range");

int bounded(ConsoleSettings::Key key, int value)
{
    return qBound(specs.at(key).minimum, value, specs.at(key).maximum);
}

} // namespace

const ConsoleSettings::Spec &ConsoleSettings::spec(Key key)
{
    return specs.at(key);
}

QString ConsoleSettings::fileKey(Key key)
{
    return QStringLiteral("console/") + QLatin1String(specs.at(key).name);
}

ConsoleSettings &ConsoleSettings::instance()
{
    static ConsoleSettings settings;
    return settings;
}

ConsoleSettings::ConsoleSettings()
{
    const auto store = openConsoleSettings();
    for (const Spec &s : specs) {
        bool ok = false;
        const int stored = store->value(fileKey(s.key)).toInt(&ok);
        m_values.at(s.key) = ok ? bounded(s.key, stored) : s.defaultValue; // absent or not a number
    }
}

ConsoleSettings::~ConsoleSettings() = default;

void ConsoleSettings::setValues(const Values &values)
{
    Values next;
    for (const Spec &s : specs)
        next.at(s.key) = bounded(s.key, values.at(s.key));
    if (next == m_values)
        return;
    const auto store = openConsoleSettings();
    for (const Spec &s : specs)
        store->setValue(fileKey(s.key), next.at(s.key));
    m_values = next;
    Q_EMIT changed();
}

void ConsoleSettings::setValue(Key key, int value)
{
    Values next = m_values;
    next.at(key) = value;
    setValues(next);
}

std::unique_ptr<QSettings> openConsoleSettings()
{
    return std::make_unique<QSettings>(QSettings::NativeFormat, QSettings::UserScope,
                                       QStringLiteral("payops"), QStringLiteral("console"));
}

QString storedLanguage()
{
    const QString code =
        openConsoleSettings()->value(QStringLiteral("console/language")).toString();
    // A file edited by hand may name a language payops does not have: follow the system then.
    for (const Language &language : availableLanguages())
        if (language.code == code)
            return code;
    return {};
}

void storeLanguage(const QString &code)
{
    openConsoleSettings()->setValue(QStringLiteral("console/language"), code);
}

qint64 pointsToFen(qint64 points, qint64 pointsPerYuan)
{
    return pointsPerYuan > 0 ? points * 100 / pointsPerYuan : 0;
}

} // namespace payops::console
