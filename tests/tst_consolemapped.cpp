#include "consolewindow.h"
#include "db/connection.h"
#include "dialogs/mappedcompensationdialog.h"
#include "domain/mapping/mapping.h"
#include "mainwindow.h"
#include "models/compensationbatchmodel.h"
#include "models/compensationrequestmodel.h"
#include "pages/compensationpage.h"
#include "pages/duplicatespage.h"
#include "pages/overviewpage.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "teamshopwindow.h"
#include "testmain.h"
#include "widgets/datatable.h"
#include "widgets/tile.h"

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>

#include <array>

using namespace payops;

namespace {

// Open groups per side effect by a plain GROUP BY over the team's tables, independent of the
// mapped watch: live rows of one (order, key...) more than once.
QMap<QString, qint64> openGroupsBySql(const test::TeamShop &shop)
{
    const QList<std::array<const char *, 5>> sides{
        {"coupon", "t_coupon_grant", "id", "order_no, tpl_code", "status <> 'VOID'"},
        {"gift_card", "t_gift_card", "card_id", "order_ref, card_type, batch", "status <> 9"},
        {"points", "t_point_flow", "id", "biz_no, biz_type", "delta > 0"}};
    db::Connection root(test::serverDsn(), QStringLiteral("check"));
    QMap<QString, qint64> groups;
    for (const auto &[name, table, id, key, live] : sides)
        groups[QLatin1String(name)] =
            db::scalar(
                root.database(),
                QStringLiteral("SELECT COUNT(*) FROM (SELECT 1 FROM %1.%2 WHERE %3 AND %4 "
                               "NOT IN (SELECT target_id FROM %5.mapped_compensation WHERE "
                               "business_table = '%6.%2') GROUP BY %7 HAVING COUNT(*) > 1) g")
                    .arg(db::quoteIdentifier(shop.business()), QLatin1String(table),
                         QLatin1String(live), QLatin1String(id),
                         db::quoteIdentifier(shop.dsn().database), shop.business(),
                         QLatin1String(key)))
                .toLongLong();
    return groups;
}

} // namespace

