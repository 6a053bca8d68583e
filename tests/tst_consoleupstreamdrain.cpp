// The backlog page's drain of a gateway's rows to the upstream (`payops drain --upstream` from
// the console), against a real upstream over HTTP, as the accounts whose roles may or may not.

#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "dialogs/upstreamdraindialog.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/gatewayforward.h"
#include "mainwindow.h"
#include "models/backlogmodel.h"
#include "pages/backlogpage.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>

using namespace payops;

namespace {

constexpr int kRows = 40;

QByteArray payNoOf(int i)
{
    return "GW-CONSOLE-" + QByteArray::number(i);
}

// What a gateway leaves when it stops before forwarding: kRows rows recorded as received
// (FORWARDING, no final answer); and the gateway itself, stopped, its upstream the one to drain
// to.
void gatewayBacklog(const Dsn &dsn, const QString &upstream)
{
    db::Connection connection(dsn, QStringLiteral("gateway"));
    const QSqlDatabase db = connection.database();
    for (int i = 0; i < kRows; ++i) {
        QString error;
        const auto request =
            CallbackRequest::parse(test::callbackBody(payNoOf(i), 1001 + i, 9900), &error);
        QVERIFY2(request, qPrintable(error));
        recordForGateway(db, *request, QStringLiteral("gw-1"));
    }
    db::exec(db,
             QStringLiteral("INSERT INTO callback_instance (id, mode, upstream, last_seen_at, "
                            "stopped_at) VALUES ('gw-1', 'gateway', ?, UTC_TIMESTAMP(3), "
                            "UTC_TIMESTAMP(3))"),
             {upstream});
}

qint64 countOf(const Dsn &dsn, const QString &sql, const QVariantList &binds = {})
{
    db::Connection connection(dsn, QStringLiteral("count"));
    QSqlQuery query = db::exec(connection.database(), sql, binds);
    return query.next() ? query.value(0).toLongLong() : -1;
}

BacklogPage *backlogOf(MainWindow &window)
{
    QSignalSpy known(&window, &MainWindow::privilegesKnown);
    window.show();
    if (!known.wait(10000) && known.isEmpty())
        return nullptr;
    window.showPage(Page::BacklogId);
    return static_cast<BacklogPage *>(window.page(Page::BacklogId));
}

QPushButton *forwardButton(const BacklogPage *page)
{
    return page->findChild<QPushButton *>(QStringLiteral("forwardUpstreamButton"));
}

// Opens the dialog and answers it with `url` at `rate` forwards a second; returns the dialog's
// error, empty when it accepted.
// The dialog forwardToUpstream() opened; one answered before may not be deleted yet.
UpstreamDrainDialog *openDialog(BacklogPage *page)
{
    page->forwardToUpstream();
    for (auto *dialog : page->findChildren<UpstreamDrainDialog *>())
        if (dialog->isVisible())
            return dialog;
    return nullptr;
}

QString answerDialog(BacklogPage *page, const QString &url, int rate)
{
    UpstreamDrainDialog *dialog = openDialog(page);
    if (!dialog)
        return QStringLiteral("no dialog");
    dialog->findChild<QComboBox *>(QStringLiteral("upstreamUrl"))->setEditText(url);
    dialog->findChild<QSpinBox *>(QStringLiteral("upstreamRate"))->setValue(rate);
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    if (dialog->isVisible()) {
        const QString error = dialog->findChild<QLabel *>(QStringLiteral("upstreamError"))->text();
        dialog->reject();
        return error;
    }
    return QString();
}

} // namespace

