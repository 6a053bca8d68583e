#include "console/csvexport.h"
#include "console/mappedduplicates.h"
#include "consolewindow.h"
#include "csvfile.h"
#include "db/connection.h"
#include "dialogs/mappedcompensationdialog.h"
#include "domain/mapping/mapping.h"
#include "mainwindow.h"
#include "models/compensationbatchmodel.h"
#include "models/mappedgroupmodel.h"
#include "pages/compensationpage.h"
#include "pages/duplicatespage.h"
#include "pages/overviewpage.h"
#include "pages/windowcombo.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"
#include "widgets/datatable.h"
#include "widgets/tile.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>

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

// The groups a filter of the duplicates page shows, by a plain GROUP BY over the team's tables
// (nothing compensated yet): "side effect, order, live copies", sorted.
QStringList filteredBySql(const test::TeamShop &shop, const QString &sideEffect = {},
                          qint64 userId = 0, qint64 withinSeconds = 0)
{
    const QList<std::array<const char *, 7>> sides{
        {"coupon", "t_coupon_grant", "order_no", "tpl_code", "uid", "gmt_create",
         "status <> 'VOID'"},
        {"gift_card", "t_gift_card", "order_ref", "card_type, batch", "member_id", "issued_at",
         "status <> 9"},
        {"points", "t_point_flow", "biz_no", "biz_type", "uid", "gmt_create", "delta > 0"}};
    db::Connection root(test::serverDsn(), QStringLiteral("check"));
    QStringList groups;
    for (const auto &[name, table, order, key, user, created, live] : sides) {
        if (!sideEffect.isEmpty() && sideEffect != QLatin1String(name))
            continue;
        QString having = QStringLiteral("COUNT(*) > 1");
        if (userId > 0)
            having += QStringLiteral(" AND SUM(%1 = %2) > 0").arg(QLatin1String(user)).arg(userId);
        if (withinSeconds > 0)
            having += QStringLiteral(" AND MAX(%1) >= UTC_TIMESTAMP() - INTERVAL %2 SECOND")
                          .arg(QLatin1String(created))
                          .arg(withinSeconds);
        QSqlQuery query = db::exec(
            root.database(),
            QStringLiteral("SELECT %1, COUNT(*) FROM %2.%3 WHERE %4 GROUP BY %1, %5 HAVING %6")
                .arg(QLatin1String(order), db::quoteIdentifier(shop.business()),
                     QLatin1String(table), QLatin1String(live), QLatin1String(key), having));
        while (query.next())
            groups << QStringLiteral("%1, %2, %3")
                          .arg(QLatin1String(name), query.value(0).toString(),
                               query.value(1).toString());
    }
    groups.sort();
    return groups;
}

// The same three cells of rows as the page's table and its CSV show them.
QString groupCells(const QStringList &cells)
{
    return QStringLiteral("%1, %2, %3")
        .arg(cells.at(MappedGroupModel::SideEffectColumn), cells.at(MappedGroupModel::OrderColumn),
             cells.at(MappedGroupModel::LiveColumn));
}

QStringList listed(const DuplicatesPage &page)
{
    const QAbstractItemModel *model = page.mappedGroups()->model();
    QStringList groups;
    for (int row = 0; row < model->rowCount(); ++row) {
        QStringList cells;
        for (int column = 0; column < model->columnCount(); ++column)
            cells << model->index(row, column).data().toString();
        groups << groupCells(cells);
    }
    groups.sort();
    return groups;
}

// The page's CSV export of its filter, written whole: its groups, sorted.
QStringList exported(DuplicatesPage &page, const QString &path)
{
    QSignalSpy finished(page.mappedGroups(), &DataTable::exportFinished);
    page.mappedGroups()->exportCsv(path);
    if (!finished.wait(20000) && finished.isEmpty())
        return {QStringLiteral("the export did not finish")};
    QList<QStringList> rows = test::readCsv(path);
    if (rows.isEmpty() || rows.first().size() != MappedGroupModel::NUM_COLUMNS)
        return {QStringLiteral("no header")};
    rows.removeFirst();
    QStringList groups;
    for (const QStringList &row : std::as_const(rows))
        groups << groupCells(row);
    groups.sort();
    return groups;
}

// Changes a filter and waits for the page to show what it reads.
bool filtered(DuplicatesPage &page, const std::function<void()> &change)
{
    QSignalSpy shown(&page, &DuplicatesPage::mappedShown);
    change();
    return shown.wait(20000);
}

