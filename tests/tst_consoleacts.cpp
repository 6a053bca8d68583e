#include "callbackfixture.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "dialogs/switchdialog.h"
#include "domain/callback/callbackswitch.h"
#include "mainwindow.h"
#include "models/backlogmodel.h"
#include "pages/backlogpage.h"
#include "pages/instancespage.h"
#include "pages/overviewpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/switchcontrol.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>

#include <csignal>

using namespace payops;

namespace {

QString scalarText(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    return db::scalar(connection.database(), sql).toString();
}

QStringList itemTexts(const QListWidget *list)
{
    QStringList texts;
    for (int row = 0; row < list->count(); ++row)
        texts << list->item(row)->text();
    return texts;
}

// Waits until both instances' heartbeats are in the database.
bool bothAlive(const Dsn &dsn)
{
    return scalarText(dsn, QStringLiteral(
                               "SELECT COUNT(*) FROM callback_instance WHERE stopped_at IS NULL "
                               "AND last_seen_at >= NOW(3) - INTERVAL 2 SECOND"))
               .toInt() == 2;
}

void flip(const Dsn &dsn, CallbackMode mode)
{
    db::Connection connection(dsn, QStringLiteral("flip"));
    flipSwitch(connection.database(), mode, QStringLiteral("INC-8 test"));
}

} // namespace

