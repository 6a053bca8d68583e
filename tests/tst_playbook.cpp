#include "callbackfixture.h"
#include "console/localinstances.h"
#include "console/playbook.h"
#include "console/stormrunner.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "dialogs/compensationdialog.h"
#include "dialogs/reportdialog.h"
#include "dialogs/switchdialog.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/sideeffectkeys.h"
#include "domain/money/compensationworkflow.h"
#include "mainwindow.h"
#include "models/eventmodel.h"
#include "pages/backlogpage.h"
#include "pages/compensationpage.h"
#include "pages/evidencepage.h"
#include "pages/instancespage.h"
#include "playbook/playbookdock.h"
#include "playbook/stepcard.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/switchcontrol.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTemporaryDir>

#include <chrono>
#include <thread>

using namespace payops;
using namespace payops::console;
using namespace std::chrono_literals;

namespace {

// The seed's delivery pattern: the second success callback of one payment reaches the other
// instance 40 ms after the first.
void deliverTwice(int firstPort, int secondPort, const QByteArray &body)
{
    int first = 0;
    int second = 0;
    std::thread a([&] { first = test::postCallback(firstPort, body).status; });
    std::this_thread::sleep_for(40ms);
    std::thread b([&] { second = test::postCallback(secondPort, body).status; });
    a.join();
    b.join();
    QCOMPARE(first, 200);
    QCOMPARE(second, 200);
}

bool aliveCount(const QSqlDatabase &db, int expected)
{
    return db::scalar(
               db, QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE stopped_at IS NULL "
                                  "AND last_seen_at >= UTC_TIMESTAMP(3) - INTERVAL 2 SECOND"))
               .toInt() == expected;
}

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

QString scalarText(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toString();
}

// The live duplicate groups, counted independently of the watch: a GROUP BY over both tables.
qint64 liveDuplicateGroups(const QSqlDatabase &db)
{
    return count(db,
                 QStringLiteral(
                     "SELECT COUNT(*) FROM (SELECT 1 FROM user_coupon WHERE superseded_by IS NULL "
                     "GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1) c")) +
           count(db, QStringLiteral("SELECT COUNT(*) FROM (SELECT 1 FROM point_log WHERE "
                                    "superseded_by IS NULL AND reverses_id IS NULL "
                                    "GROUP BY order_id, point_type HAVING COUNT(*) > 1) p"));
}

StepState stateOn(PlaybookDock *dock, PlaybookStep step)
{
    return dock->card(step)->state();
}

QString reasonOn(PlaybookDock *dock, PlaybookStep step)
{
    return dock->card(step)
        ->findChild<QLabel *>(QStringLiteral("step%1Reason").arg(int(step)))
        ->text();
}

QPushButton *buttonOn(PlaybookDock *dock, PlaybookStep step, const char *name)
{
    return dock->card(step)->findChild<QPushButton *>(
        QStringLiteral("step%1%2").arg(int(step)).arg(QLatin1String(name)));
}

// Answers the dock's question with its go-ahead button (not Cancel).
void answerYes(PlaybookDock *dock, const char *name)
{
    QMessageBox *box = nullptr;
    QTRY_VERIFY((box = dock->findChild<QMessageBox *>(QLatin1String(name))));
    QAbstractButton *yes = nullptr;
    for (QAbstractButton *button : box->buttons())
        if (box->buttonRole(button) == QMessageBox::AcceptRole)
            yes = button;
    QVERIFY(yes);
    yes->click();
}

// Flips the switch through the page's control and its dialog, as an operator does, and waits
// until every instance has acknowledged it.
void flipThrough(Page *page, SwitchControl *control, const QString &to, const QString &reason)
{
    // The control offers what the page last read: wait until that is the way to `to`.
    page->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(control->isEnabled() && control->text().contains(to), 10000);
    QTest::mouseClick(control, Qt::LeftButton);
    test::confirmFlip(control->dialog(), reason);
}