class TestConsoleMapped final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The overview's tile and the duplicates page count the planted groups per side effect as
    // a plain GROUP BY does; a finance account reads them but may not compensate.
    void financeSeesThePlantedGroups()
    {
        test::TeamShop shop;
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        const QMap<QString, qint64> expected = openGroupsBySql(shop);
        QCOMPARE(expected.value(QStringLiteral("coupon")), qint64(test::TeamShop::kCouponGroups));
        QCOMPARE(expected.value(QStringLiteral("gift_card")),
                 qint64(test::TeamShop::kGiftCardGroups));
        QCOMPARE(expected.value(QStringLiteral("points")), qint64(test::TeamShop::kPointGroups));

        auto window = test::windowAs(shop, finance);
        auto *overview = window->page(Page::OverviewId);
        auto *tile = overview->findChild<Tile *>(QStringLiteral("tileDuplicates"));
        QVERIFY(tile);
        // One extra copy per planted group.
        const qint64 extra = test::TeamShop::kCouponGroups + test::TeamShop::kGiftCardGroups +
                             test::TeamShop::kPointGroups;
        QTRY_VERIFY2_WITH_TIMEOUT(tile->value() == QString::number(extra),
                                  qPrintable(tile->value() + QLatin1Char(' ') + tile->detail()),
                                  20000);
        QVERIFY2(tile->detail().contains(QStringLiteral("gift_card: 3 extra in 3 groups")),
                 qPrintable(tile->detail()));
        test::screenshot(window.get(), QStringLiteral("mapped-overview"));
        QVERIFY(overview->findChild<QLabel *>(QStringLiteral("mappedChartNote"))->isVisible());
        auto *rate = overview->findChild<Tile *>(QStringLiteral("tileRate"));
        QVERIFY2(rate->detail().contains(QStringLiteral("not available on mapped tables")),
                 qPrintable(rate->detail()));

        DuplicatesPage *page = test::duplicatesShown(*window);
        const mapping::MappedWatchFigures &figures = page->mappedDuplicates().watch.figures;
        QCOMPARE(figures.sideEffects.size(), 3);
        for (const mapping::MappedSideEffectFigures &side : figures.sideEffects)
            QCOMPARE(side.openGroups, expected.value(side.name));
        QCOMPARE(page->mappedGroups()->model()->rowCount(), int(figures.groups()));
        QVERIFY(figures.openOrders > 0);

        // The selected group's order's rows: every side effect's rows of that order.
        page->mappedGroups()->selectRow(0);
        QTRY_VERIFY(page->mappedCopies()->model()->rowCount() >= 2);
        test::screenshot(window.get(), QStringLiteral("mapped-duplicates"));

        auto *all = page->findChild<QPushButton *>(QStringLiteral("compensateAll"));
        auto *orders = page->findChild<QPushButton *>(QStringLiteral("compensateOrders"));
        QVERIFY(!all->isEnabled());
        QVERIFY(!orders->isEnabled());
        QVERIFY(all->toolTip().contains(QStringLiteral("payops_operator")));
        auto *everything = window->page(Page::CompensationId)
                               ->findChild<QPushButton *>(QStringLiteral("compensateEverything"));
        QVERIFY(!everything->isEnabled());
    }

    // An operator with the business grants compensates every open order from the page: the
    // page then lists only the order whose extra coupon was used, left to finance. The console
    // reads the same database as its read database: the dialog previews there, in a read-only
    // session, plans again on the primary and says that the two agree (tst_replicaread shows a
    // lagging replica's plan told apart, through the same code).
    void operatorCompensatesFromThePage()
    {
        test::TeamShop shop;
        test::ScratchAccount op(QStringLiteral("payops_operator"));
        shop.grantCompensation(op);
        // A read database's watch is as the primary last refreshed it: refreshed here.
        const test::CliRun inspect =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), shop.dsn().toString(),
                          QStringLiteral("--mapping"), shop.mappingPath()});
        QVERIFY2(inspect.exitCode == 1, qPrintable(inspect.err)); // duplicates found

        auto window = test::windowAs(shop, op, true);
        DuplicatesPage *page = test::duplicatesShown(*window);
        auto *all = page->findChild<QPushButton *>(QStringLiteral("compensateAll"));
        QTRY_VERIFY(all->isEnabled());
        MappedCompensationDialog *dialog = page->compensateMapped(false);
        QVERIFY(dialog);
        auto *note = dialog->findChild<QLabel *>(QStringLiteral("replicaNote"));
        QTRY_VERIFY_WITH_TIMEOUT(note->isVisible(), 20000);
        QVERIFY2(note->text().contains(QStringLiteral("same")), qPrintable(note->text()));
        QVERIFY(!dialog->plan().isEmpty());
        QCOMPARE(dialog->plan().count(QStringLiteral("coupon"), mapping::MappedAction::Finance), 1);
        test::screenshot(dialog, QStringLiteral("mapped-compensation-preview"));
        test::compensateThrough(dialog);
        const QString result = dialog->findChild<QLabel *>(QStringLiteral("resultText"))->text();
        QVERIFY2(result.contains(QStringLiteral("1 left to finance")), qPrintable(result));

        // Only the used coupon's order stays open, its extra copy used.
        QTRY_COMPARE_WITH_TIMEOUT(page->mappedGroups()->model()->rowCount(), 1, 20000);
        QCOMPARE(page->mappedDuplicates().orders.first().order.id,
                 test::TeamShop::kUsedCouponOrder);
        // The compensation page lists the run's batch from mapped_compensation; no request.
        auto *compensation = static_cast<CompensationPage *>(window->page(Page::CompensationId));
        compensation->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(compensation->batchModel()->rowCount(), 1, 10000);
        QCOMPARE(compensation->requestModel()->rowCount(), 0);
        const QMap<QString, qint64> left = openGroupsBySql(shop);
        QCOMPARE(left.value(QStringLiteral("coupon")), qint64(1));
        QCOMPARE(left.value(QStringLiteral("gift_card")) + left.value(QStringLiteral("points")),
                 qint64(0));
    }

    // Above the four-eyes threshold the dialog files a request and changes nothing; the
    // requester may not approve it, nor a console with another mapping file (it says why); a
    // second operator with the same mapping approves it from the compensation page.
    void fourEyesFilesARequestAnotherOperatorApproves()
    {
        test::TeamShop shop;
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        for (const test::ScratchAccount *op : {&alice, &bob}) {
            shop.grantBusiness(*op, QStringLiteral("SELECT"));
            for (const QString &grant : {QStringLiteral("UPDATE ON t_coupon_grant"),
                                         QStringLiteral("UPDATE ON t_gift_card"),
                                         QStringLiteral("INSERT ON t_point_flow")})
                shop.execBusiness(
                    QStringLiteral("GRANT %1 TO '%2'@'localhost'").arg(grant, op->user()));
        }
        {
            db::Connection root(shop.dsn(), QStringLiteral("t"));
            db::exec(root.database(), QStringLiteral("UPDATE payops_meta SET value = '100' WHERE "
                                                     "name = 'four_eyes_threshold_fen'"));
        }
        const QMap<QString, qint64> before = shop.checksums();
        auto requester = test::windowAs(shop, alice);
        DuplicatesPage *page = test::duplicatesShown(*requester);
        MappedCompensationDialog *dialog = page->compensateMapped(false);
        QVERIFY(dialog);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->plan().isEmpty(), 20000);
        auto *note = dialog->findChild<QLabel *>(QStringLiteral("fourEyesNote"));
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains(QStringLiteral("files a request")),
                 qPrintable(note->text()));
        QCOMPARE(dialog->findChild<QPushButton *>(QStringLiteral("actButton"))->text(),
                 QStringLiteral("Request approval…"));
        test::screenshot(dialog, QStringLiteral("mapped-compensation-request"));
        test::compensateThrough(dialog);
        const QString filed = dialog->findChild<QLabel *>(QStringLiteral("runText"))->text();
        QVERIFY2(filed.contains(QStringLiteral("is filed")), qPrintable(filed));
        QCOMPARE(shop.checksums(), before);

        // The requester sees it and may not decide it.
        auto *own = static_cast<CompensationPage *>(requester->page(Page::CompensationId));
        own->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(own->requestModel()->rowCount(), 1, 10000);
        const QString tip = own->requestModel()
                                ->index(0, CompensationRequestModel::AmountColumn)
                                .data(Qt::ToolTipRole)
                                .toString();
        QVERIFY2(tip.contains(QStringLiteral("coupon: %1.t_coupon_grant").arg(shop.business())),
                 qPrintable(tip));
        own->requestsTable()->selectRow(0);
        QVERIFY(!own->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        QVERIFY(!own->approveSelectedMapped());

        // Bob, with another mapping file: the page says why it may not approve.
        auto approver = std::make_unique<MainWindow>(std::nullopt);
        approver->resize(1366, 740);
        approver->connectTo(console::Target{
            bob.dsnFor(shop.dsn().database),
            mapping::loadMapping(shop.writeMapping(QStringLiteral("edited.toml"),
                                                   shop.mappingText() + "\n# edited\n"))});
        approver->show();
        approver->showPage(Page::CompensationId);
        auto *other = static_cast<CompensationPage *>(approver->page(Page::CompensationId));
        QTRY_COMPARE_WITH_TIMEOUT(other->requestModel()->rowCount(), 1, 10000);
        other->requestsTable()->selectRow(0);
        QLabel *hint = other->findChild<QLabel *>(QStringLiteral("requestHint"));
        QTRY_VERIFY2(hint->text().contains(QStringLiteral("another mapping file")),
                     qPrintable(hint->text()));
        QVERIFY(!other->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        test::screenshot(approver.get(), QStringLiteral("mapped-request-other-mapping"));
        // Bob on payops's own tables: the same, and the page says a mapping is needed.
        approver->connectTo(console::Target{bob.dsnFor(shop.dsn().database), std::nullopt});
        approver->showPage(Page::CompensationId);
        auto *ownTables = static_cast<CompensationPage *>(approver->page(Page::CompensationId));
        QTRY_COMPARE_WITH_TIMEOUT(ownTables->requestModel()->rowCount(), 1, 10000);
        ownTables->requestsTable()->selectRow(0);
        hint = ownTables->findChild<QLabel *>(QStringLiteral("requestHint"));
        QTRY_VERIFY2(hint->text().contains(QStringLiteral("open the console with the mapping")),
                     qPrintable(hint->text()));
        QVERIFY(!ownTables->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        QVERIFY(!ownTables->approveSelected());

        // Bob, with the same file, approves and compensates.
        approver = test::windowAs(shop, bob);
        approver->showPage(Page::CompensationId);
        auto *compensation = static_cast<CompensationPage *>(approver->page(Page::CompensationId));
        QTRY_COMPARE_WITH_TIMEOUT(compensation->requestModel()->rowCount(), 1, 10000);
        compensation->requestsTable()->selectRow(0);
        QTRY_VERIFY(
            compensation->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        MappedCompensationDialog *approval = compensation->approveSelectedMapped();
        QVERIFY(approval);
        QTRY_VERIFY_WITH_TIMEOUT(!approval->plan().isEmpty(), 20000);
        auto *act = approval->findChild<QPushButton *>(QStringLiteral("actButton"));
        QTRY_VERIFY(act->isEnabled()); // reason and ticket come from the request
        QCOMPARE(act->text(), QStringLiteral("Approve and compensate…"));
        test::screenshot(approval, QStringLiteral("mapped-request-approval"));
        QTest::mouseClick(act, Qt::LeftButton);
        QTest::mouseClick(approval->findChild<QPushButton *>(QStringLiteral("confirmButton")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            approval->findChild<QPushButton *>(QStringLiteral("closeButton"))->isEnabled(), 20000);
        const QString result = approval->findChild<QLabel *>(QStringLiteral("resultText"))->text();
        QVERIFY2(result.contains(QStringLiteral("approved and executed")), qPrintable(result));
        const QMap<QString, qint64> left = openGroupsBySql(shop);
        QCOMPARE(left.value(QStringLiteral("coupon")), qint64(1)); // the used one, finance's
        QCOMPARE(left.value(QStringLiteral("gift_card")) + left.value(QStringLiteral("points")),
                 qint64(0));
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleMapped test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolemapped.moc"
