#include "console/consolesettings.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "dialogs/connectiondialog.h"
#include "dialogs/reportdialog.h"
#include "dialogs/settingsdialog.h"
#include "dialogs/upstreamdraindialog.h"
#include "gatewayrows.h"
#include "log/translation.h"
#include "models/instancemodel.h"
#include "pages/backlogpage.h"
#include "pages/evidencepage.h"
#include "pages/instancespage.h"
#include "pages/pagetable.h"
#include "playbook/playbookdock.h"
#include "testmain.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QScreen>
#include <QTabWidget>
#include <QTableView>

using namespace payops;

namespace {

// The most common laptop screen, 1366 × 768, less what a desktop takes for its panel and the
// window's title bar.
constexpr QSize kLaptop(1366, 740);

// PAYOPS_SCREENSHOT_DIR=DIR: the window or dialog at the laptop's size, as
// DIR/laptop[-zh]-<name>.png. Not a check; the suite runs without it.
void screenshot(QWidget *widget, const QString &language, const QString &name)
{
    test::screenshot(widget, (language == QLatin1String("en") ? QStringLiteral("laptop-")
                                                              : QStringLiteral("laptop-zh-")) +
                                 name);
}

// A widget a scroll area holds asks nothing of the window.
bool insideScrollArea(QWidget *widget, QWidget *root)
{
    for (QWidget *w = widget->parentWidget(); w && w != root; w = w->parentWidget())
        if (qobject_cast<QAbstractScrollArea *>(w))
            return true;
    return false;
}

// What makes a widget need more than the laptop gives, for the failure message: the deepest
// widgets whose own minimum is wider or taller than `limit`, with their minimum.
QStringList tooLarge(QWidget *root, QSize limit)
{
    QStringList found;
    for (QWidget *child : root->findChildren<QWidget *>()) {
        if (!child->isVisibleTo(root) || insideScrollArea(child, root))
            continue;
        const QSize need = child->minimumSizeHint().expandedTo(child->minimumSize());
        if (need.width() <= limit.width() && need.height() <= limit.height())
            continue;
        QStringList path;
        for (QWidget *w = child; w && w != root; w = w->parentWidget())
            path.prepend(w->objectName().isEmpty()
                             ? QString::fromLatin1(w->metaObject()->className())
                             : w->objectName());
        found << QStringLiteral("%1 %2×%3")
                     .arg(path.join(QLatin1Char('/')))
                     .arg(need.width())
                     .arg(need.height());
    }
    return found;
}

QString fitMessage(QWidget *widget, const QString &what, QSize limit)
{
    const QSize need = widget->minimumSizeHint();
    return QStringLiteral("%1 needs %2×%3, more than %4×%5; wide or tall parts: %6")
        .arg(what)
        .arg(need.width())
        .arg(need.height())
        .arg(limit.width())
        .arg(limit.height())
        .arg(tooLarge(widget, limit).join(QStringLiteral("; ")));
}

// Lays out again what changed: a widget that grew posts its request to its parent, level by
// level, and the window's minimum is stale until every level has run.
void settle()
{
    for (int level = 0; level < 20; ++level)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    QCoreApplication::processEvents();
}

// The texts of the shown charts that Qt Charts cut short for want of room ("12-03 ..."): at
// the laptop's size a label must still say what it labels.
QStringList cutChartTexts(QWidget *window)
{
    QStringList cut;
    for (QChartView *view : window->findChildren<QChartView *>()) {
        if (!view->isVisible())
            continue;
        for (const QGraphicsItem *item : view->scene()->items()) {
            const auto *text = dynamic_cast<const QGraphicsTextItem *>(item);
            if (text && text->isVisible() && text->toPlainText().endsWith(QStringLiteral("...")))
                cut << QStringLiteral("%1: %2").arg(view->objectName(), text->toPlainText());
        }
    }
    return cut;
}

// The wrapped labels of the window shorter than their text needs at their width: the last
// lines of such a label are cut off.
QStringList clippedLabels(QWidget *window)
{
    settle();
    QStringList clipped;
    for (QLabel *label : window->findChildren<QLabel *>()) {
        if (!label->isVisible() || !label->wordWrap() || label->text().isEmpty() ||
            insideScrollArea(label, window))
            continue;
        const int need = label->heightForWidth(label->width());
        if (label->height() < need)
            clipped << QStringLiteral("%1 %2 of %3 px: %4")
                           .arg(label->objectName())
                           .arg(label->height())
                           .arg(need)
                           .arg(label->text().left(60));
    }
    return clipped;
}

QString clippedMessage(const QString &name, const QStringList &clipped)
{
    return QStringLiteral("%1: labels cut off: %2").arg(name, clipped.join(QStringLiteral("; ")));
}

bool fits(QWidget *widget, QSize limit)
{
    settle();
    const QSize need = widget->minimumSizeHint().expandedTo(widget->minimumSize());
    return need.width() <= limit.width() && need.height() <= limit.height();
}

} // namespace

