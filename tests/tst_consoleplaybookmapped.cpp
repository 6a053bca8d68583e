#include "console/playbook.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "domain/mapping/mappedcompensation.h"
#include "domain/mapping/mapping.h"
#include "gatewayrows.h"
#include "mainwindow.h"
#include "playbook/playbookdock.h"
#include "playbook/stepcard.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QAction>
#include <QApplication>
#include <QPushButton>
#include <QScrollArea>

using namespace payops;
using console::PlaybookStep;
using console::StepState;

namespace {

console::StepStatus stepOf(const PlaybookDock &dock, PlaybookStep step)
{
    return dock.steps().value(int(step) - 1);
}

// Asks the dock to check again (a check in flight runs once more after it): polled by
// QTRY_*, the dock checks until its steps show what the test waits for.
bool recheck(PlaybookDock &dock)
{
    dock.refresh();
    return true;
}

} // namespace

// The playbook on a team's own tables (docs/mapping.md): its facts come from the mapped watch,
// mapped_compensation and the mapped posture, and the steps of payops's own callback handling
// say why they are not available.
class TestConsolePlaybookMapped final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void playbookReadsTheTeamsTables_data()
    {
        QTest::addColumn<db::SchemaLevel>("level");
        QTest::newRow("current") << db::SchemaLevel::Current;
        QTest::newRow("legacy") << db::SchemaLevel::Legacy;
    }

    void playbookReadsTheTeamsTables()
    {
        QFETCH(db::SchemaLevel, level);
        test::TeamShop shop(level);
        test::ScratchAccount op(QStringLiteral("payops_operator"));
        shop.grantCompensation(op);
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        const Dsn dsn = op.dsnFor(shop.dsn().database);

        MainWindow window(std::nullopt);
        window.resize(1366, 740);
        auto *dock = window.findChild<PlaybookDock *>(QStringLiteral("playbookDock"));
        QVERIFY(dock);
        QSignalSpy checked(dock, &PlaybookDock::checked);
        window.connectTo(console::Target{dsn, mapping});
        window.show();
        dock->show();
        QVERIFY(checked.wait(20000));

        // Detect and scope see the planted groups, as many as the page and `inspect` count.
        const qint64 planted = test::TeamShop::kCouponGroups + test::TeamShop::kGiftCardGroups +
                               test::TeamShop::kPointGroups;
        QTRY_VERIFY_WITH_TIMEOUT(
            recheck(*dock) && stepOf(*dock, PlaybookStep::Scope).state == StepState::Done, 20000);
        const console::StepStatus detect = stepOf(*dock, PlaybookStep::Detect);
        QCOMPARE(detect.state, StepState::Done);
        const QString groups = QStringLiteral("%1 duplicate group(s)").arg(planted);
        QVERIFY2(detect.reason.startsWith(groups), qPrintable(detect.reason));
        const console::StepStatus scope = stepOf(*dock, PlaybookStep::Scope);
        QVERIFY2(scope.reason.startsWith(groups), qPrintable(scope.reason));
        QCOMPARE(stepOf(*dock, PlaybookStep::Compensate).state, StepState::ToDo);
        QCOMPARE(stepOf(*dock, PlaybookStep::InspectGreen).state, StepState::ToDo);

        // payops's own handling has no part in the team's: not available, saying why.
        for (const PlaybookStep step :
             {PlaybookStep::Simulate, PlaybookStep::StopBleeding, PlaybookStep::Drain}) {
            const console::StepStatus status = stepOf(*dock, step);
            QCOMPARE(status.state, StepState::NotAvailable);
            QVERIFY(!status.reason.isEmpty());
        }
        QVERIFY2(stepOf(*dock, PlaybookStep::StopBleeding)
                     .reason.contains(QStringLiteral("your service")),
                 qPrintable(stepOf(*dock, PlaybookStep::StopBleeding).reason));
        // The fix checks the team's keys and never offers to alter their schema: none of the
        // three tables has a unique key on exactly (order, key...).
        const console::StepStatus fix = stepOf(*dock, PlaybookStep::Fix);
        QCOMPARE(fix.state, StepState::ToDo);
        QVERIFY2(fix.reason.contains(QStringLiteral("coupon, gift_card, points")),
                 qPrintable(fix.reason));
        QVERIFY(!dock->findChild<QPushButton *>(QStringLiteral("step7ApplyKeys"))->isVisible());
        // Step 5 leads to the lowest open order's evidence, which payops never saw paid.
        const console::StepStatus proof = stepOf(*dock, PlaybookStep::ProveRootCause);
        QCOMPARE(proof.state, StepState::ToDo);
        QVERIFY2(proof.reason.contains(QStringLiteral("no payops trace")),
                 qPrintable(proof.reason));
        QCOMPARE(console::countedSteps(dock->steps()), 7);
        QVERIFY(!dock->findChild<QPushButton *>(QStringLiteral("step3Open"))->isVisible());
        test::screenshot(&window, QStringLiteral("mapped-playbook"));

        // A compensation as this operator: the compensate step moves, counting the copies
        // mapped_compensation recorded.
        {
            db::Connection connection(dsn, QStringLiteral("compensate"));
            const mapping::MappedCompensationPlan plan = mapping::planMappedCompensation(
                connection.database(), mapping, mapping::MappedScope::all());
            mapping::executeMappedCompensation(connection.database(), mapping, plan,
                                               QStringLiteral("duplicate payout"),
                                               QStringLiteral("INC-7"));
        }
        db::Connection root(test::serverDsn(), QStringLiteral("check"));
        const qint64 recorded =
            db::scalar(root.database(),
                       QStringLiteral("SELECT COUNT(*) FROM %1.mapped_compensation")
                           .arg(db::quoteIdentifier(shop.dsn().database)))
                .toLongLong();
        // Every planted extra copy but the used coupon, which is left to finance.
        QCOMPARE(recorded, planted - 1);
        // A check in flight may have read the run half done: the dock checks until it shows
        // the whole of it.
        const QString moved =
            QStringLiteral("%1 copies compensated; 1 duplicate group(s)").arg(recorded);
        QTRY_VERIFY2_WITH_TIMEOUT(
            recheck(*dock) && stepOf(*dock, PlaybookStep::Compensate).reason.startsWith(moved),
            qPrintable(stepOf(*dock, PlaybookStep::Compensate).reason), 20000);
        QCOMPARE(stepOf(*dock, PlaybookStep::Compensate).state, StepState::InProgress);
        QVERIFY2(stepOf(*dock, PlaybookStep::Scope)
                     .reason.startsWith(QStringLiteral("1 duplicate group(s) on 1 order(s)")),
                 qPrintable(stepOf(*dock, PlaybookStep::Scope).reason));
        dock->findChild<QScrollArea *>()->ensureWidgetVisible(dock->card(PlaybookStep::Compensate));
        test::screenshot(&window, QStringLiteral("mapped-playbook-compensated"));

        // payops-callbackd as a gateway in front of the team's handler (docs/gateway.md): the
        // switch reaches their callbacks again, and its backlog is theirs to drain.
        test::insertGatewayInstances(shop.dsn());
        QTRY_VERIFY_WITH_TIMEOUT(
            recheck(*dock) && stepOf(*dock, PlaybookStep::StopBleeding).state == StepState::ToDo,
            20000);
        QVERIFY2(
            stepOf(*dock, PlaybookStep::StopBleeding).reason.startsWith(QStringLiteral("NORMAL")),
            qPrintable(stepOf(*dock, PlaybookStep::StopBleeding).reason));
        QCOMPARE(stepOf(*dock, PlaybookStep::Drain).state, StepState::Done);
        QVERIFY(dock->findChild<QPushButton *>(QStringLiteral("step3Open"))->isVisible());
        QVERIFY(dock->findChild<QPushButton *>(QStringLiteral("step8Open"))->isVisible());
        QVERIFY(!dock->findChild<QPushButton *>(QStringLiteral("step1Open"))->isVisible());
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsolePlaybookMapped test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleplaybookmapped.moc"
