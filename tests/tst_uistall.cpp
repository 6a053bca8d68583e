#include "db/connection.h"
#include "db/migrator.h"
#include "domain/duplicatecount.h"
#include "models/duplicatemodel.h"
#include "pages/duplicatespage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/busyindicator.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QTimer>

using namespace payops;

// The UI thread must never wait on the database: while the duplicates page scans a table of
// a million rows, a 10 ms timer on the UI thread must keep firing without a gap over 100 ms.
class TestUiStall final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void scanOfAMillionRowsNeverStallsTheUi()
    {
        test::ScratchDatabase scratch;
        {
            db::Connection c(scratch.dsn(), QStringLiteral("t"));
            db::Migrator(c, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
            const QSqlDatabase db = c.database();
            // A million coupons, generated on the server: 500,000 orders with two copies each.
            db::execDirect(db, QStringLiteral("CREATE TABLE seq (n INT NOT NULL PRIMARY KEY)"));
            db::execDirect(db, QStringLiteral(
                "INSERT INTO seq SELECT a.n + 10 * b.n + 100 * c.n FROM "
                "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a, "
                "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b, "
                "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c"));
            db::execDirect(db, QStringLiteral(
                "INSERT INTO user_coupon (user_id, order_id, coupon_template_id, face_value_fen, created_at) "
                "SELECT 1 + MOD(o.n, 997), 1 + o.n, 1, 500, UTC_TIMESTAMP(3) - INTERVAL MOD(o.n, 7200) SECOND "
                "FROM (SELECT a.n * 1000 + b.n AS n FROM seq a CROSS JOIN seq b WHERE a.n < 500) o "
                "CROSS JOIN (SELECT 0 AS copy UNION ALL SELECT 1) c"));
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")).toLongLong(), qint64(1000000));
        }

        QElapsedTimer clock;
        qint64 last = 0;
        qint64 worstGap = 0;
        QTimer probe;
        probe.setInterval(10);
        connect(&probe, &QTimer::timeout, &probe, [&] {
            const qint64 now = clock.elapsed();
            worstGap = qMax(worstGap, now - last);
            last = now;
        });

        DuplicatesPage page(scratch.dsn());
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto *totals = page.findChild<QLabel *>(QStringLiteral("totalsLabel"));
        auto *busy = page.findChild<BusyIndicator *>();
        bool busyShown = false;
        connect(&probe, &QTimer::timeout, &probe, [&] { busyShown = busyShown || busy->isVisible(); });
        // Start measuring, then ask for a fresh scan of everything.
        clock.start();
        probe.start();
        page.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(totals->text().contains(QStringLiteral("500,000 open duplicate groups")), 240000);
        QTRY_VERIFY_WITH_TIMEOUT(!page.model()->isLoading() && page.model()->rowCount() > 0, 60000);
        probe.stop();
        const qint64 scanMs = clock.elapsed();
        qInfo("scan took %lld ms, longest gap between UI timer ticks %lld ms", scanMs, worstGap);
        // A scan too quick to matter would prove nothing about stalls.
        QVERIFY2(scanMs > 300, qPrintable(QStringLiteral("scan took only %1 ms").arg(scanMs)));
        // A scan over half a second shows that it is working, with a way to cancel it.
        QVERIFY(scanMs < 700 || busyShown);
        QVERIFY2(worstGap < 100, qPrintable(QStringLiteral("the UI thread stalled for %1 ms").arg(worstGap)));

        // A scan can be cancelled: the button appears, KILL QUERY ends it on the server, the
        // page says so, and the next scan runs as usual.
        page.refresh();
        auto *cancel = busy->findChild<QPushButton *>(QStringLiteral("cancelButton"));
        QTRY_VERIFY_WITH_TIMEOUT(busy->isVisible(), 20000);
        cancel->click();
        QTRY_VERIFY_WITH_TIMEOUT(totals->text().contains(QStringLiteral("Cancelled")), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!busy->isVisible(), 5000);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestUiStall test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_uistall.moc"
