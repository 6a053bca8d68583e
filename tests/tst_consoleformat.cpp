#include "console/consolesettings.h"
#include "console/orderevidence.h"
#include "console/sqltime.h"
#include "testmain.h"

#include <QTimeZone>

using namespace payops::console;

class TestConsoleFormat final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsServerTimesToTheMicrosecond()
    {
        const qint64 ms = QDateTime(QDate(2026, 12, 2), QTime(9, 0, 0, 123), QTimeZone::utc()).toMSecsSinceEpoch();
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00.123456")), ms * 1000 + 456);
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00.123")), ms * 1000);
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00")), (ms - 123) * 1000);
        QCOMPARE(microsFromSql(QStringLiteral("1970-01-01 00:00:01")), qint64(1'000'000));
        QCOMPARE(microsFromSql(QVariant()), qint64(0));
        QCOMPARE(microsFromSql(QStringLiteral("garbage")), qint64(0));
        QCOMPARE(microsFromSql(QStringLiteral("2026-13-02 09:00:00")), qint64(0));
        QCOMPARE(displayTime(ms * 1000 + 456), QStringLiteral("2026-12-02 09:00:00.123"));
    }

    void formatsMoneyAndGaps()
    {
        QCOMPARE(formatYuan(76800), QStringLiteral("768.00"));
        QCOMPARE(formatYuan(5), QStringLiteral("0.05"));
        QCOMPARE(formatYuan(-1234), QStringLiteral("-12.34"));
        QCOMPARE(ConsoleSettings::spec(ConsoleSettings::PointsPerYuan).defaultValue, 100);
        QCOMPARE(pointsToFen(100, 100), qint64(100)); // 100 points = 1 yuan
        QCOMPARE(pointsToFen(100, 50), qint64(200));
        QCOMPARE(formatGap(45000), QStringLiteral("45.000 ms"));
        QCOMPARE(formatGap(1500), QStringLiteral("1.500 ms"));
        QCOMPARE(formatGap(qint64(7200) * 1'000'000), QStringLiteral("2 h 0 min"));
        QCOMPARE(formatOffset(41500, 0), QStringLiteral("+41.500 ms"));
        QCOMPARE(formatOffset(0, 1000), QStringLiteral("-1.000 ms"));
    }
};

PAYOPS_TEST_MAIN_CORE(TestConsoleFormat)
#include "tst_consoleformat.moc"
