// Not a test: the pictures of the incident in docs/screenshots, for script/screenshots. It runs
// the incident for a minute and a half against two unsafe-demo instances on a scratch database
// of the test run's MariaDB and saves the simulation page (simulation.png) and the Defences
// page the storm leaves (posture.png), flips the switch half-way and saves the overview's live
// chart (overview-live.png). What the pages do is checked by tst_simulationpage and
// tst_posturepage; this only draws them.
// Usage: screenshots_simulation DIR (the server started by tests/harness/mariadb.sh).
#include "callbackfixture.h"
#include "console/localinstances.h"
#include "console/stormrunner.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "mainwindow.h"
#include "models/posturemodel.h"
#include "pages/overviewpage.h"
#include "pages/posturepage.h"
#include "pages/simulationpage.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>

#include <cstdio>
#include <functional>

using namespace payops;

namespace {

// Processes events until `done` holds; false after `timeoutMs`.
bool waitFor(const std::function<bool()> &done, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!done()) {
        if (deadline.hasExpired())
            return false;
        QTest::qWait(100);
    }
    return true;
}

int fail(const char *what)
{
    std::fprintf(stderr, "screenshots_simulation: %s\n", what);
    return 1;
}

} // namespace

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    if (argc != 2)
        return fail("usage: screenshots_simulation DIR");
    const QString directory = QString::fromLocal8Bit(argv[1]);

    test::ScratchDatabase scratch(QStringLiteral("shots"));
    test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
    MainWindow window(scratch.dsn());
    window.resize(1400, 900);
    window.localInstances()->setCallbackdPath(QStringLiteral(PAYOPS_CALLBACKD_PATH));
    window.showPage(Page::SimulationId);
    window.show();
    auto *page = static_cast<SimulationPage *>(window.page(Page::SimulationId));
    if (!waitFor([&] { return page->isSandbox().value_or(false); }, 10000))
        return fail("the simulation page never saw a sandbox");
    page->findChild<QPushButton *>(QStringLiteral("startUnsafeButton"))->click();
    if (!waitFor([&] { return window.localInstances()->targets().size() == 2; }, 30000))
        return fail("the two unsafe-demo instances did not start");
    page->findChild<QSpinBox *>(QStringLiteral("stormOrders"))->setValue(1200);
    page->findChild<QDoubleSpinBox *>(QStringLiteral("stormRate"))->setValue(12);
    page->findChild<QPushButton *>(QStringLiteral("stormStartButton"))->click();
    QTest::qWait(40000);
    page->findChild<QTabWidget *>(QStringLiteral("simulationTabs"))->setCurrentIndex(0);
    if (!window.grab().save(directory + QStringLiteral("/simulation.png")))
        return fail("cannot write simulation.png");
    // The defences the storm proved missing: the CAS, the side-effect keys, the lock across the
    // commit, each from what the unsafe-demo instances traced.
    window.showPage(Page::PostureId);
    auto *posture = static_cast<PosturePage *>(window.page(Page::PostureId));
    posture->refresh();
    if (!waitFor([&] { return posture->model()->rowCount() == 8; }, 20000))
        return fail("the Defences page never read the defences");
    QTest::qWait(3000);
    if (!window.grab().save(directory + QStringLiteral("/posture.png")))
        return fail("cannot write posture.png");
    window.showPage(Page::SimulationId);
    {
        db::Connection connection(scratch.dsn(), QStringLiteral("flip"));
        flipSwitch(connection.database(), CallbackMode::RecordOnly,
                   QStringLiteral("INC-42 duplicate coupons"));
    }
    QTest::qWait(45000);
    window.stormRunner()->stop();
    window.showPage(Page::OverviewId);
    auto *overview = static_cast<OverviewPage *>(window.page(Page::OverviewId));
    QSignalSpy shown(overview, &OverviewPage::trafficShown);
    overview->refresh();
    if (!waitFor([&] { return !shown.isEmpty(); }, 10000))
        return fail("the overview never drew its traffic");
    QTest::qWait(3000);
    if (!window.grab().save(directory + QStringLiteral("/overview-live.png")))
        return fail("cannot write overview-live.png");
    window.localInstances()->stopAll();
    waitFor([&] { return window.localInstances()->targets().isEmpty(); }, 30000);
    return 0;
}