class TestConsoleActs final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // 5.1 and 5.7: the switch dialog needs a reason, confirms naming the effect and the live
    // instances, and after the flip shows each instance acknowledging or names it as late.
    void switchDialogNeedsAReasonAndNamesTheLateInstance()
    {
        test::ScratchDatabase scratch(QStringLiteral("acts"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 5);
        test::CallbackdProcess healthy(scratch.dsn(), QStringLiteral("safe"),
                                       QStringLiteral("inst-healthy"));
        test::CallbackdProcess hung(scratch.dsn(), QStringLiteral("safe"),
                                    QStringLiteral("inst-hung"));
        QTRY_VERIFY_WITH_TIMEOUT(bothAlive(scratch.dsn()), 10000);

        MainWindow window(scratch.dsn());
        window.show();
        auto *overview = static_cast<OverviewPage *>(window.page(Page::OverviewId));
        SwitchControl *control = overview->switchControl();
        QTRY_VERIFY_WITH_TIMEOUT(control->isEnabled(), 10000);
        QVERIFY2(control->text().contains(QStringLiteral("RECORD_ONLY")),
                 qPrintable(control->text()));
        QTest::mouseClick(control, Qt::LeftButton);
        SwitchDialog *dialog = control->dialog();
        QVERIFY(dialog);
        // Active, as on a desktop: focus then follows the dialog's steps as it would there.
        dialog->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(dialog));
        auto *reason = dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit"));
        auto *next = dialog->findChild<QPushButton *>(QStringLiteral("continueButton"));
        QVERIFY(reason && next);

        // No reason, or only blanks: the dialog goes no further.
        QVERIFY(!next->isEnabled());
        QTest::keyClicks(reason, QStringLiteral("   "));
        QVERIFY(!next->isEnabled());
        QTest::keyClick(reason, Qt::Key_Return);
        auto *confirmText = dialog->findChild<QLabel *>(QStringLiteral("confirmText"));
        QVERIFY(!confirmText->isVisible());
        reason->clear();
        QTest::keyClicks(reason, QStringLiteral("INC-7 duplicate coupons"));
        QVERIFY(next->isEnabled());
        QTest::mouseClick(next, Qt::LeftButton);
        QVERIFY(confirmText->isVisible());
        auto *confirm = dialog->findChild<QPushButton *>(QStringLiteral("confirmButton"));
        QTRY_VERIFY(confirm->isEnabled()); // the live instances are read
        // Back, and Enter in the reason field: it goes on to the confirmation and no further.
        // One key press must never both show the confirmation and accept it.
        QTest::mouseClick(dialog->findChild<QPushButton *>(QStringLiteral("backButton")),
                          Qt::LeftButton);
        QVERIFY(!confirmText->isVisible());
        QTest::keyClick(reason, Qt::Key_Return);

        // The confirmation names the effect, the live instances and the reason; nothing has
        // changed yet.
        QVERIFY(confirmText->isVisible());
        const QString confirmation = confirmText->text();
        QVERIFY2(confirmation.contains(QStringLiteral("only recorded")), qPrintable(confirmation));
        QVERIFY2(confirmation.contains(QStringLiteral("inst-healthy")) &&
                     confirmation.contains(QStringLiteral("inst-hung")),
                 qPrintable(confirmation));
        QVERIFY2(confirmation.contains(QStringLiteral("INC-7 duplicate coupons")),
                 qPrintable(confirmation));
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral("SELECT mode FROM callback_switch")),
                 QStringLiteral("NORMAL"));
        // Enter on the confirmation does not accept it either: only a deliberate click does.
        QTest::keyClick(confirm, Qt::Key_Return);
        QVERIFY(confirmText->isVisible());
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral("SELECT mode FROM callback_switch")),
                 QStringLiteral("NORMAL"));

        // One instance hangs just before the flip: its heartbeat stops with it.
        ::kill(pid_t(hung.pid()), SIGSTOP);
        auto resume = qScopeGuard([&hung] { ::kill(pid_t(hung.pid()), SIGCONT); });
        QTest::mouseClick(confirm, Qt::LeftButton);
        auto *close = dialog->findChild<QPushButton *>(QStringLiteral("closeButton"));
        QTRY_VERIFY_WITH_TIMEOUT(close->isEnabled(), 15000);

        const QStringList acks =
            itemTexts(dialog->findChild<QListWidget *>(QStringLiteral("ackList")));
        QVERIFY2(acks.filter(QStringLiteral("inst-healthy applies version 2")).size() == 1,
                 qPrintable(acks.join(u'\n')));
        QVERIFY2(acks.filter(QStringLiteral("inst-hung has not acknowledged")).size() == 1,
                 qPrintable(acks.join(u'\n')));
        auto *warning = dialog->findChild<QLabel *>(QStringLiteral("ackWarning"));
        QVERIFY(warning->isVisible());
        QVERIFY2(warning->text().contains(QStringLiteral("inst-hung")),
                 qPrintable(warning->text()));
        QVERIFY2(!warning->text().contains(QStringLiteral("inst-healthy")),
                 qPrintable(warning->text()));

        // The flip happened, once, and is audited with its reason under the database account.
        QCOMPARE(
            scalarText(scratch.dsn(),
                       QStringLiteral("SELECT CONCAT(mode, ' v', version) FROM callback_switch")),
            QStringLiteral("RECORD_ONLY v2"));
        QCOMPARE(
            scalarText(scratch.dsn(),
                       QStringLiteral("SELECT CONCAT(COUNT(*), ' ', MAX(reason), ' ', MAX(actor)) "
                                      "FROM ops_audit_log WHERE action = 'switch.flip'")),
            QStringLiteral("1 INC-7 duplicate coupons root@localhost"));

        // Both pages now offer the way back.
        QTest::mouseClick(close, Qt::LeftButton);
        auto *instances = static_cast<InstancesPage *>(window.page(Page::InstancesId));
        QTRY_VERIFY_WITH_TIMEOUT(
            overview->switchControl()->text().contains(QStringLiteral("NORMAL")), 10000);
        instances->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(
            instances->switchControl()->text().contains(QStringLiteral("NORMAL")), 10000);
    }

    // 5.6: an account that may not flip sees the control disabled, and says why.
    void financeCannotFlip()
    {
        test::ScratchDatabase scratch(QStringLiteral("acts"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        MainWindow window(finance.dsnFor(scratch.name()));
        QSignalSpy known(&window, &MainWindow::privilegesKnown);
        window.show();
        QTRY_COMPARE_WITH_TIMEOUT(known.size(), 1, 10000);
        auto *overview = static_cast<OverviewPage *>(window.page(Page::OverviewId));
        QTRY_VERIFY_WITH_TIMEOUT(
            overview->switchControl()->text().contains(QStringLiteral("RECORD_ONLY")), 10000);
        QVERIFY(!overview->switchControl()->isEnabled());
        QVERIFY2(overview->switchControl()->toolTip().contains(QStringLiteral("may not")),
                 qPrintable(overview->switchControl()->toolTip()));
        QVERIFY(window.findChild<QLabel *>(QStringLiteral("accountLabel"))
                    ->text()
                    .contains(QStringLiteral("read only")));

        auto *backlog = static_cast<BacklogPage *>(window.page(Page::BacklogId));
        auto *process = backlog->findChild<QPushButton *>(QStringLiteral("processBacklogButton"));
        QVERIFY(!process->isEnabled());
        QVERIFY2(process->toolTip().contains(QStringLiteral("may not")),
                 qPrintable(process->toolTip()));

        // Nor compensate, from either page; the audit stays readable and verifiable.
        for (const char *name :
             {"compensateAll", "compensateEverything", "approveButton", "rejectButton"}) {
            auto *button = window.findChild<QPushButton *>(QString::fromLatin1(name));
            QVERIFY2(button && !button->isEnabled(), name);
        }
        QVERIFY(window.findChild<QPushButton *>(QStringLiteral("verifyButton"))->isEnabled());
        QVERIFY(window.findChild<QPushButton *>(QStringLiteral("exportButton"))->isEnabled());
    }

    // 5.2: the recorded callbacks with their raw bodies, byte for byte; "process backlog" is
    // refused while RECORD_ONLY is on, saying why, and then processes each exactly once.
    void backlogIsListedRefusedWhileRecordOnlyAndProcessed()
    {
        test::ScratchDatabase scratch(QStringLiteral("acts"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 4);
        flip(scratch.dsn(), CallbackMode::RecordOnly);
        QList<QByteArray> bodies;
        {
            test::CallbackdProcess endpoint(scratch.dsn(), QStringLiteral("safe"),
                                            QStringLiteral("inst-rec"));
            for (qint64 order = 1001; order <= 1004; ++order) {
                bodies << test::callbackBody(QStringLiteral("支付-%1").arg(order).toUtf8(), order,
                                             9900);
                QCOMPARE(test::postCallback(endpoint.port(), bodies.last()).status, 200);
            }
            // The platform retries one: it adds nothing to the backlog.
            QCOMPARE(test::postCallback(endpoint.port(), bodies.first()).status, 200);
        }
        QCOMPARE(scalarText(scratch.dsn(),
                            QStringLiteral(
                                "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")),
                 QStringLiteral("4"));
        // And one row edited by hand into bytes that are not even UTF-8: shown as such, and
        // the drain rejects it without stopping.
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("edit"));
            db::exec(connection.database(),
                     QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                    "status) VALUES ('HAND-1', 1004, ?, 'RECORDED')"),
                     {QByteArray("{\"pay_no\":\xff\xfe}")});
        }

        MainWindow window(scratch.dsn());
        QSignalSpy known(&window, &MainWindow::privilegesKnown);
        window.show();
        QTRY_COMPARE_WITH_TIMEOUT(known.size(), 1, 10000);
        auto *page = static_cast<BacklogPage *>(window.page(Page::BacklogId));
        QTableView *table = page->table();
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 5, 10000);
        table->setCurrentIndex(table->model()->index(2, 0));
        QCOMPARE(page->findChild<QPlainTextEdit *>(QStringLiteral("rawBody"))->toPlainText(),
                 QString::fromUtf8(bodies.at(2)));
        QCOMPARE(table->model()->index(2, BacklogModel::PayNoColumn).data().toString(),
                 QStringLiteral("支付-1003"));
        QVERIFY(!page->findChild<QLabel *>(QStringLiteral("bodyTitle"))
                     ->text()
                     .contains(QStringLiteral("not valid UTF-8")));
        table->setCurrentIndex(table->model()->index(4, 0));
        QVERIFY2(page->findChild<QLabel *>(QStringLiteral("bodyTitle"))
                     ->text()
                     .contains(QStringLiteral("not valid UTF-8")),
                 qPrintable(page->findChild<QLabel *>(QStringLiteral("bodyTitle"))->text()));

        auto *process = page->findChild<QPushButton *>(QStringLiteral("processBacklogButton"));
        auto *refusal = page->findChild<QLabel *>(QStringLiteral("drainRefusal"));
        QTRY_VERIFY_WITH_TIMEOUT(refusal->text().contains(QStringLiteral("RECORD_ONLY")), 10000);
        QVERIFY(!process->isEnabled());
        page->processBacklog(); // refused: no confirmation, nothing processed
        QVERIFY(!page->findChild<QMessageBox *>(QStringLiteral("drainConfirm")));

        flip(scratch.dsn(), CallbackMode::Normal);
        page->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(process->isEnabled(), 10000);
        QVERIFY(refusal->isHidden());
        test::confirmDrain(page);
        auto *status = page->findChild<QLabel *>(QStringLiteral("drainStatus"));
        QTRY_VERIFY_WITH_TIMEOUT(!page->isDraining(), 20000);
        QVERIFY2(status->text().contains(QStringLiteral("Done.")) &&
                     status->text().contains(QStringLiteral("Processed <b>4</b>")) &&
                     status->text().contains(QStringLiteral("rejected 1")) &&
                     status->text().contains(QStringLiteral("0 left")),
                 qPrintable(status->text()));
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 0, 10000);
        // The drain is audited once, with its counts, under the database account.
        QCOMPARE(scalarText(scratch.dsn(),
                            QStringLiteral(
                                "SELECT CONCAT(COUNT(*), ' ', MAX(actor), ' ', "
                                "JSON_VALUE(MAX(after_json), '$.processed')) FROM ops_audit_log "
                                "WHERE action = 'backlog.drain'")),
                 QStringLiteral("1 root@localhost 4"));
        QCOMPARE(
            scalarText(scratch.dsn(), QStringLiteral("SELECT CONCAT(status, ' ', reason) FROM "
                                                     "pay_callback_log WHERE pay_no = 'HAND-1'")),
            QStringLiteral("REJECTED unreadable_record"));

        db::Connection connection(scratch.dsn(), QStringLiteral("check"));
        QCOMPARE(db::scalar(connection.database(),
                            QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID' AND "
                                           "id BETWEEN 1001 AND 1004"))
                     .toInt(),
                 4);
        for (qint64 order = 1001; order <= 1004; ++order) {
            const test::SideEffects effects = test::sideEffectsOf(connection.database(), order);
            QCOMPARE(effects.coupons, 2);
            QCOMPARE(effects.couponTemplatesTwice, 0);
            QCOMPARE(effects.points, 1);
        }
    }

    // 5.2: a drain stopped midway leaves every callback processed once or still recorded.
    // Stopped by the operator, or by another operator flipping the switch to RECORD_ONLY
    // under it (the barrier: the drain's next transaction reads the flip and stops).
    void stoppedDrainProcessesEachCallbackOnceOrNotAtAll_data()
    {
        QTest::addColumn<bool>("byTheSwitch");
        QTest::addColumn<QString>("saying");
        QTest::newRow("stop button") << false << QStringLiteral("<b>Stopped.</b>");
        QTest::newRow("switch flipped") << true << QStringLiteral("the switch turned RECORD_ONLY");
    }

    void stoppedDrainProcessesEachCallbackOnceOrNotAtAll()
    {
        QFETCH(bool, byTheSwitch);
        QFETCH(QString, saying);
        constexpr int total = 3000;
        test::ScratchDatabase scratch(QStringLiteral("acts"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), total);
        test::recordCallbacks(scratch.dsn(), 1001, total);

        BacklogPage page(scratch.dsn());
        Privileges operatorRights;
        operatorRights.drain = true;
        page.setPrivileges(operatorRights);
        page.show();
        auto *process = page.findChild<QPushButton *>(QStringLiteral("processBacklogButton"));
        QTRY_VERIFY_WITH_TIMEOUT(process->isEnabled(), 10000);
        test::confirmDrain(&page);
        auto *progress = page.findChild<QProgressBar *>(QStringLiteral("drainProgress"));
        QCOMPARE(progress->maximum(), total);
        QTRY_VERIFY_WITH_TIMEOUT(progress->value() >= 10, 20000);
        if (byTheSwitch)
            flip(scratch.dsn(), CallbackMode::RecordOnly);
        else
            QTest::mouseClick(page.findChild<QPushButton *>(QStringLiteral("stopDrainButton")),
                              Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page.isDraining(), 20000);
        const QString result = page.findChild<QLabel *>(QStringLiteral("drainStatus"))->text();
        QVERIFY2(result.contains(saying), qPrintable(result));
        // The rest can be processed again, unless the switch now says RECORD_ONLY.
        QTRY_COMPARE_WITH_TIMEOUT(process->isEnabled(), !byTheSwitch, 10000);

        db::Connection connection(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = connection.database();
        const int processed =
            db::scalar(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'PROCESSED'"))
                .toInt();
        const int recorded =
            db::scalar(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'"))
                .toInt();
        QVERIFY2(processed >= 10 && processed < total, qPrintable(QString::number(processed)));
        QCOMPARE(processed + recorded, total);
        QVERIFY2(result.contains(QStringLiteral("Processed <b>%1</b>").arg(processed)),
                 qPrintable(result));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
                     .toInt(),
                 processed);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")).toInt(),
                 2 * processed);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM point_log")).toInt(),
                 processed);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleActs test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleacts.moc"
