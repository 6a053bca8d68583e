#include "mainwindow.h"
#include "pages/pagetable.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QListWidget>
#include <QProcess>
#include <QSet>
#include <QStackedWidget>

using namespace payops;

class TestConsolePageTable final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Before any database, the navigation lists every page of the table by its title, in the
    // table's order.
    void navigationListsTheTitlesInTableOrder()
    {
        MainWindow window(std::nullopt);
        const auto *nav = window.findChild<QListWidget *>(QStringLiteral("navList"));
        const std::span<const PageEntry> table = pageTable();
        QCOMPARE(table.size(), std::size_t(Page::NUM_PAGES));
        QCOMPARE(nav->count(), int(table.size()));
        for (std::size_t row = 0; row < table.size(); ++row)
            QCOMPARE(nav->item(int(row))->text(), pageTitle(table[row]));
        QCOMPARE(nav->item(0)->text(), QStringLiteral("Overview"));
        QVERIFY(!window.page(Page::OverviewId)); // no pages without a database
    }

    // Each page opens by its --page name, through the lookup payops-console's main uses, as
    // the page its id stands for, with its row selected in the navigation; and a click in
    // the navigation opens the same page.
    void everyPageOpensByItsName()
    {
        test::ScratchDatabase scratch(QStringLiteral("pages"));
        MainWindow window(scratch.dsn());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *nav = window.findChild<QListWidget *>(QStringLiteral("navList"));
        auto *stack = window.findChild<QStackedWidget *>();
        // What each id must make: the rest of the console casts a page by its id.
        const QHash<Page::Id, QString> objectNames{
            {Page::OverviewId, QStringLiteral("overviewPage")},
            {Page::StateMachineId, QStringLiteral("stateMachinePage")},
            {Page::DuplicatesId, QStringLiteral("duplicatesPage")},
            {Page::EvidenceId, QStringLiteral("evidencePage")},
            {Page::InstancesId, QStringLiteral("instancesPage")},
            {Page::BacklogId, QStringLiteral("backlogPage")},
            {Page::CompensationId, QStringLiteral("compensationPage")},
            {Page::AuditId, QStringLiteral("auditPage")},
            {Page::PostureId, QStringLiteral("posturePage")},
            {Page::SimulationId, QStringLiteral("simulationPage")},
            {Page::InspectionId, QStringLiteral("inspectionPage")},
            {Page::ReconciliationId, QStringLiteral("reconciliationPage")}};
        const std::span<const PageEntry> table = pageTable();
        QSet<Page *> pages;
        for (std::size_t row = 0; row < table.size(); ++row) {
            const PageEntry &entry = table[row];
            const PageEntry *found = findPage(QString::fromLatin1(entry.name));
            QCOMPARE(found, &entry);
            window.showPage(found->id);
            Page *page = window.page(entry.id);
            QVERIFY(page);
            QCOMPARE(page->objectName(), objectNames.value(entry.id));
            QCOMPARE(stack->currentWidget(), page);
            QCOMPARE(nav->currentRow(), int(row));
            QCOMPARE(nav->currentItem()->text(), pageTitle(entry));
            pages.insert(page);
        }
        QCOMPARE(pages.size(), qsizetype(Page::NUM_PAGES));

        for (std::size_t row = 0; row < table.size(); ++row) {
            nav->setCurrentRow(int(row == 0 ? table.size() - 1 : row - 1)); // away, then back
            nav->setCurrentRow(int(row));
            QCOMPARE(stack->currentWidget(), window.page(table[row].id));
        }

        QVERIFY(!findPage(u"no-such-page"));
        QVERIFY(!findPage(u"Overview")); // the name, not the title
        QVERIFY(!findPage(u""));
    }

    // payops-console --help names every page of the table.
    void helpListsThePageNames()
    {
        QProcess console;
        console.start(QStringLiteral(PAYOPS_CONSOLE_PATH), {QStringLiteral("--help")});
        QVERIFY(console.waitForFinished(30000));
        QCOMPARE(console.exitCode(), 0);
        // Joined again where --help wrapped its lines.
        const QString help = QString::fromUtf8(console.readAllStandardOutput()).simplified();
        const QString pages = QStringLiteral("--page <page> Open this page: %1.")
                                  .arg(pageNames().join(QStringLiteral(", ")));
        QVERIFY2(help.contains(pages), qPrintable(help));
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsolePageTable test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolepagetable.moc"
