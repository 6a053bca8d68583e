#include "callbackfixture.h"
#include "console/consolesettings.h"
#include "console/inspectionschedule.h"
#include "db/connection.h"
#include "mainwindow.h"
#include "models/inspectionrunmodel.h"
#include "pages/inspectionpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/findingsnotifier.h"
#include "widgets/inspectionchart.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>

using namespace payops;
using console::InspectionScheduler;
using console::NewFindings;
using console::ScheduledInspection;

namespace {

InspectionRun runWith(qint64 groups, qint64 extra, qint64 latePayments, qint64 secondPayments)
{
    InspectionRun run;
    run.duplicateGroups = groups;
    run.duplicateExtraCopies = extra;
    run.unmatchedWithOrder = latePayments;
    run.unmatched = latePayments;
    run.doublePaymentCallbacks = secondPayments;
    run.doublePaymentOrders = secondPayments;
    run.clean = groups == 0 && latePayments == 0 && secondPayments == 0;
    return run;
}

qint64 storedRuns(const QSqlDatabase &db, const QString &source)
{
    return db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM inspection_run WHERE source = ?"),
                      {source})
        .toLongLong();
}

} // namespace

class TestConsoleInspection final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // What is new since the previous run: more of a finding than before, and anything at all
    // on the first run; less, or the same, is not.
    void theNewFindingsDecision()
    {
        const InspectionRun clean = runWith(0, 0, 0, 0);
        QVERIFY(!NewFindings::between(std::nullopt, clean).any());
        const NewFindings first = NewFindings::between(std::nullopt, runWith(3, 4, 0, 1));
        QVERIFY(first.duplicates && !first.latePayments && first.refundsOwed);

        const InspectionRun before = runWith(3, 4, 1, 1);
        QVERIFY(!NewFindings::between(before, before).any());
        QVERIFY(!NewFindings::between(before, runWith(2, 2, 0, 1))
                     .any()); // some compensated, one drained
        QVERIFY(!NewFindings::between(before, clean).any());
        const NewFindings grown = NewFindings::between(before, runWith(3, 5, 1, 1));
        QVERIFY(grown.duplicates && !grown.latePayments &&
                !grown.refundsOwed); // a third copy in an open group
        const NewFindings late = NewFindings::between(before, runWith(3, 4, 2, 1));
        QVERIFY(!late.duplicates && late.latePayments && !late.refundsOwed);
        const NewFindings twice = NewFindings::between(before, runWith(3, 4, 1, 2));
        QVERIFY(!twice.duplicates && !twice.latePayments && twice.refundsOwed);
        QVERIFY2(twice.describe(runWith(3, 4, 1, 2))
                     .contains(QStringLiteral("2 order(s) paid twice by the customer")),
                 qPrintable(twice.describe(runWith(3, 4, 1, 2))));

        QCOMPARE(FindingsNotifier::pageFor(grown), Page::DuplicatesId);
        QCOMPARE(FindingsNotifier::pageFor(late), Page::BacklogId);
        QCOMPARE(FindingsNotifier::pageFor(twice), Page::InspectionId);
    }

    // The setting drives the timer: off at 0, its minutes otherwise, followed live.
    void theScheduleFollowsTheSetting()
    {
        test::ScratchDatabase scratch(QStringLiteral("schedset"));
        auto &settings = console::ConsoleSettings::instance();
        QCOMPARE(settings.inspectionMinutes(), 0); // off unless asked for
        InspectionScheduler scheduler(scratch.dsn());
        QVERIFY(!scheduler.isActive());
        QSignalSpy changed(&scheduler, &InspectionScheduler::scheduleChanged);
        settings.setValue(console::ConsoleSettings::InspectionMinutes, 15);
        QVERIFY(scheduler.isActive());
        QCOMPARE(changed.size(), 1);
        settings.setValue(console::ConsoleSettings::InspectionMinutes, 5000);
        QCOMPARE(settings.inspectionMinutes(), 1440); // held to its range
        settings.setValue(console::ConsoleSettings::InspectionMinutes, 0);
        QVERIFY(!scheduler.isActive());
    }

    // With a short interval the console runs the inspection on its worker and stores each run;
    // a duplicate incident between two runs is a new finding, the run after it is not.
    void theSchedulerRunsAndStores()
    {
        test::ScratchDatabase scratch(QStringLiteral("schedrun"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();

        InspectionScheduler scheduler(scratch.dsn());
        QList<ScheduledInspection> results;
        connect(&scheduler, &InspectionScheduler::finished, this,
                [&results](const ScheduledInspection &result) { results << result; });
        QSignalSpy failed(&scheduler, &InspectionScheduler::failed);
        scheduler.overrideInterval(std::chrono::milliseconds(300));
        QTRY_VERIFY_WITH_TIMEOUT(results.size() >= 2, 20000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(results.at(0).stored.stored() && results.at(0).run.clean);
        QVERIFY(!results.at(0).fresh.any());
        QVERIFY(results.at(1).previous && results.at(1).previous->id == results.at(0).run.id);
        QVERIFY(storedRuns(db, QStringLiteral("console")) >= 2);

        test::insertDuplicateIncident(db, 2);
        const qsizetype seen = results.size();
        QTRY_VERIFY_WITH_TIMEOUT(results.size() >= seen + 2, 20000);
        const auto firstDirty =
            std::find_if(results.cbegin() + seen, results.cend(),
                         [](const ScheduledInspection &r) { return !r.run.clean; });
        QVERIFY(firstDirty != results.cend());
        QVERIFY(firstDirty->fresh.duplicates);
        QCOMPARE(firstDirty->run.duplicateGroups, qint64(6));
        QVERIFY(firstDirty + 1 != results.cend());
        QVERIFY(!(firstDirty + 1)->fresh.any()); // the same duplicates again are not new
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT run_by FROM inspection_run ORDER BY id DESC LIMIT 1"))
                     .toString(),
                 db::scalar(db, QStringLiteral("SELECT CURRENT_USER()")).toString());

        scheduler.overrideInterval(std::chrono::milliseconds(0));
        QVERIFY(!scheduler.isActive());
    }

    // The history page: runs newest first, the chart's points, a run's findings on selection;
    // a new finding without a tray leads, from the status bar, to the duplicates page.
    void theHistoryPageAndTheNotice()
    {
        test::ScratchDatabase scratch(QStringLiteral("schedpage"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"),
                               scratch.dsn().toString(true)})
                     .exitCode,
                 0);

        MainWindow window(scratch.dsn());
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.showPage(Page::InspectionId);
        auto *page = static_cast<InspectionPage *>(window.page(Page::InspectionId));
        QVERIFY(page && page->isVisible());
        new QAbstractItemModelTester(page->model(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, page);
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 1, 15000);

        test::insertDuplicateIncident(db, 2);
        page->findChild<QPushButton *>(QStringLiteral("inspectNowButton"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(storedRuns(db, QStringLiteral("console")), qint64(1), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 2, 15000);
        const QModelIndex newest = page->model()->index(0, InspectionRunModel::ResultColumn);
        QCOMPARE(newest.data().toString(), QStringLiteral("Findings"));
        QCOMPARE(page->model()->index(1, InspectionRunModel::ResultColumn).data().toString(),
                 QStringLiteral("Clean"));
        QCOMPARE(page->model()->index(0, InspectionRunModel::DuplicatesColumn).data().toLongLong(),
                 qint64(6));
        QTRY_COMPARE_WITH_TIMEOUT(page->chart()->duplicatesSeries()->count(), 2, 15000);
        QCOMPARE(page->chart()->duplicatesSeries()->at(1).y(), 6.0);

        auto *table = page->findChild<QTableView *>(QStringLiteral("inspectionTable"));
        table->selectRow(0);
        const QString findings =
            page->findChild<QPlainTextEdit *>(QStringLiteral("inspectionFindings"))->toPlainText();
        QVERIFY2(findings.contains(QStringLiteral("6 open group(s)")) &&
                     findings.contains(QStringLiteral("1001, 1002")),
                 qPrintable(findings));

        // Offscreen has no system tray: the status bar says it, and its button opens the page.
        FindingsNotifier *notifier = window.findingsNotifier();
        QVERIFY(!notifier->usesTray());
        QCOMPARE(notifier->target(), Page::DuplicatesId);
        QVERIFY2(window.statusBar()->currentMessage().contains(
                     QStringLiteral("New findings in inspection")),
                 qPrintable(window.statusBar()->currentMessage()));
        auto *show = window.findChild<QPushButton *>(QStringLiteral("showFindingsButton"));
        QVERIFY(show && show->isVisible());
        show->click();
        QCOMPARE(window.page(Page::DuplicatesId)->isVisible(), true);
        QVERIFY(!show->isVisible());
    }

private:
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleInspection test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleinspection.moc"
