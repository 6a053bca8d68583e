// The duplicate watch's arithmetic, from figures as the watch table holds them: what the
// overview, the duplicates page and `payops inspect` add up and value, without a server.
#include "domain/money/duplicates/doublepayments.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "domain/money/duplicates/duplicatewatch.h"
#include "testmain.h"

using namespace payops;

namespace {

// Two coupon values and one points value, as the watch keeps a row per (kind, unit).
DuplicateWatchFigures incident()
{
    DuplicateWatchFigures figures;
    figures.units = {
        {CouponBit, 1000, 3, 4, 1}, // 3 groups of a 10.00 yuan coupon, 4 extra copies, 1 superseded
        {CouponBit, 500, 2, 2, 0},  // 2 groups of a 5.00 yuan coupon, 2 extra copies
        {PointsBit, 100, 5, 6, 2},  // 5 groups of 100 points, 6 extra copies, 2 superseded
    };
    figures.openOrders = 5;
    figures.scanState = QStringLiteral("DONE");
    return figures;
}

} // namespace

class TestDuplicateArithmetic : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sumsPerKind()
    {
        const DuplicateWatchFigures figures = incident();
        QCOMPARE(figures.groups(CouponBit), qint64(5));
        QCOMPARE(figures.groups(PointsBit), qint64(5));
        QCOMPARE(figures.extraCopies(CouponBit), qint64(6));
        QCOMPARE(figures.extraCopies(PointsBit), qint64(6));
        QCOMPARE(figures.superseded(), qint64(3)); // both kinds
        QVERIFY(!figures.isEmpty());
        QVERIFY(DuplicateWatchFigures().isEmpty());
    }

    // Only the extra copies are money: the first copy of each group was owed.
    void couponMoneyIsExtraCopiesTimesFaceValue()
    {
        QCOMPARE(incident().couponFen(), qint64(4 * 1000 + 2 * 500));
    }

    // Each copy is valued as the duplicates page values it, points * 100 DIV pointsPerYuan,
    // and then multiplied: the rounding is per copy, so 6 copies of 100 points at 7 points a
    // yuan are 6 * 1428 fen, not 600 * 100 / 7 = 8571.
    void pointMoneyRoundsPerCopy()
    {
        const DuplicateWatchFigures figures = incident();
        QCOMPARE(figures.pointFen(100), qint64(6 * 100));
        QCOMPARE(figures.pointFen(50), qint64(6 * 200));
        QCOMPARE(figures.pointFen(7), qint64(6 * 1428));
        QCOMPARE(figures.pointFen(1), qint64(6 * 10000));
        // A cash value not set (or nonsense) values points at nothing rather than dividing by it.
        QCOMPARE(figures.pointFen(0), qint64(0));
        QCOMPARE(figures.pointFen(-5), qint64(0));
    }

    void percentScanned_data()
    {
        QTest::addColumn<QString>("state");
        QTest::addColumn<qint64>("start");
        QTest::addColumn<qint64>("cursor");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<int>("percent");
        QTest::newRow("not started")
            << QStringLiteral("NEW") << qint64(1) << qint64(1) << qint64(100) << 0;
        QTest::newRow("done") << QStringLiteral("DONE") << qint64(1) << qint64(50) << qint64(100)
                              << 100;
        QTest::newRow("half") << QStringLiteral("SCANNING") << qint64(1) << qint64(51)
                              << qint64(100) << 50;
        QTest::newRow("rounds down")
            << QStringLiteral("SCANNING") << qint64(1) << qint64(3) << qint64(3) << 66;
        // The cursor at the end is not done until the pass says so.
        QTest::newRow("never 100 before done")
            << QStringLiteral("SCANNING") << qint64(1) << qint64(101) << qint64(100) << 99;
        QTest::newRow("empty range")
            << QStringLiteral("SCANNING") << qint64(10) << qint64(10) << qint64(9) << 0;
        QTest::newRow("one order, not yet read")
            << QStringLiteral("SCANNING") << qint64(7) << qint64(7) << qint64(7) << 0;
    }

    void percentScanned()
    {
        QFETCH(QString, state);
        QFETCH(qint64, start);
        QFETCH(qint64, cursor);
        QFETCH(qint64, end);
        QFETCH(int, percent);
        DuplicateWatchFigures figures;
        figures.scanState = state;
        figures.scanStart = start;
        figures.scanCursor = cursor;
        figures.scanEnd = end;
        QCOMPARE(figures.percentScanned(), percent);
        QCOMPARE(figures.complete(), state == QLatin1String("DONE"));
    }

    // What `payops inspect` and the migrations print comes from the same figures.
    void liveCountAndItsSentence()
    {
        const LiveDuplicateCount count = incident().liveCount({1001, 1002});
        QCOMPARE(count.couponGroups, qint64(5));
        QCOMPARE(count.couponExtraRows, qint64(6));
        QCOMPARE(count.pointGroups, qint64(5));
        QCOMPARE(count.pointExtraRows, qint64(6));
        QCOMPARE(
            count.describe(),
            QStringLiteral(
                "5 duplicate coupon group(s) (6 extra row(s)) in user_coupon by (order_id, "
                "coupon_template_id); 5 duplicate points group(s) (6 extra row(s)) in point_log by "
                "(order_id, point_type); e.g. order(s) 1001, 1002"));
        QCOMPARE(LiveDuplicateCount().describe(), QStringLiteral("no live duplicates"));
        QVERIFY(LiveDuplicateCount().isEmpty());
    }

    void refundsOwedInYuan()
    {
        DoublePayments payments;
        QCOMPARE(payments.describe(), QStringLiteral("no order paid twice by the customer"));
        payments.orders = 2;
        payments.callbacks = 3;
        payments.refundOwedFen = 19801; // 198.01 yuan: the fen survive
        payments.sampleOrderIds = {1001, 1002};
        QCOMPARE(payments.describe(),
                 QStringLiteral(
                     "2 order(s) paid twice by the customer (3 refused payment(s), 198.01 yuan to "
                     "refund), e.g. orders 1001, 1002"));
        payments.refundOwedFen = 5; // 0.05, not 0.5
        QVERIFY2(payments.describe().contains(QStringLiteral("0.05 yuan")),
                 qPrintable(payments.describe()));
    }
};

PAYOPS_TEST_MAIN_CORE(TestDuplicateArithmetic)
#include "tst_duplicatearithmetic.moc"
