#include "callbackfixture.h"
#include "db/connection.h"
#include "dialogs/switchdialog.h"
#include "mainwindow.h"
#include "pages/instancespage.h"
#include "pages/overviewpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/switchcontrol.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>

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
    return scalarText(dsn, QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE stopped_at IS NULL "
                                          "AND last_seen_at >= NOW(3) - INTERVAL 2 SECOND")).toInt() == 2;
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
        test::CallbackdProcess healthy(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("inst-healthy"));
        test::CallbackdProcess hung(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("inst-hung"));
        QTRY_VERIFY_WITH_TIMEOUT(bothAlive(scratch.dsn()), 10000);

        MainWindow window(scratch.dsn());
        window.show();
        auto *overview = static_cast<OverviewPage *>(window.page(Page::OverviewId));
        SwitchControl *control = overview->switchControl();
        QTRY_VERIFY_WITH_TIMEOUT(control->isEnabled(), 10000);
        QVERIFY2(control->text().contains(QStringLiteral("RECORD_ONLY")), qPrintable(control->text()));
        QTest::mouseClick(control, Qt::LeftButton);
        SwitchDialog *dialog = control->dialog();
        QVERIFY(dialog);
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

        // The confirmation names the effect, the live instances and the reason; nothing has
        // changed yet.
        QVERIFY(confirmText->isVisible());
        auto *confirm = dialog->findChild<QPushButton *>(QStringLiteral("confirmButton"));
        QTRY_VERIFY(confirm->isEnabled());
        const QString confirmation = confirmText->text();
        QVERIFY2(confirmation.contains(QStringLiteral("only recorded")), qPrintable(confirmation));
        QVERIFY2(confirmation.contains(QStringLiteral("inst-healthy")) && confirmation.contains(QStringLiteral("inst-hung")),
                 qPrintable(confirmation));
        QVERIFY2(confirmation.contains(QStringLiteral("INC-7 duplicate coupons")), qPrintable(confirmation));
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral("SELECT mode FROM callback_switch")), QStringLiteral("NORMAL"));

        // One instance hangs just before the flip: its heartbeat stops with it.
        ::kill(pid_t(hung.pid()), SIGSTOP);
        auto resume = qScopeGuard([&hung] { ::kill(pid_t(hung.pid()), SIGCONT); });
        QTest::mouseClick(confirm, Qt::LeftButton);
        auto *close = dialog->findChild<QPushButton *>(QStringLiteral("closeButton"));
        QTRY_VERIFY_WITH_TIMEOUT(close->isEnabled(), 15000);

        const QStringList acks = itemTexts(dialog->findChild<QListWidget *>(QStringLiteral("ackList")));
        QVERIFY2(acks.filter(QStringLiteral("inst-healthy applies version 2")).size() == 1, qPrintable(acks.join(u'\n')));
        QVERIFY2(acks.filter(QStringLiteral("inst-hung has not acknowledged")).size() == 1, qPrintable(acks.join(u'\n')));
        auto *warning = dialog->findChild<QLabel *>(QStringLiteral("ackWarning"));
        QVERIFY(warning->isVisible());
        QVERIFY2(warning->text().contains(QStringLiteral("inst-hung")), qPrintable(warning->text()));
        QVERIFY2(!warning->text().contains(QStringLiteral("inst-healthy")), qPrintable(warning->text()));

        // The flip happened, once, and is audited with its reason under the database account.
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral("SELECT CONCAT(mode, ' v', version) FROM callback_switch")),
                 QStringLiteral("RECORD_ONLY v2"));
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral(
                     "SELECT CONCAT(COUNT(*), ' ', MAX(reason), ' ', MAX(actor)) FROM ops_audit_log WHERE action = 'switch.flip'")),
                 QStringLiteral("1 INC-7 duplicate coupons root@localhost"));

        // Both pages now offer the way back.
        QTest::mouseClick(close, Qt::LeftButton);
        auto *instances = static_cast<InstancesPage *>(window.page(Page::InstancesId));
        QTRY_VERIFY_WITH_TIMEOUT(overview->switchControl()->text().contains(QStringLiteral("NORMAL")), 10000);
        instances->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(instances->switchControl()->text().contains(QStringLiteral("NORMAL")), 10000);
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
        QTRY_VERIFY_WITH_TIMEOUT(overview->switchControl()->text().contains(QStringLiteral("RECORD_ONLY")), 10000);
        QVERIFY(!overview->switchControl()->isEnabled());
        QVERIFY2(overview->switchControl()->toolTip().contains(QStringLiteral("may not")),
                 qPrintable(overview->switchControl()->toolTip()));
        QVERIFY(window.findChild<QLabel *>(QStringLiteral("accountLabel"))->text().contains(QStringLiteral("read only")));
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