class TestConsoleLaptop final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_demo = test::demoDatabase();
        m_incidentOrder = test::count(
            m_demo->dsn(),
            QStringLiteral("SELECT MIN(order_id) FROM (SELECT order_id FROM user_coupon "
                           "GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1) d"));
        QVERIFY(m_incidentOrder > 0);
    }

    void cleanupTestCase() { installTranslations(QStringLiteral("en")); }

    // The console opens no larger than the screen it opens on (the offscreen platform's is
    // smaller than the console's usual size), so its status bar is never below the panel.
    void opensNoLargerThanTheScreen()
    {
        MainWindow window(std::nullopt);
        const QSize screen = QGuiApplication::primaryScreen()->availableSize();
        QVERIFY2(window.width() <= screen.width() && window.height() <= screen.height(),
                 qPrintable(QStringLiteral("%1×%2 on a screen of %3×%4")
                                .arg(window.width())
                                .arg(window.height())
                                .arg(screen.width())
                                .arg(screen.height())));
    }

    void everyPageFitsWithThePlaybook_data() { languages(); }

    // Each page on the demo database, with its data, fits the laptop with the playbook shown
    // beside it; at the laptop's size the playbook is on screen with the width it asks for,
    // and the page has at least its own minimum.
    void everyPageFitsWithThePlaybook()
    {
        QFETCH(QString, language);
        QCOMPARE(installTranslations(language), language);
        MainWindow window(m_demo->dsn());
        showAtLaptopSize(window);
        QTRY_VERIFY_WITH_TIMEOUT(window.playbook()->steps().size() > 0, 20000);
        for (const PageEntry &entry : pageTable()) {
            // The evidence page with an incident order: its header and findings are long. The
            // instances page with two gateways beside the demo's handlers: its widest rows.
            if (entry.id == Page::EvidenceId) {
                window.openOrder(m_incidentOrder);
            } else if (entry.id == Page::InstancesId) {
                test::insertGatewayInstances(m_demo->dsn());
                window.showPage(entry.id);
                window.page(entry.id)->refresh();
                QTRY_COMPARE_WITH_TIMEOUT(
                    static_cast<InstancesPage *>(window.page(entry.id))->model()->rowCount(), 5,
                    20000);
            } else {
                window.showPage(entry.id);
            }
            test::waitForData(&window);
            QCoreApplication::processEvents();
            const QString name = QString::fromLatin1(entry.name);
            QVERIFY2(fits(&window, kLaptop), qPrintable(fitMessage(&window, name, kLaptop)));
            window.resize(kLaptop);
            QCoreApplication::processEvents();
            QCOMPARE(window.size(), kLaptop);
            PlaybookDock *playbook = window.playbook();
            QVERIFY2(playbook->isVisible() && !playbook->isFloating(), qPrintable(name));
            QVERIFY2(playbook->width() >= playbook->minimumSizeHint().width() &&
                         playbook->width() >= 300,
                     qPrintable(QStringLiteral("%1: the playbook is %2 px wide")
                                    .arg(name)
                                    .arg(playbook->width())));
            QVERIFY2(playbook->geometry().right() < window.width(), qPrintable(name));
            Page *page = window.page(entry.id);
            QVERIFY2(page->width() >= page->minimumSizeHint().width() &&
                         page->height() >= page->minimumSizeHint().height(),
                     qPrintable(QStringLiteral("%1 is %2×%3, less than its minimum %4×%5")
                                    .arg(name)
                                    .arg(page->width())
                                    .arg(page->height())
                                    .arg(page->minimumSizeHint().width())
                                    .arg(page->minimumSizeHint().height())));
            screenshot(&window, language, name);
            const QStringList clipped = clippedLabels(&window);
            QVERIFY2(clipped.isEmpty(), qPrintable(clippedMessage(name, clipped)));
            const QStringList cut = cutChartTexts(&window);
            QVERIFY2(cut.isEmpty(), qPrintable(QStringLiteral("%1: chart texts cut short: %2")
                                                   .arg(name, cut.join(QStringLiteral("; ")))));
            if (entry.id == Page::InstancesId)
                test::deleteGatewayInstances(m_demo->dsn());
        }
    }

    void aGatewaysEvidenceFits_data() { languages(); }

    // A payment a gateway forwarded, delivered three times on two gateways: the swimlanes with
    // their forwards, and the callback as WeChat Pay sent it, fit beside the playbook.
    void aGatewaysEvidenceFits()
    {
        QFETCH(QString, language);
        QCOMPARE(installTranslations(language), language);
        MainWindow window(m_demo->dsn());
        showAtLaptopSize(window);
        window.openOrder(forwardedPayment().orderId);
        auto *page = static_cast<EvidencePage *>(window.page(Page::EvidenceId));
        QTRY_COMPARE_WITH_TIMEOUT(page->details()->tabText(1).contains(QLatin1Char('1')), true,
                                  20000);
        test::waitForData(&window);
        for (const int tab : {0, 1}) {
            page->details()->setCurrentIndex(tab);
            const QString name =
                tab == 0 ? QStringLiteral("evidence-gateway") : QStringLiteral("evidence-received");
            QVERIFY2(fits(&window, kLaptop), qPrintable(fitMessage(&window, name, kLaptop)));
            screenshot(&window, language, name);
            const QStringList clipped = clippedLabels(&window);
            QVERIFY2(clipped.isEmpty(), qPrintable(clippedMessage(name, clipped)));
        }
    }

    void aGatewaysBacklogFits_data() { languages(); }

    // The backlog with a gateway's row still waiting for its upstream: the third list, its
    // headline and the upstream drain's button fit beside the playbook.
    void aGatewaysBacklogFits()
    {
        QFETCH(QString, language);
        QCOMPARE(installTranslations(language), language);
        const auto setStatus = [this](const char *status) {
            db::Connection connection(m_demo->dsn(), QStringLiteral("t"));
            db::exec(connection.database(),
                     QStringLiteral("UPDATE pay_callback_log SET status = ? WHERE pay_no = ?"),
                     {QLatin1String(status), forwardedPayment().payNo});
        };
        setStatus("FORWARDING");
        MainWindow window(m_demo->dsn());
        showAtLaptopSize(window);
        window.showPage(Page::BacklogId);
        auto *page = static_cast<BacklogPage *>(window.page(Page::BacklogId));
        page->lists()->setCurrentIndex(2);
        QTRY_COMPARE_WITH_TIMEOUT(page->gatewayTable()->model()->rowCount(), 1, 20000);
        test::waitForData(&window);
        const QString name = QStringLiteral("backlog-gateway");
        QVERIFY2(fits(&window, kLaptop), qPrintable(fitMessage(&window, name, kLaptop)));
        screenshot(&window, language, name);
        const QStringList clipped = clippedLabels(&window);
        setStatus("FORWARDED");
        QVERIFY2(clipped.isEmpty(), qPrintable(clippedMessage(name, clipped)));
    }

    // A statement's title names its file, as long as the platform made it. Read before the
    // window is first laid out (a fast server), it must not push the reconciliation page and the
    // playbook off the screen.
    void aLongStatementTitleKeepsTheWindowOnScreen()
    {
        MainWindow window(m_demo->dsn());
        auto *statements = window.page(Page::ReconciliationId)
                               ->findChild<QComboBox *>(QStringLiteral("statementList"));
        QVERIFY(statements);
        statements->addItem(QStringLiteral(
            "#12 · WeChat Pay trade bill · 1900000109_20261202_20261203_all_trade_bill_"
            "including_refunds_and_fees_exported_by_finance.csv · 1,284,112 lines"));
        statements->setCurrentIndex(statements->count() - 1);
        window.showPage(Page::ReconciliationId);
        showAtLaptopSize(window);
        QVERIFY2(fits(&window, kLaptop),
                 qPrintable(fitMessage(&window, QStringLiteral("reconciliation"), kLaptop)));
    }

    void everyDialogFits_data() { languages(); }

    // The dialogs the console opens, each at the stage it opens with, fit the laptop too.
    void everyDialogFits()
    {
        QFETCH(QString, language);
        QCOMPARE(installTranslations(language), language);
        MainWindow window(m_demo->dsn());
        showAtLaptopSize(window);

        const auto check = [&language](QWidget *dialog, const QString &name) {
            dialog->show();
            test::waitForData(dialog);
            QVERIFY2(fits(dialog, kLaptop), qPrintable(fitMessage(dialog, name, kLaptop)));
            const QStringList clipped = clippedLabels(dialog);
            QVERIFY2(clipped.isEmpty(), qPrintable(clippedMessage(name, clipped)));
            screenshot(dialog, language, name);
            dialog->close();
        };
        SettingsDialog settings(console::ConsoleSettings::instance(), &window);
        check(&settings, QStringLiteral("settings"));
        ConnectionDialog connection(&window);
        check(&connection, QStringLiteral("connect"));
        ReportDialog report(m_demo->dsn(), &window);
        check(&report, QStringLiteral("report"));

        SwitchDialog *switchDialog = test::openSwitchDialog(window);
        QVERIFY(switchDialog);
        check(switchDialog, QStringLiteral("switch"));
        CompensationDialog *dialog = test::openCompensationPreview(window);
        QVERIFY(dialog);
        check(dialog, QStringLiteral("compensation-preview"));
        UpstreamDrainDialog upstream({test::gatewayUpstream()}, {}, 1284, &window);
        check(&upstream, QStringLiteral("upstream-drain"));
    }

private:
    // The window as a laptop shows it: the playbook docked beside the pages.
    static void showAtLaptopSize(MainWindow &window)
    {
        window.playbook()->show();
        window.resize(kLaptop);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
    }

    static void languages()
    {
        QTest::addColumn<QString>("language");
        QTest::newRow("English") << QStringLiteral("en");
        QTest::newRow("Chinese") << QStringLiteral("zh_CN");
    }

    std::unique_ptr<test::ScratchDatabase> m_demo;
    // A gateway's payment, written once on the demo database by the first test that wants it.
    const test::ForwardedPayment &forwardedPayment()
    {
        if (!m_forwarded.orderId)
            m_forwarded = test::insertForwardedPayment(m_demo->dsn());
        return m_forwarded;
    }

    test::ForwardedPayment m_forwarded;
    qint64 m_incidentOrder = 0;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleLaptop test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolelaptop.moc"
