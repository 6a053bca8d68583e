#include "callbackfixture.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "domain/callback/callbackswitch.h"
#include "mainwindow.h"
#include "models/backlogmodel.h"
#include "pages/backlogpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/tile.h"

#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>

using namespace payops;

namespace {

// What the endpoint leaves for a callback that arrived before its order, written directly:
// one UNMATCHED SUCCESS callback for each of `count` orders from `firstOrderId`.
void unmatchedCallbacks(const Dsn &dsn, qint64 firstOrderId, int count)
{
    db::Connection connection(dsn, QStringLiteral("record"));
    const QSqlDatabase db = connection.database();
    db::Transaction transaction(db);
    for (int i = 0; i < count; ++i) {
        const qint64 order = firstOrderId + i;
        const QByteArray payNo = "LATE-" + QByteArray::number(order);
        db::exec(db,
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                "amount_fen, currency, channel, trade_status, "
                                "status, reason, instance) VALUES (?, ?, ?, 9900, 'CNY', 'wechat', "
                                "'SUCCESS', 'UNMATCHED', "
                                "'unknown_order', 'inst-late')"),
                 {payNo, order, test::callbackBody(payNo, order, 9900)});
    }
    transaction.commit();
}

void addOrders(const Dsn &dsn, qint64 firstOrderId, int count)
{
    db::Connection connection(dsn, QStringLiteral("order-writer"));
    test::addPendingOrders(connection.database(), count, firstOrderId);
}

// 2001 arrived and is pending, 2002 arrived but was paid by another channel, 2003 is missing.
void threeLateCallbacks(const Dsn &dsn)
{
    unmatchedCallbacks(dsn, 2001, 3);
    addOrders(dsn, 2001, 2);
    db::Connection connection(dsn, QStringLiteral("other-channel"));
    db::execDirect(connection.database(),
                   QStringLiteral("UPDATE orders SET status = 'PAID', pay_no = 'ALI-2002', paid_at "
                                  "= NOW(3) WHERE id = 2002"));
}

Privileges operatorRights()
{
    Privileges rights;
    rights.drain = true;
    return rights;
}

QPushButton *applyButton(const BacklogPage &page)
{
    return page.findChild<QPushButton *>(QStringLiteral("applyUnmatchedButton"));
}

void confirmApply(BacklogPage *page, const QString &asking)
{
    page->applyMatched();
    auto *box = page->findChild<QMessageBox *>(QStringLiteral("drainConfirm"));
    QVERIFY(box);
    QVERIFY2(box->text().contains(asking), qPrintable(box->text()));
    box->button(QMessageBox::Yes)->click();
}

} // namespace