class TestConsoleUpstreamDrain final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The operator forwards a gateway's backlog: the upstream offered is the gateway's own; a
    // URL the drain cannot use is refused in the dialog; the drain shows its progress and rate,
    // stops on request, and a second drain forwards the rest: every pay_no reaches the team's
    // handler exactly once, and each drain is in the audit log under the operator's account.
    void theOperatorForwardsEachRowOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("upstream"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        test::CountingUpstream upstream;
        gatewayBacklog(scratch.dsn(), upstream.url());
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        MainWindow window(operatorAccount.dsnFor(scratch.name()));
        BacklogPage *page = backlogOf(window);
        QVERIFY(page);
        QTRY_VERIFY_WITH_TIMEOUT(forwardButton(page)->isEnabled(), 10000);
        QVERIFY(!forwardButton(page)->isHidden());
        QCOMPARE(page->lists()->tabText(2), QStringLiteral("Gateway (%1)").arg(kRows));
        QCOMPARE(page->lists()->currentIndex(), 2); // the only list with anything in it
        const QString headline =
            page->findChild<QLabel *>(QStringLiteral("backlogHeadline"))->text();
        QVERIFY2(headline.contains(QStringLiteral("No payment waits")) &&
                     headline.contains(QStringLiteral("%1 gateway callback(s)").arg(kRows)),
                 qPrintable(headline));
        // The payment drain has nothing to do: these rows are never paid by payops.
        QVERIFY(
            !page->findChild<QPushButton *>(QStringLiteral("processBacklogButton"))->isEnabled());

        UpstreamDrainDialog *dialog = openDialog(page);
        QVERIFY(dialog);
        QCOMPARE(dialog->findChild<QComboBox *>(QStringLiteral("upstreamUrl"))->currentText(),
                 upstream.url());
        dialog->reject();
        QVERIFY2(answerDialog(page, QStringLiteral("ftp://nowhere"), 0)
                     .contains(QStringLiteral("http:// or https://")),
                 "a URL the drain cannot use is refused");
        QVERIFY(!page->isDraining());

        // Slow enough to be stopped midway and to show its rate.
        QCOMPARE(answerDialog(page, upstream.url(), 20), QString());
        QVERIFY(page->isDraining());
        auto *status = page->findChild<QLabel *>(QStringLiteral("drainStatus"));
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("a second")), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(upstream.count() >= 5, 20000);
        QTest::mouseClick(page->findChild<QPushButton *>(QStringLiteral("stopDrainButton")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!page->isDraining(), 20000);
        QVERIFY2(status->text().contains(QStringLiteral("<b>Stopped.</b>")),
                 qPrintable(status->text()));
        const int first = upstream.count();
        QVERIFY2(first < kRows, qPrintable(QString::number(first)));
        QVERIFY2(status->text().contains(QStringLiteral("Forwarded <b>%1</b>").arg(first)),
                 qPrintable(status->text()));

        QTRY_VERIFY_WITH_TIMEOUT(forwardButton(page)->isEnabled(), 10000);
        QCOMPARE(answerDialog(page, upstream.url(), 0), QString());
        QTRY_VERIFY_WITH_TIMEOUT(!page->isDraining(), 20000);
        QVERIFY2(status->text().contains(
                     QStringLiteral("<b>Done.</b> Forwarded <b>%1</b>").arg(kRows - first)),
                 qPrintable(status->text()));
        QCOMPARE(upstream.count(), kRows);
        const QHash<QByteArray, int> perPayNo = upstream.countByPayNo();
        QCOMPARE(perPayNo.size(), kRows);
        for (const int count : perPayNo)
            QCOMPARE(count, 1);
        QCOMPARE(countOf(scratch.dsn(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log "
                                                       "WHERE status = 'FORWARDED' AND forwards "
                                                       "= 1 AND upstream_status = 200")),
                 qint64(kRows));
        QCOMPARE(countOf(scratch.dsn(),
                         QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = "
                                        "'backlog.drain_upstream' AND actor = ?"),
                         {operatorAccount.user() + QStringLiteral("@localhost")}),
                 qint64(2));
        QTRY_COMPARE_WITH_TIMEOUT(page->gatewayTable()->model()->rowCount(), 0, 10000);
        QCOMPARE(page->lists()->tabText(2), QStringLiteral("Gateway (0)"));
        QVERIFY(!forwardButton(page)->isEnabled());
    }

    // A gateway with a handler per channel: the dialog offers each handler, and picking one
    // picks its channel, so its drain forwards only that channel's rows. These rows came in
    // payops's own format: the Alipay handler's drain forwards none, the /callbacks/pay
    // handler's all.
    void aHandlerPerChannelDrainsItsOwnChannel()
    {
        test::ScratchDatabase scratch(QStringLiteral("upchan"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        test::CountingUpstream payHandler;
        test::CountingUpstream alipayHandler;
        gatewayBacklog(
            scratch.dsn(),
            QStringLiteral("alipay %1; pay %2").arg(alipayHandler.url(), payHandler.url()));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        MainWindow window(operatorAccount.dsnFor(scratch.name()));
        BacklogPage *page = backlogOf(window);
        QVERIFY(page);
        QTRY_VERIFY_WITH_TIMEOUT(forwardButton(page)->isEnabled(), 10000);

        UpstreamDrainDialog *dialog = openDialog(page);
        QVERIFY(dialog);
        auto *urls = dialog->findChild<QComboBox *>(QStringLiteral("upstreamUrl"));
        auto *channel = dialog->findChild<QComboBox *>(QStringLiteral("upstreamChannel"));
        QCOMPARE(urls->count(), 2);
        urls->setCurrentIndex(urls->findText(alipayHandler.url()));
        QCOMPARE(channel->currentData().toString(), QStringLiteral("alipay"));
        dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
        QTRY_VERIFY_WITH_TIMEOUT(!page->isDraining(), 20000);
        QCOMPARE(alipayHandler.count(), 0);

        QTRY_VERIFY_WITH_TIMEOUT(forwardButton(page)->isEnabled(), 10000);
        dialog = openDialog(page);
        QVERIFY(dialog);
        urls = dialog->findChild<QComboBox *>(QStringLiteral("upstreamUrl"));
        channel = dialog->findChild<QComboBox *>(QStringLiteral("upstreamChannel"));
        urls->setCurrentIndex(urls->findText(payHandler.url()));
        QCOMPARE(channel->currentData().toString(), QStringLiteral("payops"));
        dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
        QTRY_COMPARE_WITH_TIMEOUT(payHandler.count(), kRows, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!page->isDraining(), 20000);
        QCOMPARE(alipayHandler.count(), 0);
    }

    // Finance sees a gateway's backlog but may not forward it; nobody may while the switch is
    // RECORD_ONLY, and the page says why. Nothing reaches the upstream.
    void forwardingIsRefusedForFinanceAndWhileRecordOnly()
    {
        test::ScratchDatabase scratch(QStringLiteral("upstream"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        test::CountingUpstream upstream;
        gatewayBacklog(scratch.dsn(), upstream.url());
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        {
            MainWindow window(finance.dsnFor(scratch.name()));
            BacklogPage *page = backlogOf(window);
            QVERIFY(page);
            QTRY_COMPARE_WITH_TIMEOUT(page->gatewayTable()->model()->rowCount(), kRows, 10000);
            QTRY_VERIFY_WITH_TIMEOUT(!forwardButton(page)->isHidden(), 10000);
            QVERIFY(!forwardButton(page)->isEnabled());
            QVERIFY2(forwardButton(page)->toolTip().contains(QStringLiteral("may not")),
                     qPrintable(forwardButton(page)->toolTip()));
            QVERIFY(!openDialog(page)); // refused: no dialog
        }
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("flip"));
            flipSwitch(connection.database(), CallbackMode::RecordOnly, QStringLiteral("test"));
        }
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        MainWindow window(operatorAccount.dsnFor(scratch.name()));
        BacklogPage *page = backlogOf(window);
        QVERIFY(page);
        auto *refusal = page->findChild<QLabel *>(QStringLiteral("drainRefusal"));
        QTRY_VERIFY_WITH_TIMEOUT(refusal->text().contains(QStringLiteral("RECORD_ONLY")), 10000);
        QVERIFY(!forwardButton(page)->isEnabled());
        QVERIFY(!openDialog(page));
        QCOMPARE(upstream.count(), 0);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleUpstreamDrain test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleupstreamdrain.moc"