// A window connected as `account` to the shop through its mapping, its grants known.
std::unique_ptr<MainWindow> windowAs(const test::TeamShop &shop,
                                     const test::ScratchAccount &account)
{
    auto window = std::make_unique<MainWindow>(std::nullopt);
    QSignalSpy known(window.get(), &MainWindow::privilegesKnown);
    window->resize(1366, 740);
    window->connectTo(console::Target{account.dsnFor(shop.dsn().database),
                                      mapping::loadMapping(shop.mappingPath())});
    window->show();
    if (!known.wait(10000) && known.isEmpty())
        qWarning("the privileges probe did not answer");
    return window;
}

DuplicatesPage *duplicatesShown(MainWindow &window)
{
    window.showPage(Page::DuplicatesId);
    auto *page = static_cast<DuplicatesPage *>(window.page(Page::DuplicatesId));
    QSignalSpy shown(page, &DuplicatesPage::mappedShown);
    if (page->mappedDuplicates().orders.isEmpty())
        static_cast<void>(shown.wait(20000));
    return page;
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

        auto window = windowAs(shop, finance);
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

        DuplicatesPage *page = duplicatesShown(*window);
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

    // The page's time, side effect and user filters, and its CSV, against a GROUP BY over the
    // team's tables, as a finance account that reads them.
    void financeFiltersAndExports_data()
    {
        QTest::addColumn<db::SchemaLevel>("level");
        QTest::newRow("current") << db::SchemaLevel::Current;
        QTest::newRow("legacy") << db::SchemaLevel::Legacy;
    }

    void financeFiltersAndExports()
    {
        QFETCH(db::SchemaLevel, level);
        test::TeamShop shop(level);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        // Two points groups' copies issued an hour ago; everything else weeks before.
        shop.execBusiness(QStringLiteral("UPDATE t_point_flow SET gmt_create = UTC_TIMESTAMP() "
                                         "- INTERVAL 1 HOUR WHERE biz_no IN (%1, %2)")
                              .arg(test::TeamShop::kFirstOrder + 40)
                              .arg(test::TeamShop::kFirstOrder + 41));
        const QStringList all = filteredBySql(shop);
        QCOMPARE(all.size(), test::TeamShop::kCouponGroups + test::TeamShop::kGiftCardGroups +
                                 test::TeamShop::kPointGroups);

        auto window = windowAs(shop, finance);
        DuplicatesPage *page = duplicatesShown(*window);
        QTRY_COMPARE_WITH_TIMEOUT(listed(*page), all, 20000);
        QTemporaryDir dir;
        QCOMPARE(exported(*page, dir.filePath(QStringLiteral("all.csv"))), all);

        auto *kind = page->findChild<QComboBox *>(QStringLiteral("kindCombo"));
        QVERIFY(filtered(
            *page, [kind] { kind->setCurrentIndex(kind->findData(QStringLiteral("gift_card"))); }));
        const QStringList cards = filteredBySql(shop, QStringLiteral("gift_card"));
        QCOMPARE(cards.size(), test::TeamShop::kGiftCardGroups);
        QCOMPARE(listed(*page), cards);
        QCOMPARE(exported(*page, dir.filePath(QStringLiteral("cards.csv"))), cards);

        // The user of the first planted points group, on every side effect.
        const qint64 user = 7000;
        auto *userEdit = page->findChild<QLineEdit *>(QStringLiteral("userFilter"));
        QVERIFY(filtered(*page, [kind] { kind->setCurrentIndex(0); }));
        QVERIFY(filtered(*page, [userEdit, user] {
            userEdit->setText(QString::number(user));
            Q_EMIT userEdit->editingFinished();
        }));
        const QStringList mine = filteredBySql(shop, {}, user);
        QVERIFY(!mine.isEmpty() && mine.size() < all.size());
        QCOMPARE(listed(*page), mine);

        auto *windowCombo = page->findChild<WindowCombo *>();
        QVERIFY(filtered(*page, [userEdit] {
            userEdit->clear();
            Q_EMIT userEdit->editingFinished();
        }));
        QVERIFY(filtered(*page, [windowCombo] {
            windowCombo->setCurrentIndex(windowCombo->findData(qint64(7 * 86400)));
        }));
        const QStringList recent = filteredBySql(shop, {}, 0, 7 * 86400);
        QCOMPARE(recent.size(), 2);
        QCOMPARE(listed(*page), recent);
        QCOMPARE(exported(*page, dir.filePath(QStringLiteral("recent.csv"))), recent);
        test::screenshot(window.get(), QStringLiteral("mapped-duplicates-filtered"));

        // Paged two orders at a time, as the export pages, the groups are every group once.
        db::Connection connection(finance.dsnFor(shop.dsn().database), QStringLiteral("pages"));
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        QStringList paged;
        qint64 from = 0;
        for (bool atEnd = false; !atEnd;) {
            const console::MappedGroupPage next = console::loadMappedGroupPage(
                connection.database(), mapping, console::MappedDuplicateFilter{}, from, 2);
            QVERIFY(!next.groups.isEmpty() || next.atEnd); // whole orders, never none
            for (const console::MappedGroup &group : next.groups)
                paged << QStringLiteral("%1, %2, %3")
                             .arg(group.sideEffect)
                             .arg(group.orderId)
                             .arg(group.live);
            atEnd = next.atEnd;
            from = next.nextOrderId;
        }
        paged.sort();
        QCOMPARE(paged, all);

        // The export's rows stop at the cancel: a long one is stopped between its pages.
        const std::atomic<bool> stop{true};
        int written = 0;
        console::mappedGroupCsvRows(mapping, {},
                                    [](const console::MappedGroup &) { return QStringList(); })(
            connection.database(), [&written](const QStringList &) { ++written; }, stop);
        QCOMPARE(written, 0);
    }

    // An operator with the business grants compensates every open order from the page: the
    // page then lists only the order whose extra coupon was used, left to finance.
    void operatorCompensatesFromThePage()
    {
        test::TeamShop shop;
        test::ScratchAccount op(QStringLiteral("payops_operator"));
        shop.grantCompensation(op);

        auto window = windowAs(shop, op);
        DuplicatesPage *page = duplicatesShown(*window);
        auto *all = page->findChild<QPushButton *>(QStringLiteral("compensateAll"));
        QTRY_VERIFY(all->isEnabled());
        MappedCompensationDialog *dialog = page->compensateMapped(false);
        QVERIFY(dialog);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->plan().isEmpty(), 20000);
        QCOMPARE(dialog->plan().count(QStringLiteral("coupon"), mapping::MappedAction::Finance), 1);
        test::screenshot(dialog, QStringLiteral("mapped-compensation-preview"));
        test::compensateThrough(dialog);
        const QString result = dialog->findChild<QLabel *>(QStringLiteral("resultText"))->text();
        QVERIFY2(result.contains(QStringLiteral("1 left to finance")), qPrintable(result));

        // Only the used coupon's order stays open, its extra copy used.
        QTRY_COMPARE_WITH_TIMEOUT(page->mappedGroups()->model()->rowCount(), 1, 20000);
        QCOMPARE(page->mappedDuplicates().orders.first().order.id,
                 test::TeamShop::kUsedCouponOrder);
        // The compensation page lists the run's batch from mapped_compensation, and no requests.
        auto *compensation = static_cast<CompensationPage *>(window->page(Page::CompensationId));
        compensation->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(compensation->batchModel()->rowCount(), 1, 10000);
        QVERIFY(!compensation->requestsTable()->isVisibleTo(compensation));
        const QMap<QString, qint64> left = openGroupsBySql(shop);
        QCOMPARE(left.value(QStringLiteral("coupon")), qint64(1));
        QCOMPARE(left.value(QStringLiteral("gift_card")) + left.value(QStringLiteral("points")),
                 qint64(0));
    }

    // Above the four-eyes threshold the preview says so and the run cannot be started, as
    // `payops compensate --mapping` refuses it.
    void fourEyesRefusesAboveTheThreshold()
    {
        test::TeamShop shop;
        test::ScratchAccount op(QStringLiteral("payops_operator"));
        shop.grantBusiness(op, QStringLiteral("SELECT"));
        {
            db::Connection root(shop.dsn(), QStringLiteral("t"));
            db::exec(root.database(), QStringLiteral("UPDATE payops_meta SET value = '100' WHERE "
                                                     "name = 'four_eyes_threshold_fen'"));
        }
        auto window = windowAs(shop, op);
        DuplicatesPage *page = duplicatesShown(*window);
        MappedCompensationDialog *dialog = page->compensateMapped(false);
        QVERIFY(dialog);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->plan().isEmpty(), 20000);
        auto *note = dialog->findChild<QLabel *>(QStringLiteral("fourEyesNote"));
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains(QStringLiteral("refused")), qPrintable(note->text()));
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit")),
                         QStringLiteral("too much"));
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("ticketEdit")),
                         QStringLiteral("INC-9"));
        QVERIFY(!dialog->findChild<QPushButton *>(QStringLiteral("actButton"))->isEnabled());
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
