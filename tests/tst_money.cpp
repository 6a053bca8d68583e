// Yuan and fen: the platforms' amounts read exactly, and written back the same way.
#include "domain/money/money.h"
#include "testmain.h"

#include <limits>

class TestMoney : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void yuanToFen_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("fen"); // -1 for a refusal; no test below uses -1 fen
        QTest::newRow("one fen") << QStringLiteral("0.01") << qint64(1);
        QTest::newRow("ten fen") << QStringLiteral("0.10") << qint64(10);
        QTest::newRow("largest order") << QStringLiteral("99999999.99") << qint64(9999999999);
        QTest::newRow("a billion yuan") << QStringLiteral("1000000000.00") << qint64(100000000000);
        QTest::newRow("a billion yuan, whole")
            << QStringLiteral("1000000000") << qint64(100000000000);
        QTest::newRow("refund") << QStringLiteral("-12.30") << qint64(-1230);
        QTest::newRow("whole yuan") << QStringLiteral("12") << qint64(1200);
        QTest::newRow("one decimal") << QStringLiteral("12.3") << qint64(1230);
        QTest::newRow("zero") << QStringLiteral("0.00") << qint64(0);
        QTest::newRow("largest fen")
            << QStringLiteral("92233720368547758.07") << qint64(9223372036854775807);
        QTest::newRow("empty") << QString() << qint64(-1);
        QTest::newRow("blank") << QStringLiteral(" ") << qint64(-1);
        QTest::newRow("three decimals") << QStringLiteral("1.234") << qint64(-1);
        QTest::newRow("three decimals, zero") << QStringLiteral("0.010") << qint64(-1);
        QTest::newRow("half a fen") << QStringLiteral("0.005") << qint64(-1);
        QTest::newRow("exponent") << QStringLiteral("1e3") << qint64(-1);
        QTest::newRow("letters") << QStringLiteral("abc") << qint64(-1);
        QTest::newRow("thousands separator") << QStringLiteral("1,000.00") << qint64(-1);
        QTest::newRow("overflow") << QStringLiteral("92233720368547758.08") << qint64(-1);
        QTest::newRow("overflow by digits")
            << QStringLiteral("123456789012345678901") << qint64(-1);
        QTest::newRow("two signs") << QStringLiteral("--1") << qint64(-1);
        QTest::newRow("plus sign") << QStringLiteral("+1.00") << qint64(-1);
        QTest::newRow("sign alone") << QStringLiteral("-") << qint64(-1);
        QTest::newRow("no integer part") << QStringLiteral(".50") << qint64(-1);
        QTest::newRow("point without decimals") << QStringLiteral("12.") << qint64(-1);
        QTest::newRow("padded") << QStringLiteral(" 1.00") << qint64(-1);
        QTest::newRow("full-width digit") << QStringLiteral("１.00") << qint64(-1);
    }

    void yuanToFen()
    {
        QFETCH(QString, text);
        QFETCH(qint64, fen);
        const std::optional<qint64> result = payops::yuanToFen(text);
        if (fen == -1)
            QVERIFY2(!result,
                     qPrintable(QStringLiteral("%1 read as %2").arg(text).arg(result.value_or(0))));
        else
            QCOMPARE(result, std::optional<qint64>(fen));
    }

    void fenToYuan()
    {
        QCOMPARE(payops::fenToYuan(0), QStringLiteral("0.00"));
        QCOMPARE(payops::fenToYuan(1), QStringLiteral("0.01"));
        QCOMPARE(payops::fenToYuan(10), QStringLiteral("0.10"));
        QCOMPARE(payops::fenToYuan(100000000000), QStringLiteral("1000000000.00"));
        QCOMPARE(payops::fenToYuan(-1230), QStringLiteral("-12.30"));
        QCOMPARE(payops::fenToYuan(9999999999), QStringLiteral("99999999.99"));
        QCOMPARE(payops::fenToYuan(std::numeric_limits<qint64>::min()),
                 QStringLiteral("-92233720368547758.08"));
        for (const qint64 fen : {qint64(0), qint64(5), qint64(-1), qint64(-99), qint64(123456),
                                 qint64(100000000000), std::numeric_limits<qint64>::max()})
            QCOMPARE(payops::yuanToFen(payops::fenToYuan(fen)), std::optional<qint64>(fen));
    }
};

PAYOPS_TEST_MAIN_CORE(TestMoney)
#include "tst_money.moc"