// PAYOPS_SCREENSHOTS=DIR: the window with the playbook, saved as DIR/playbook-<n>.png.
void screenshot(MainWindow &window, int step)
{
    const QString dir = qEnvironmentVariable("PAYOPS_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    if (step > 0)
        window.playbook()->findChild<QScrollArea *>()->ensureWidgetVisible(
            window.playbook()->card(PlaybookStep(step)));
    QCoreApplication::processEvents();
    QVERIFY(window.grab().save(QDir(dir).filePath(QStringLiteral("playbook-%1.png").arg(step))));
}

struct Playbook
{
    QList<StepStatus> steps;

    const StepStatus &at(PlaybookStep step) const { return steps.at(int(step) - 1); }
    StepState state(PlaybookStep step) const { return at(step).state; }
    QString reason(PlaybookStep step) const { return at(step).reason; }
};

Playbook check(const QSqlDatabase &db, const PlaybookContext &context = {})
{
    return Playbook{evaluatePlaybook(readPlaybookFacts(db, 100), context)};
}

} // namespace

class TestPlaybook final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The states no incident run passes through, from facts alone.
    void edgesOfTheChecks()
    {
        PlaybookFacts facts;
        facts.sandbox = true;
        facts.watch.scanState = QStringLiteral("SCANNING");
        facts.watch.scanStart = 1;
        facts.watch.scanCursor = 50;
        facts.watch.scanEnd = 100;
        Playbook counting{evaluatePlaybook(facts)};
        QCOMPARE(counting.state(PlaybookStep::Detect), StepState::InProgress);
        QCOMPARE(counting.state(PlaybookStep::InspectGreen), StepState::InProgress);
        QVERIFY2(counting.reason(PlaybookStep::InspectGreen)
                     .contains(QStringLiteral("%1 %").arg(facts.watch.percentScanned())),
                 qPrintable(counting.reason(PlaybookStep::InspectGreen)));

        facts.watchMissing = true;
        Playbook unwatched{evaluatePlaybook(facts)};
        QCOMPARE(unwatched.state(PlaybookStep::Detect), StepState::NotAvailable);
        QCOMPARE(unwatched.state(PlaybookStep::InspectGreen), StepState::NotAvailable);
        QCOMPARE(countedSteps(unwatched.steps), 8);

        // Open duplicates with a four-eyes request filed: compensation is under way.
        facts = {};
        facts.sandbox = true;
        facts.watch.scanState = QStringLiteral("DONE");
        facts.watch.units << DuplicateWatchFigures::Unit{CouponBit, 1000, 2, 2, 0};
        facts.watch.openOrders = 2;
        facts.pendingRequests = 1;
        Playbook waiting{evaluatePlaybook(facts)};
        QCOMPARE(waiting.state(PlaybookStep::Compensate), StepState::InProgress);
        QVERIFY2(waiting.reason(PlaybookStep::Compensate).contains(QStringLiteral("four-eyes")),
                 qPrintable(waiting.reason(PlaybookStep::Compensate)));
        QVERIFY2(waiting.reason(PlaybookStep::Scope)
                     .contains(QStringLiteral("2 duplicate group(s) on 2 order(s), ¥20.00")),
                 qPrintable(waiting.reason(PlaybookStep::Scope)));

        // RECORD_ONLY with nothing running: nothing can process, so nothing bleeds.
        facts.inspection.switchState.mode = CallbackMode::RecordOnly;
        facts.inspection.switchState.version = 4;
        QCOMPARE(Playbook{evaluatePlaybook(facts)}.state(PlaybookStep::StopBleeding),
                 StepState::Done);
        facts.instancesAlive = 3;
        facts.unacknowledged = 1;
        Playbook late{evaluatePlaybook(facts)};
        QCOMPARE(late.state(PlaybookStep::StopBleeding), StepState::InProgress);
        QVERIFY2(late.reason(PlaybookStep::StopBleeding).contains(QStringLiteral("1 of 3")),
                 qPrintable(late.reason(PlaybookStep::StopBleeding)));
    }

    // Each step's own check, through the incident on a sandbox, with the real handlers: the
    // state only a step's own condition in the database changes.
    void stepsFollowTheIncidentOnASandbox()
    {
        test::ScratchDatabase scratch(QStringLiteral("playbook"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 20);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();

        Playbook before = check(db);
        QCOMPARE(before.steps.size(), kPlaybookSteps);
        for (int i = 0; i < kPlaybookSteps; ++i)
            QCOMPARE(int(before.steps.at(i).step), i + 1);
        QCOMPARE(before.state(PlaybookStep::Simulate), StepState::ToDo);
        QCOMPARE(before.state(PlaybookStep::Detect), StepState::ToDo);
        QCOMPARE(before.state(PlaybookStep::StopBleeding), StepState::ToDo);
        QCOMPARE(before.state(PlaybookStep::Scope), StepState::ToDo);
        QCOMPARE(before.state(PlaybookStep::ProveRootCause), StepState::ToDo);
        QCOMPARE(before.state(PlaybookStep::Compensate), StepState::ToDo);
        // Legacy: no side-effect keys, so the fix is not in even with no handler running.
        QCOMPARE(before.state(PlaybookStep::Fix), StepState::InProgress);
        QVERIFY2(before.reason(PlaybookStep::Fix).contains(QStringLiteral("keys missing")),
                 qPrintable(before.reason(PlaybookStep::Fix)));
        QCOMPARE(before.state(PlaybookStep::ExportReport), StepState::ToDo);
        QCOMPARE(countedSteps(before.steps), 10);
        // What the console knows and the database does not: a storm firing.
        QCOMPARE(check(db, PlaybookContext{true}).state(PlaybookStep::Simulate),
                 StepState::InProgress);

        {
            // 1. Simulate: the incident's handler on two instances, each payment delivered twice.
            // A window far wider than the 40 ms between the copies: on a loaded machine a copy's
            // thread can start late enough that the other copy committed before it arrived.
            const QStringList wideWindow{QStringLiteral("--commit-delay-ms"),
                                         QStringLiteral("500")};
            test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("unsafe-a"), wideWindow);
            test::CallbackdProcess b(scratch.dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("unsafe-b"), wideWindow);
            QTRY_VERIFY_WITH_TIMEOUT(aliveCount(db, 2), 10000);
            Playbook running = check(db);
            QCOMPARE(running.state(PlaybookStep::Simulate), StepState::InProgress);
            QCOMPARE(running.state(PlaybookStep::Fix), StepState::ToDo);
            QVERIFY2(running.reason(PlaybookStep::Fix).contains(QStringLiteral("2 unsafe-demo")),
                     qPrintable(running.reason(PlaybookStep::Fix)));
            for (qint64 order = 1001; order <= 1003; ++order)
                deliverTwice(a.port(), b.port(),
                             test::callbackBody("WX-" + QByteArray::number(order), order, 9900));

            // 2, 4, 5: detected, scoped, proven.
            Playbook bleeding = check(db);
            QCOMPARE(bleeding.state(PlaybookStep::Simulate), StepState::Done);
            QCOMPARE(bleeding.state(PlaybookStep::Detect), StepState::Done);
            QCOMPARE(bleeding.state(PlaybookStep::Scope), StepState::Done);
            // Two coupon templates and one point type, each twice, on each of the three orders.
            QVERIFY2(bleeding.reason(PlaybookStep::Scope)
                         .contains(QStringLiteral("9 duplicate group(s) on 3 order(s)")),
                     qPrintable(bleeding.reason(PlaybookStep::Scope)));
            QCOMPARE(bleeding.state(PlaybookStep::ProveRootCause), StepState::Done);
            QVERIFY2(bleeding.reason(PlaybookStep::ProveRootCause)
                             .contains(QStringLiteral("Order 1001: unsafe-")) &&
                         bleeding.reason(PlaybookStep::ProveRootCause)
                             .contains(QStringLiteral("before its commit")),
                     qPrintable(bleeding.reason(PlaybookStep::ProveRootCause)));
            QCOMPARE(bleeding.state(PlaybookStep::StopBleeding), StepState::ToDo);
            QCOMPARE(bleeding.state(PlaybookStep::Compensate), StepState::ToDo);
            QCOMPARE(bleeding.state(PlaybookStep::InspectGreen), StepState::ToDo);
            QVERIFY2(bleeding.reason(PlaybookStep::InspectGreen)
                         .contains(QStringLiteral("9 duplicate group(s)")),
                     qPrintable(bleeding.reason(PlaybookStep::InspectGreen)));

            // 3. Record-only, and done only once every live instance applies the new version.
            const FlipResult flip =
                flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("INC-13 playbook"));
            const QList<InstanceAck> acks = waitForAcknowledgement(db, flip.after.version, 10000);
            QCOMPARE(acks.size(), 2);
            Playbook stopped = check(db);
            QCOMPARE(stopped.state(PlaybookStep::StopBleeding), StepState::Done);
            QVERIFY2(stopped.reason(PlaybookStep::StopBleeding)
                         .contains(QStringLiteral("all 2 live instance(s)")),
                     qPrintable(stopped.reason(PlaybookStep::StopBleeding)));
            // A heartbeat that still names the old version is a live instance not confirming.
            db::exec(db, QStringLiteral(
                             "UPDATE callback_switch SET version = version + 1 WHERE id = 1"));
            Playbook late = check(db);
            QCOMPARE(late.state(PlaybookStep::StopBleeding), StepState::InProgress);
            // One of them may already have read the new version by its next heartbeat.
            QVERIFY2(late.reason(PlaybookStep::StopBleeding)
                         .contains(QStringLiteral(" of 2 live instance(s) have not confirmed")),
                     qPrintable(late.reason(PlaybookStep::StopBleeding)));
            QTRY_COMPARE_WITH_TIMEOUT(check(db).state(PlaybookStep::StopBleeding), StepState::Done,
                                      10000);
        } // both unsafe instances stop here

        {
            // A payment arriving meanwhile is only recorded: the backlog step has work.
            test::CallbackdProcess safe(scratch.dsn(), QStringLiteral("safe"),
                                        QStringLiteral("safe-a"));
            QCOMPARE(
                test::postCallback(safe.port(), test::callbackBody("WX-1004", 1004, 9900)).status,
                200);
            Playbook recorded = check(db);
            QCOMPARE(recorded.state(PlaybookStep::Drain), StepState::ToDo);
            QVERIFY2(recorded.reason(PlaybookStep::Drain)
                         .contains(QStringLiteral("1 recorded callback(s)")),
                     qPrintable(recorded.reason(PlaybookStep::Drain)));
        }

        // 7 before 6 is refused: the keys cannot go in over live duplicates.
        {
            const SideEffectKeysResult refused = applySideEffectKeys(connection);
            QVERIFY(refused.refused);
            QCOMPARE(check(db).state(PlaybookStep::Fix), StepState::InProgress);
        }

        // 6. Compensate every duplicate.
        CompensationJob job;
        job.scope = CompensationScope::all();
        job.reason = QStringLiteral("INC-13 playbook");
        job.ticket = QStringLiteral("INC-13");
        const CompensationResult compensated = runCompensation(db, job);
        QVERIFY2(compensated.refusal.isEmpty(), qPrintable(compensated.refusal));
        QCOMPARE(compensated.filedRequestId, qint64(0));
        Playbook repaired = check(db);
        QCOMPARE(repaired.state(PlaybookStep::Compensate), StepState::Done);
        QCOMPARE(repaired.state(PlaybookStep::Detect),
                 StepState::Done); // seen, and compensated since
        // The evidence stays provable from the last compensated order.
        QCOMPARE(repaired.state(PlaybookStep::ProveRootCause), StepState::Done);

        // 7. The keys, and no unsafe handler running: the fix is in.
        const SideEffectKeysResult keys = applySideEffectKeys(connection);
        QVERIFY2(keys.applied, qPrintable(keys.message));
        Playbook fixed = check(db);
        QCOMPARE(fixed.state(PlaybookStep::Fix), StepState::Done);
        QCOMPARE(fixed.state(PlaybookStep::StopBleeding), StepState::Done);
        QVERIFY2(fixed.reason(PlaybookStep::Drain).contains(QStringLiteral("resume processing")),
                 qPrintable(fixed.reason(PlaybookStep::Drain)));

        // 8. Resume and drain.
        flipSwitch(db, CallbackMode::Normal, QStringLiteral("INC-13 fixed"));
        QCOMPARE(check(db).state(PlaybookStep::Drain), StepState::ToDo);
        const DrainResult drained = drainBacklog(scratch.dsn(), DrainOptions{});
        QCOMPARE(drained.processed, 1);

        // 9. Green, as payops inspect says.
        Playbook green = check(db);
        QCOMPARE(green.state(PlaybookStep::Drain), StepState::Done);
        QCOMPARE(green.state(PlaybookStep::InspectGreen), StepState::Done);
        QCOMPARE(green.state(PlaybookStep::StopBleeding),
                 StepState::Done); // NORMAL, with the fix in
        QCOMPARE(doneSteps(green.steps), 9);
        // 10. The report is the console's to know: a file, not a row.
        QCOMPARE(green.state(PlaybookStep::ExportReport), StepState::ToDo);
        QVERIFY2(green.reason(PlaybookStep::ExportReport).contains(QStringLiteral("Clean")),
                 qPrintable(green.reason(PlaybookStep::ExportReport)));
        QCOMPARE(check(db, PlaybookContext{false, true}).state(PlaybookStep::ExportReport),
                 StepState::Done);
        const test::CliRun inspect = test::runCli(
            {QStringLiteral("inspect"), QStringLiteral("--db"), scratch.dsn().toString()});
        QCOMPARE(inspect.exitCode, 0);
    }

    // The whole playbook in the console, on a sandbox, as a presenter runs it: every step through
    // the dock's buttons and the pages they open, the database checked after each.
    void thePlaybookRunsTheIncidentInTheConsole()
    {
        test::ScratchDatabase scratch(QStringLiteral("playbook_gui"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 3);
        db::Connection connection(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = connection.database();

        MainWindow window(scratch.dsn());
        window.resize(1500, 980);
        window.show();
        console::LocalInstances &instances = *window.localInstances();
        instances.setCallbackdPath(test::callbackdPath());
        console::StormRunner &storm = *window.stormRunner();
        PlaybookDock *dock = window.playbook();
        // A sandbox: the playbook shows itself.
        QTRY_VERIFY_WITH_TIMEOUT(dock->isVisible(), 15000);
        QCOMPARE(stateOn(dock, PlaybookStep::Simulate), StepState::ToDo);
        QCOMPARE(stateOn(dock, PlaybookStep::Detect), StepState::ToDo);
        QCOMPARE(stateOn(dock, PlaybookStep::ExportReport), StepState::ToDo);
        screenshot(window, 0);

        // 1. Simulate: two unsafe-demo instances and a storm of doubled callbacks.
        QSignalSpy stormDone(&storm, &console::StormRunner::finished);
        buttonOn(dock, PlaybookStep::Simulate, "Run")->click();
        answerYes(dock, "runIncidentConfirm");
        QTRY_COMPARE_WITH_TIMEOUT(instances.targets().size(), 2, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(stormDone.size(), 1, 90000);
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM callback_instance WHERE handler = 'unsafe-demo' "
                          "AND stopped_at IS NULL")),
            qint64(2));
        const qint64 paid =
            count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"));
        QVERIFY2(paid >= 40, qPrintable(QString::number(paid)));
        const qint64 groups = liveDuplicateGroups(db);
        QVERIFY2(groups > 0, "the storm paid nothing twice");
        dock->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Simulate), StepState::Done, 15000);
        screenshot(window, 1);

        // 2. Detected, and the overview behind it.
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Detect), StepState::Done, 15000);
        buttonOn(dock, PlaybookStep::Detect, "Open")->click();
        QVERIFY(window.page(Page::OverviewId)->isVisible());
        screenshot(window, 2);

        // 3. Stop the bleeding on the instances page; every instance confirms.
        buttonOn(dock, PlaybookStep::StopBleeding, "Open")->click();
        auto *instancesPage = static_cast<InstancesPage *>(window.page(Page::InstancesId));
        QVERIFY(instancesPage->isVisible());
        flipThrough(instancesPage, instancesPage->switchControl(), QStringLiteral("RECORD_ONLY"),
                    QStringLiteral("INC-13 duplicate coupons"));
        QCOMPARE(scalarText(db, QStringLiteral("SELECT mode FROM callback_switch")),
                 QStringLiteral("RECORD_ONLY"));
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM callback_instance WHERE stopped_at IS NULL AND "
                          "switch_version_applied < (SELECT version FROM callback_switch)")),
            qint64(0));
        dock->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::StopBleeding), StepState::Done,
                                  15000);
        QVERIFY2(reasonOn(dock, PlaybookStep::StopBleeding)
                     .contains(QStringLiteral("all 2 live instance(s)")),
                 qPrintable(reasonOn(dock, PlaybookStep::StopBleeding)));
        screenshot(window, 3);

        // 4. Scope: the dock's figure is the GROUP BY's.
        QCOMPARE(stateOn(dock, PlaybookStep::Scope), StepState::Done);
        QVERIFY2(reasonOn(dock, PlaybookStep::Scope)
                     .contains(QStringLiteral("%1 duplicate group(s)").arg(groups)),
                 qPrintable(reasonOn(dock, PlaybookStep::Scope)));
        buttonOn(dock, PlaybookStep::Scope, "Open")->click();
        QVERIFY(window.page(Page::DuplicatesId)->isVisible());
        screenshot(window, 4);

        // 5. The evidence of one affected order: its lock went before its commit.
        QCOMPARE(stateOn(dock, PlaybookStep::ProveRootCause), StepState::Done);
        buttonOn(dock, PlaybookStep::ProveRootCause, "Open")->click();
        auto *evidence = static_cast<EvidencePage *>(window.page(Page::EvidenceId));
        QVERIFY(evidence->isVisible());
        QVERIFY(evidence->orderId() > 0);
        QVERIFY(count(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE order_id = %1 "
                                         "AND lock_released_at < committed_at")
                              .arg(evidence->orderId())) > 0);
        QVERIFY2(reasonOn(dock, PlaybookStep::ProveRootCause)
                     .contains(QStringLiteral("Order %1").arg(evidence->orderId())),
                 qPrintable(reasonOn(dock, PlaybookStep::ProveRootCause)));
        // The page draws the order's callbacks (its events come from the same traces).
        QTRY_VERIFY_WITH_TIMEOUT(evidence->events()->rowCount() > 0, 15000);
        screenshot(window, 5);

        // 7 before 6: the keys are refused over live duplicates, and nothing changes.
        buttonOn(dock, PlaybookStep::Fix, "ApplyKeys")->click();
        answerYes(dock, "applyKeysConfirm");
        auto *message = dock->findChild<QLabel *>(QStringLiteral("playbookMessage"));
        QTRY_VERIFY_WITH_TIMEOUT(
            message->isVisible() && message->text().contains(QStringLiteral("compensate")), 30000);
        QCOMPARE(
            count(db, QStringLiteral("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
                                     "table_schema = DATABASE() AND index_name = 'uk_order_tpl'")),
            qint64(0));

        // 6. Compensate every open duplicate from the compensation page.
        buttonOn(dock, PlaybookStep::Compensate, "Open")->click();
        auto *compensation = static_cast<CompensationPage *>(window.page(Page::CompensationId));
        QVERIFY(compensation->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(
            compensation->findChild<QPushButton *>(QStringLiteral("compensateEverything"))
                ->isEnabled(),
            10000);
        CompensationDialog *dialog = compensation->compensateEverything();
        auto *act = dialog->findChild<QPushButton *>(QStringLiteral("actButton"));
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit")),
                         QStringLiteral("INC-13 duplicates"));
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("ticketEdit")),
                         QStringLiteral("INC-13"));
        QTRY_VERIFY_WITH_TIMEOUT(act->isEnabled(), 10000);
        QTest::mouseClick(act, Qt::LeftButton);
        QTest::mouseClick(dialog->findChild<QPushButton *>(QStringLiteral("confirmButton")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            dialog->findChild<QPushButton *>(QStringLiteral("closeButton"))->isEnabled(), 30000);
        dialog->close();
        QCOMPARE(liveDuplicateGroups(db), qint64(0));
        QVERIFY(count(db, QStringLiteral("SELECT COUNT(*) FROM compensation")) >= groups);
        dock->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Compensate), StepState::Done, 15000);
        screenshot(window, 6);

        // 7. The keys, then the instances restarted with the safe handler.
        buttonOn(dock, PlaybookStep::Fix, "ApplyKeys")->click();
        answerYes(dock, "applyKeysConfirm");
        QTRY_COMPARE_WITH_TIMEOUT(
            count(db, QStringLiteral(
                          "SELECT COUNT(DISTINCT index_name) FROM information_schema.STATISTICS "
                          "WHERE table_schema = DATABASE() "
                          "AND index_name IN ('uk_order_tpl', 'uk_order_type')")),
            qint64(2), 60000);
        dock->refresh();
        // Keys in, the unsafe handler still running.
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Fix), StepState::InProgress, 15000);
        QVERIFY(buttonOn(dock, PlaybookStep::Fix, "RestartSafe")->isEnabled());
        QVERIFY(!buttonOn(dock, PlaybookStep::Fix, "ApplyKeys")->isEnabled());
        buttonOn(dock, PlaybookStep::Fix, "RestartSafe")->click();
        answerYes(dock, "restartSafeConfirm");
        QTRY_COMPARE_WITH_TIMEOUT(
            count(db,
                  QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE handler = 'safe' "
                                 "AND stopped_at IS NULL")),
            qint64(2), 30000);
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM callback_instance WHERE handler = 'unsafe-demo' "
                          "AND stopped_at IS NULL")),
            qint64(0));
        dock->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Fix), StepState::Done, 15000);
        // Payments arriving at the safe instances while RECORD_ONLY holds are only recorded.
        QTRY_COMPARE_WITH_TIMEOUT(instances.targets().size(), 2, 30000);
        const int port = instances.instances().first().port;
        for (qint64 order = 1001; order <= 1003; ++order)
            QCOMPARE(test::postCallback(
                         port, test::callbackBody("LATE-" + QByteArray::number(order), order, 9900),
                         0, instances.secret())
                         .status,
                     200);
        QCOMPARE(count(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")),
                 qint64(3));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE id BETWEEN 1001 AND "
                                          "1003 AND status = 'PAID'")),
                 qint64(0));
        dock->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(
            reasonOn(dock, PlaybookStep::Drain).contains(QStringLiteral("3 recorded callback(s)")),
            15000);
        screenshot(window, 7);

        // 8. Resume on the backlog page, then drain what was recorded meanwhile.
        QVERIFY2(reasonOn(dock, PlaybookStep::Drain).contains(QStringLiteral("resume processing")),
                 qPrintable(reasonOn(dock, PlaybookStep::Drain)));
        buttonOn(dock, PlaybookStep::Drain, "Open")->click();
        auto *backlog = static_cast<BacklogPage *>(window.page(Page::BacklogId));
        QVERIFY(backlog->isVisible());
        flipThrough(backlog, backlog->switchControl(), QStringLiteral("NORMAL"),
                    QStringLiteral("INC-13 fixed"));
        QCOMPARE(scalarText(db, QStringLiteral("SELECT mode FROM callback_switch")),
                 QStringLiteral("NORMAL"));
        backlog->refresh();
        auto *process = backlog->findChild<QPushButton *>(QStringLiteral("processBacklogButton"));
        QTRY_VERIFY_WITH_TIMEOUT(process->isEnabled(), 15000);
        backlog->processBacklog();
        auto *box = backlog->findChild<QMessageBox *>(QStringLiteral("drainConfirm"));
        QVERIFY(box);
        box->button(QMessageBox::Yes)->click();
        QTRY_COMPARE_WITH_TIMEOUT(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")),
            qint64(0), 30000);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE id BETWEEN 1001 AND "
                                          "1003 AND status = 'PAID'")),
                 qint64(3));
        dock->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::Drain), StepState::Done, 15000);
        screenshot(window, 8);

        // 9. Green, as payops inspect says, and every step that exists done.
        buttonOn(dock, PlaybookStep::InspectGreen, "Check")->click();
        QTRY_COMPARE_WITH_TIMEOUT(stateOn(dock, PlaybookStep::InspectGreen), StepState::Done,
                                  15000);
        QTRY_VERIFY_WITH_TIMEOUT(dock->findChild<QLabel *>(QStringLiteral("playbookSummary"))
                                     ->text()
                                     .contains(QStringLiteral("9 of 10 steps done")),
                                 15000);
        const test::CliRun inspect = test::runCli(
            {QStringLiteral("inspect"), QStringLiteral("--db"), scratch.dsn().toString()});
        QCOMPARE(inspect.exitCode, 0);
        QCOMPARE(stateOn(dock, PlaybookStep::ExportReport), StepState::ToDo);
        screenshot(window, 9);

        // 10. The incident report, from the step's button.
        buttonOn(dock, PlaybookStep::ExportReport, "Report")->click();
        QTRY_VERIFY_WITH_TIMEOUT(window.findChild<ReportDialog *>() != nullptr, 5000);
        ReportDialog *report = window.findChild<ReportDialog *>();
        QSignalSpy written(report, &ReportDialog::finished);
        QTemporaryDir reports;
        const QString pdf = reports.filePath(QStringLiteral("incident.pdf"));
        report->setWindow(QDateTime::currentDateTimeUtc().addSecs(-3600),
                          QDateTime::currentDateTimeUtc().addSecs(60));
        report->setPath(pdf);
        report->write();
        QTRY_COMPARE_WITH_TIMEOUT(written.size(), 1, 60000);
        QCOMPARE(written[0][0].toString(), pdf);
        QVERIFY(QFileInfo(pdf).size() > 0);
        QCOMPARE(stateOn(dock, PlaybookStep::ExportReport), StepState::Done);
        QVERIFY(dock->findChild<QLabel *>(QStringLiteral("playbookSummary"))
                    ->text()
                    .contains(QStringLiteral("10 of 10 steps done")));
        report->close();
        screenshot(window, 10);
    }

    // script/demo's sandbox, as a presenter first sees it: its past incident is detected,
    // scoped and provable, and waits for the rest.
    void theDemoSandboxShowsItsPastIncident()
    {
        const auto demo = test::demoDatabase();
        db::Connection connection(demo->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        Playbook first = check(db);
        QCOMPARE(first.state(PlaybookStep::Detect), StepState::Done);
        QCOMPARE(first.state(PlaybookStep::Scope), StepState::Done);
        QVERIFY2(first.reason(PlaybookStep::Scope).contains(QStringLiteral("on 48 order(s)")),
                 qPrintable(first.reason(PlaybookStep::Scope)));
        QCOMPARE(first.state(PlaybookStep::ProveRootCause), StepState::Done);
        QCOMPARE(first.state(PlaybookStep::Compensate), StepState::ToDo);
        QCOMPARE(first.state(PlaybookStep::Fix),
                 StepState::InProgress); // legacy: no keys, nothing running
        QCOMPARE(first.state(PlaybookStep::InspectGreen), StepState::ToDo);
    }

    // Elsewhere the playbook is a runbook: no simulation, and the handler's fix is judged by
    // the posture's traces, not by instances the console started.
    void aRealDatabaseHasNoSimulation()
    {
        test::ScratchDatabase scratch(QStringLiteral("playbook_real"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 5);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        db::exec(db, QStringLiteral("DELETE FROM payops_meta WHERE name = 'sandbox'"));

        Playbook quiet = check(db);
        QCOMPARE(quiet.state(PlaybookStep::Simulate), StepState::NotAvailable);
        QVERIFY2(quiet.reason(PlaybookStep::Simulate).contains(QStringLiteral("sandbox only")),
                 qPrintable(quiet.reason(PlaybookStep::Simulate)));
        QCOMPARE(countedSteps(quiet.steps), 9);
        // Keys in place, but no callback of the last hour shows how the handler locks.
        QCOMPARE(quiet.state(PlaybookStep::Fix), StepState::InProgress);
        QVERIFY2(quiet.reason(PlaybookStep::Fix)
                     .contains(QStringLiteral("no callback in the last hour")),
                 qPrintable(quiet.reason(PlaybookStep::Fix)));

        test::CallbackdProcess safe(scratch.dsn(), QStringLiteral("safe"),
                                    QStringLiteral("safe-a"));
        QCOMPARE(test::postCallback(safe.port(), test::callbackBody("WX-1001", 1001, 9900)).status,
                 200);
        Playbook deployed = check(db);
        QCOMPARE(deployed.state(PlaybookStep::Fix), StepState::Done);
        QVERIFY2(deployed.reason(PlaybookStep::Fix).contains(QStringLiteral("across the commit")),
                 qPrintable(deployed.reason(PlaybookStep::Fix)));
        QCOMPARE(deployed.state(PlaybookStep::InspectGreen), StepState::Done);

        // In the console: not shown unless asked for, and no simulation offered.
        MainWindow window(scratch.dsn());
        window.show();
        PlaybookDock *dock = window.playbook();
        QSignalSpy checked(dock, &PlaybookDock::checked);
        QTRY_VERIFY_WITH_TIMEOUT(checked.size() >= 1, 15000);
        QVERIFY(!dock->isVisible());
        window.findChild<QAction *>(QStringLiteral("actionPlaybook"))->trigger();
        QVERIFY(dock->isVisible());
        QCOMPARE(stateOn(dock, PlaybookStep::Simulate), StepState::NotAvailable);
        QVERIFY(buttonOn(dock, PlaybookStep::Simulate, "Run")->isHidden());
        QVERIFY(buttonOn(dock, PlaybookStep::Fix, "RestartSafe")->isHidden());
        QTRY_VERIFY_WITH_TIMEOUT(dock->findChild<QLabel *>(QStringLiteral("playbookSummary"))
                                     ->text()
                                     .contains(QStringLiteral("of 9 steps done")),
                                 15000);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestPlaybook test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_playbook.moc"
