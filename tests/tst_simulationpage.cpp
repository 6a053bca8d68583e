// The simulation page and the overview's live chart, in the console, offscreen.
#include "callbackfixture.h"
#include "console/localinstances.h"
#include "console/stormrunner.h"
#include "db/connection.h"
#include "mainwindow.h"
#include "pages/overviewpage.h"
#include "pages/simulationpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/livetrafficchart.h"

#include <QApplication>
#include <QChart>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>

using namespace payops;

namespace {

std::unique_ptr<test::ScratchDatabase> callbackDatabase(bool sandbox)
{
    auto scratch = std::make_unique<test::ScratchDatabase>(QStringLiteral("simpage"));
    test::prepareCallbackDatabase(scratch->dsn(), QStringLiteral("legacy"), 0);
    if (!sandbox) {
        db::Connection connection(scratch->dsn(), QStringLiteral("unmark"));
        db::execDirect(connection.database(),
                       QStringLiteral("DELETE FROM payops_meta WHERE name = 'sandbox'"));
    }
    return scratch;
}

SimulationPage *simulationPage(const MainWindow &window)
{
    return static_cast<SimulationPage *>(window.page(Page::SimulationId));
}

} // namespace

class TestSimulationPage final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void disablesItselfOffTheSandbox()
    {
        const auto scratch = callbackDatabase(false);
        MainWindow window(scratch->dsn());
        window.showPage(Page::SimulationId);
        window.show();
        SimulationPage *page = simulationPage(window);
        QVERIFY(page);
        QTRY_VERIFY(page->isSandbox().has_value());
        QVERIFY(!*page->isSandbox());
        QVERIFY(!page->findChild<QWidget *>(QStringLiteral("simulationControls"))->isEnabled());
        for (const char *name :
             {"startUnsafeButton", "startSafeButton", "stormStartButton", "restartSafeButton"})
            QVERIFY2(!page->findChild<QPushButton *>(QLatin1String(name))->isEnabled(), name);
        QVERIFY(page->findChild<QLabel *>(QStringLiteral("sandboxOnlyNote"))
                    ->text()
                    .contains(QLatin1String("sandbox-only")));
    }

    void drivesInstancesOnTheSandboxAndTheChartFollows()
    {
        const auto scratch = callbackDatabase(true);
        MainWindow window(scratch->dsn());
        window.localInstances()->setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
        window.showPage(Page::SimulationId);
        window.show();
        SimulationPage *page = simulationPage(window);
        QTRY_VERIFY(page->isSandbox().has_value());
        QVERIFY(*page->isSandbox());
        auto *startSafe = page->findChild<QPushButton *>(QStringLiteral("startSafeButton"));
        auto *stormStart = page->findChild<QPushButton *>(QStringLiteral("stormStartButton"));
        QVERIFY(startSafe->isEnabled());
        QVERIFY(!stormStart->isEnabled()); // nothing to fire at yet

        startSafe->click();
        auto *table = page->findChild<QTableWidget *>(QStringLiteral("localInstancesTable"));
        QTRY_VERIFY_WITH_TIMEOUT(window.localInstances()->targets().size() == 2, 30000);
        QTRY_COMPARE(table->rowCount(), 2);
        QTRY_COMPARE(table->item(0, 3)->text(), QStringLiteral("running"));
        QVERIFY(stormStart->isEnabled());

        // A small storm from the page; the overview's chart counts its callbacks.
        page->findChild<QSpinBox *>(QStringLiteral("stormOrders"))->setValue(10);
        page->findChild<QDoubleSpinBox *>(QStringLiteral("stormRate"))->setValue(0);
        stormStart->click();
        QTRY_VERIFY_WITH_TIMEOUT(page->findChild<QLabel *>(QStringLiteral("stormCounts"))
                                     ->text()
                                     .contains(QLatin1String("2xx 20")),
                                 60000);
        QTRY_VERIFY(stormStart->isEnabled());

        auto *overview = static_cast<OverviewPage *>(window.page(Page::OverviewId));
        QSignalSpy shown(overview, &OverviewPage::trafficShown);
        qreal plotted = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                overview->refreshTraffic();
                auto *rate = qobject_cast<QLineSeries *>(
                    overview->trafficChart()->chart()->series().value(0));
                plotted = 0;
                for (const QPointF &point : rate->points())
                    plotted += point.y();
                return plotted == 20;
            }(),
            10000);
        QVERIFY(!shown.isEmpty());

        window.localInstances()->stopAll();
        QTRY_VERIFY_WITH_TIMEOUT(window.localInstances()->targets().isEmpty(), 30000);
    }
};

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestSimulationPage test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_simulationpage.moc"
