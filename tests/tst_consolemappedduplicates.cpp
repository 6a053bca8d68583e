#include "console/csvexport.h"
#include "console/mappedduplicates.h"
#include "consolewindow.h"
#include "csvfile.h"
#include "db/connection.h"
#include "domain/mapping/mapping.h"
#include "models/mappedgroupmodel.h"
#include "pages/windowcombo.h"
#include "teamshopwindow.h"
#include "testmain.h"
#include "widgets/datatable.h"

#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <array>
#include <atomic>
#include <functional>

using namespace payops;

namespace {

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

} // namespace

// The duplicates page on a team's own tables: its filters and its CSV export (docs/console.md).
class TestConsoleMappedDuplicates final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
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

        auto window = test::windowAs(shop, finance);
        DuplicatesPage *page = test::duplicatesShown(*window);
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
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleMappedDuplicates test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolemappedduplicates.moc"