class TestConsoleUnmatched final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The finding says how many wait and how many have their order; the list shows each with
    // its order as it is now; applying pays the pending one, rejects the paid one and leaves
    // the missing one waiting.
    void findingIsShownAndTheMatchedAreApplied()
    {
        test::ScratchDatabase scratch(QStringLiteral("unmatched"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        threeLateCallbacks(scratch.dsn());

        BacklogPage page(scratch.dsn());
        page.setPrivileges(operatorRights());
        page.resize(1200, 800);
        page.show();
        auto *finding = page.findChild<QLabel *>(QStringLiteral("unmatchedFinding"));
        QTRY_VERIFY_WITH_TIMEOUT(finding->isVisible(), 10000);
        QVERIFY2(
            finding->text().contains(QStringLiteral("2 payment(s) waiting to be applied")) &&
                finding->text().contains(QStringLiteral("198.00 yuan")) &&
                finding->text().contains(QStringLiteral("1 callback(s) still without their order")),
            qPrintable(finding->text()));
        QCOMPARE(page.lists()->tabText(1), QStringLiteral("Unmatched (3, 2 with their order)"));

        QTableView *table = page.unmatchedTable();
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        QCOMPARE(
            table->model()->headerData(BacklogModel::OrderNowColumn, Qt::Horizontal).toString(),
            QStringLiteral("Order now"));
        QStringList orderNow;
        for (int row = 0; row < 3; ++row)
            orderNow << table->model()->index(row, BacklogModel::OrderNowColumn).data().toString();
        QCOMPARE(orderNow, (QStringList{QStringLiteral("PENDING"), QStringLiteral("PAID"),
                                        QStringLiteral("missing")}));
        // The recorded list has no such column: it is not about late orders.
        QCOMPARE(page.table()->model()->columnCount(), int(BacklogModel::OrderNowColumn));
        page.lists()->setCurrentIndex(1);
        table->setCurrentIndex(table->model()->index(2, 0));
        QCOMPARE(page.findChild<QPlainTextEdit *>(QStringLiteral("rawBody"))->toPlainText(),
                 QString::fromUtf8(test::callbackBody("LATE-2003", 2003, 9900)));

        QPushButton *apply = applyButton(page);
        QVERIFY(apply->isEnabled());
        QVERIFY(!page.findChild<QPushButton *>(QStringLiteral("processBacklogButton"))
                     ->isEnabled()); // nothing recorded
        confirmApply(&page, QStringLiteral("Apply 2 callback(s)"));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isDraining(), 20000);
        const QString status = page.findChild<QLabel *>(QStringLiteral("drainStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("Done.")) &&
                     status.contains(QStringLiteral("Applied <b>1</b>")) &&
                     status.contains(QStringLiteral("rejected 1")) &&
                     status.contains(QStringLiteral(
                         "1 unmatched callback(s) left, 1 of them still without their order")),
                 qPrintable(status));
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
        QVERIFY2(!finding->text().contains(QStringLiteral("waiting to be applied")),
                 qPrintable(finding->text()));
        QVERIFY(!apply->isEnabled());
        QCOMPARE(apply->toolTip(), QStringLiteral("No unmatched callback has its order yet."));

        db::Connection connection(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT GROUP_CONCAT(CONCAT(order_id, ' ', status, ' ', "
                                          "reason) ORDER BY order_id "
                                          "SEPARATOR ', ') FROM pay_callback_log"))
                .toString(),
            QStringLiteral(
                "2001 PROCESSED , 2002 REJECTED order_already_paid, 2003 UNMATCHED unknown_order"));
        QCOMPARE(
            db::scalar(db, QStringLiteral(
                               "SELECT CONCAT(status, ' ', pay_no) FROM orders WHERE id = 2001"))
                .toString(),
            QStringLiteral("PAID LATE-2001"));
        QCOMPARE(test::sideEffectsOf(db, 2001).coupons, 2);
        QCOMPARE(test::sideEffectsOf(db, 2002).coupons, 0);
        QCOMPARE(
            db::scalar(
                db,
                QStringLiteral(
                    "SELECT COUNT(*) FROM ops_audit_log WHERE action = 'backlog.drain_unmatched' "
                    "AND JSON_VALUE(after_json, '$.processed') = 1 "
                    "AND JSON_VALUE(after_json, '$.rejected') = 1"))
                .toInt(),
            1);
    }

    // Finance sees the finding and the list but cannot apply; nor can anyone while the
    // endpoint is in RECORD_ONLY mode, and the page says why. The overview names them too.
    void applyIsRefusedForFinanceAndWhileRecordOnly()
    {
        test::ScratchDatabase scratch(QStringLiteral("unmatched"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        threeLateCallbacks(scratch.dsn());
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        {
            MainWindow window(finance.dsnFor(scratch.name()));
            QSignalSpy known(&window, &MainWindow::privilegesKnown);
            window.show();
            QTRY_COMPARE_WITH_TIMEOUT(known.size(), 1, 10000);
            auto *backlog = static_cast<BacklogPage *>(window.page(Page::BacklogId));
            QTRY_VERIFY_WITH_TIMEOUT(
                !backlog->findChild<QLabel *>(QStringLiteral("unmatchedFinding"))->isHidden(),
                10000);
            QPushButton *apply = applyButton(*backlog);
            QVERIFY(!apply->isEnabled());
            QVERIFY2(apply->toolTip().contains(QStringLiteral("may not")),
                     qPrintable(apply->toolTip()));
            QTRY_COMPARE_WITH_TIMEOUT(backlog->unmatchedTable()->model()->rowCount(), 3, 10000);
            auto *tile = window.findChild<Tile *>(QStringLiteral("tileBacklog"));
            QTRY_VERIFY_WITH_TIMEOUT(tile->detail().contains(QStringLiteral("3 unmatched")), 10000);
            QVERIFY2(tile->detail().contains(QStringLiteral("2 of them with their order")),
                     qPrintable(tile->detail()));
        }

        {
            db::Connection connection(scratch.dsn(), QStringLiteral("flip"));
            flipSwitch(connection.database(), CallbackMode::RecordOnly,
                       QStringLiteral("INC-9 test"));
        }
        BacklogPage page(scratch.dsn());
        page.setPrivileges(operatorRights());
        page.show();
        auto *refusal = page.findChild<QLabel *>(QStringLiteral("drainRefusal"));
        QTRY_VERIFY_WITH_TIMEOUT(refusal->text().contains(QStringLiteral("RECORD_ONLY")), 10000);
        QVERIFY(!applyButton(page)->isEnabled());
        page.applyMatched(); // refused: no confirmation, nothing applied
        QVERIFY(!page.findChild<QMessageBox *>(QStringLiteral("drainConfirm")));
        QCOMPARE(
            test::count(
                scratch.dsn(),
                QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'UNMATCHED'")),
            qint64(3));
    }

    // Stopped midway, every late payment is applied once or still unmatched.
    void stoppedApplyLeavesEachAppliedOnceOrWaiting()
    {
        constexpr int total = 2000;
        test::ScratchDatabase scratch(QStringLiteral("unmatched"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        unmatchedCallbacks(scratch.dsn(), 1001, total);
        addOrders(scratch.dsn(), 1001, total);

        BacklogPage page(scratch.dsn());
        page.setPrivileges(operatorRights());
        page.show();
        QTRY_VERIFY_WITH_TIMEOUT(applyButton(page)->isEnabled(), 10000);
        confirmApply(&page, QStringLiteral("Apply 2000 callback(s)"));
        auto *progress = page.findChild<QProgressBar *>(QStringLiteral("drainProgress"));
        QCOMPARE(progress->maximum(), total);
        QTRY_VERIFY_WITH_TIMEOUT(progress->value() >= 10, 20000);
        QTest::mouseClick(page.findChild<QPushButton *>(QStringLiteral("stopDrainButton")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page.isDraining(), 20000);
        const QString result = page.findChild<QLabel *>(QStringLiteral("drainStatus"))->text();
        QVERIFY2(result.contains(QStringLiteral("<b>Stopped.</b>")), qPrintable(result));
        QTRY_VERIFY_WITH_TIMEOUT(applyButton(page)->isEnabled(),
                                 10000); // the rest can be applied later

        const Dsn &dsn = scratch.dsn();
        const qint64 applied = test::count(
            dsn,
            QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'PROCESSED'"));
        QVERIFY2(applied >= 10 && applied < total, qPrintable(QString::number(applied)));
        QCOMPARE(
            applied +
                test::count(
                    dsn, QStringLiteral(
                             "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'UNMATCHED'")),
            qint64(total));
        QVERIFY2(result.contains(QStringLiteral("Applied <b>%1</b>").arg(applied)),
                 qPrintable(result));
        QCOMPARE(
            test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
            applied);
        QCOMPARE(test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM user_coupon")), 2 * applied);
        QCOMPARE(test::count(dsn, QStringLiteral("SELECT COUNT(*) FROM point_log")), applied);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleUnmatched test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleunmatched.moc"
