#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/orderevidence.h"
#include "console/sqltime.h"
#include "testmain.h"

#include <QLocale>
#include <QTimeZone>

#include <limits>

using namespace payops::console;

class TestConsoleFormat final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsServerTimesToTheMicrosecond()
    {
        const qint64 ms = QDateTime(QDate(2026, 12, 2), QTime(9, 0, 0, 123), QTimeZone::utc())
                              .toMSecsSinceEpoch();
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00.123456")), ms * 1000 + 456);
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00.123")), ms * 1000);
        QCOMPARE(microsFromSql(QStringLiteral("2026-12-02 09:00:00")), (ms - 123) * 1000);
        QCOMPARE(microsFromSql(QStringLiteral("1970-01-01 00:00:01")), qint64(1'000'000));
        QCOMPARE(microsFromSql(QVariant()), qint64(0));
        QCOMPARE(microsFromSql(QStringLiteral("garbage")), qint64(0));
        QCOMPARE(microsFromSql(QStringLiteral("2026-13-02 09:00:00")), qint64(0));
        QCOMPARE(displayTime(ms * 1000 + 456), QStringLiteral("2026-12-02 09:00:00.123"));
    }

    // Screens follow the language's conventions; the C locale (servers, cron, these tests)
    // keeps ISO dates and plain numbers.
    void formatsMoneyAndTimesByLocale()
    {
        const qint64 micros = QDateTime(QDate(2026, 12, 2), QTime(9, 5, 7, 42), QTimeZone::utc())
                                      .toMSecsSinceEpoch() *
                                  1000 +
                              999;
        const struct
        {
            const char *locale;
            QString yuan, money, negativeMoney, time;
        } cases[] = {
            {"C", QStringLiteral("9999999999.99"), QStringLiteral("¥1234.50"),
             QStringLiteral("-¥0.05"), QStringLiteral("2026-12-02 09:05:07.042")},
            {"en_US", QStringLiteral("9,999,999,999.99"), QStringLiteral("¥1,234.50"),
             QStringLiteral("-¥0.05"), QStringLiteral("12/2/2026 09:05:07.042")},
            {"zh_CN", QStringLiteral("9,999,999,999.99"), QStringLiteral("¥1,234.50"),
             QStringLiteral("-¥0.05"), QStringLiteral("2026/12/2 09:05:07.042")},
            {"de_DE", QStringLiteral("9.999.999.999,99"), QStringLiteral("¥1.234,50"),
             QStringLiteral("-¥0,05"), QStringLiteral("02.12.2026 09:05:07.042")},
        };
        for (const auto &c : cases) {
            QLocale::setDefault(QLocale(QString::fromLatin1(c.locale)));
            QCOMPARE(formatYuan(999999999999), c.yuan);
            QCOMPARE(formatMoney(123450), c.money);
            QCOMPARE(formatMoney(-5), c.negativeMoney);
            QCOMPARE(displayTime(micros), c.time);
        }
        QLocale::setDefault(QLocale::c());
        // The smallest qint64 has no positive counterpart; it must not overflow.
        QCOMPARE(formatYuan(std::numeric_limits<qint64>::min()),
                 QStringLiteral("-92233720368547758.08"));
        QCOMPARE(formatYuan(0), QStringLiteral("0.00"));
        QCOMPARE(displayTime(0), QString());
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
