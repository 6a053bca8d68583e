#include "consolesettings.h"

#include <QSettings>

namespace payops::console {

std::unique_ptr<QSettings> openConsoleSettings()
{
    return std::make_unique<QSettings>(QSettings::NativeFormat, QSettings::UserScope, QStringLiteral("payops"),
                                       QStringLiteral("console"));
}

ConsoleSettings ConsoleSettings::load()
{
    const auto store = openConsoleSettings();
    QSettings &settings = *store;
    ConsoleSettings result;
    result.refreshSeconds = qBound(1, settings.value(QStringLiteral("console/refreshSeconds"), 5).toInt(), 3600);
    result.pointsPerYuan = qMax<qint64>(1, settings.value(QStringLiteral("console/pointsPerYuan"), 100).toLongLong());
    result.instanceAliveSeconds = qBound(1, settings.value(QStringLiteral("console/instanceAliveSeconds"), 5).toInt(), 3600);
    return result;
}

void ConsoleSettings::save() const
{
    const auto store = openConsoleSettings();
    QSettings &settings = *store;
    settings.setValue(QStringLiteral("console/refreshSeconds"), refreshSeconds);
    settings.setValue(QStringLiteral("console/pointsPerYuan"), pointsPerYuan);
    settings.setValue(QStringLiteral("console/instanceAliveSeconds"), instanceAliveSeconds);
}

QString formatYuan(qint64 fen)
{
    const qint64 magnitude = fen < 0 ? -fen : fen;
    return QStringLiteral("%1%2.%3")
        .arg(fen < 0 ? QStringLiteral("-") : QString())
        .arg(magnitude / 100)
        .arg(magnitude % 100, 2, 10, QLatin1Char('0'));
}

} // namespace payops::console
