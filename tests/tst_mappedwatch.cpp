// The duplicate watch on a team's own tables (domain/mapping/mappedwatch.h), on the team shop:
// its figures equal a plain GROUP BY ... HAVING over each business table, a refresh reads only
// what is new (the server's own Handler_read counters, not a timing), late rows and compensated
// copies are seen, a changed definition starts over, and `payops inspect --mapping` reports it;
// as accounts holding only payops_operator or payops_finance and SELECT on the shop.

#include "bulkdata.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/mapping/mappedwatch.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

#include <algorithm>
#include <atomic>

using namespace payops;

namespace {

// A side effect of the shop as this test counts it, written out by hand rather than read from
// the mapping, so that the watch is compared with an independent count.
struct Expected
{
    QString name;
    QString table;
    QString id;
    QString group; // GROUP BY
    QString live;
    QString valueFen; // one copy in fen
};

QList<Expected> shopSideEffects(const QString &liveCoupon = QStringLiteral("status <> 'VOID'"))
{
    return {
        {QStringLiteral("coupon"), QStringLiteral("t_coupon_grant"), QStringLiteral("id"),
         QStringLiteral("order_no, tpl_code"), liveCoupon, QStringLiteral("face * 100")},
        {QStringLiteral("gift_card"), QStringLiteral("t_gift_card"), QStringLiteral("card_id"),
         QStringLiteral("order_ref, card_type, batch"), QStringLiteral("status <> 9"),
         QStringLiteral("amount_fen")},
        // 100 points a yuan: one point is one fen.
        {QStringLiteral("points"), QStringLiteral("t_point_flow"), QStringLiteral("id"),
         QStringLiteral("biz_no, biz_type"), QStringLiteral("delta > 0"), QStringLiteral("delta")},
    };
}

struct Count
{
    qint64 groups = 0;
    qint64 extra = 0;
    qint64 fen = 0;
};

Count groupBy(const QSqlDatabase &db, const QString &business, const Expected &e)
{
    QSqlQuery query =
        db::exec(db, QStringLiteral(
                         "SELECT COUNT(*), COALESCE(SUM(n - 1), 0), COALESCE(SUM((n - 1) * v), 0) "
                         "FROM (SELECT COUNT(*) AS n, MAX(%1) AS v FROM `%2`.`%3` s "
                         "WHERE (%4) AND NOT EXISTS (SELECT 1 FROM mapped_compensation c "
                         "WHERE c.business_table = '%2.%3' AND c.target_id = s.%5) "
                         "GROUP BY %6 HAVING COUNT(*) > 1) g")
                         .arg(e.valueFen, business, e.table, e.live, e.id, e.group));
    query.next();
    return {query.value(0).toLongLong(), query.value(1).toLongLong(), query.value(2).toLongLong()};
}

const mapping::MappedSideEffectFigures &figuresOf(const mapping::MappedWatchFigures &figures,
                                                  const QString &name)
{
    for (const mapping::MappedSideEffectFigures &f : figures.sideEffects)
        if (f.name == name)
            return f;
    qFatal("no side effect %s", qPrintable(name));
}

#define COMPARE_WITH_GROUP_BY(root, shop, figures, expected)                                       \
    do {                                                                                           \
        for (const Expected &e : (expected)) {                                                     \
            const Count count = groupBy(root, (shop).business(), e);                               \
            const mapping::MappedSideEffectFigures &f = figuresOf((figures), e.name);              \
            QVERIFY2(f.complete(), qPrintable(e.name));                                            \
            QCOMPARE(f.openGroups, count.groups);                                                  \
            QCOMPARE(f.extraCopies, count.extra);                                                  \
            QCOMPARE(f.valueFen(100), count.fen);                                                  \
        }                                                                                          \
        COMPARE_SUMS_WITH_GROUPS(root);                                                            \
    } while (false)

// The watch's sums (mapped_watch_total, each state's and the summary's open orders) against
// the groups it stored, counted here by GROUP BY: what a recount folds in without reading back
// must be what the server stored.
#define COMPARE_SUMS_WITH_GROUPS(root)                                                             \
    do {                                                                                           \
        const auto rows = [&](const QString &sql) {                                                \
            QStringList lines;                                                                     \
            QSqlQuery query = db::exec((root), sql);                                               \
            while (query.next())                                                                   \
                lines << QStringLiteral("%1 %2 %3")                                                \
                             .arg(query.value(0).toString(), query.value(1).toString(),            \
                                  query.value(2).toString());                                      \
            return lines;                                                                          \
        };                                                                                         \
        QCOMPARE(rows(QStringLiteral("SELECT side_effect, SUM(open_groups), SUM(extra_copies) "    \
                                     "FROM mapped_watch_total GROUP BY side_effect "               \
                                     "HAVING SUM(open_groups) <> 0 ORDER BY side_effect")),        \
                 rows(QStringLiteral("SELECT side_effect, COUNT(*), SUM(live - 1) FROM "           \
                                     "mapped_watch_group WHERE is_open = 1 GROUP BY side_effect "  \
                                     "ORDER BY side_effect")));                                    \
        QCOMPARE(rows(QStringLiteral("SELECT side_effect, open_orders, 0 FROM mapped_watch_state " \
                                     "WHERE open_orders <> 0 ORDER BY side_effect")),              \
                 rows(QStringLiteral("SELECT side_effect, COUNT(DISTINCT order_id), 0 FROM "       \
                                     "mapped_watch_group WHERE is_open = 1 GROUP BY side_effect "  \
                                     "ORDER BY side_effect")));                                    \
        QCOMPARE(                                                                                  \
            db::scalar((root), QStringLiteral("SELECT open_orders FROM mapped_watch_summary"))     \
                .toLongLong(),                                                                     \
            db::scalar((root), QStringLiteral("SELECT COUNT(DISTINCT order_id) FROM "              \
                                              "mapped_watch_group WHERE is_open = 1"))             \
                .toLongLong());                                                                    \
    } while (false)

qint64 insertCoupon(const QSqlDatabase &db, const QString &business, qint64 order,
                    const QString &template_)
{
    db::exec(db,
             QStringLiteral("INSERT INTO `%1`.t_coupon_grant (order_no, uid, tpl_code, face, "
                            "status, gmt_create) VALUES (?, 7001, ?, 5.00, 'ISSUED', NOW())")
                 .arg(business),
             {order, template_});
    return db::scalar(db, QStringLiteral("SELECT LAST_INSERT_ID()")).toLongLong();
}

} // namespace

class TestMappedWatch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void watchesTheShop_data()
    {
        QTest::addColumn<QString>("level");
        QTest::addColumn<QString>("role");
        // Each role once and each schema level once: every row makes a shop, and the run stays
        // short.
        QTest::newRow("legacy, finance")
            << QStringLiteral("legacy") << QStringLiteral("payops_finance");
        QTest::newRow("current, operator")
            << QStringLiteral("current") << QStringLiteral("payops_operator");
    }

    void watchesTheShop()
    {
        QFETCH(QString, level);
        QFETCH(QString, role);
        const test::TeamShop shop(level == QLatin1String("legacy") ? db::SchemaLevel::Legacy
                                                                   : db::SchemaLevel::Current);
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        test::ScratchAccount account(role);
        db::execDirect(root, QStringLiteral("GRANT SELECT ON `%1`.* TO '%2'@'localhost'")
                                 .arg(shop.business(), account.user()));
        db::Connection connection(account.dsnFor(shop.dsn().database), QStringLiteral("watch"));
        const QSqlDatabase db = connection.database();
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());

        // The first pass, against the GROUP BY and the planted groups.
        mapping::MappedWatchRefresh refresh = mapping::refreshMappedWatch(db, mapping);
        QVERIFY2(refresh.refreshed, qPrintable(refresh.why));
        QVERIFY(refresh.figures.complete());
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, shopSideEffects());
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon")).openGroups,
                 qint64(test::TeamShop::kCouponGroups));
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("gift_card")).openGroups,
                 qint64(test::TeamShop::kGiftCardGroups));
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("points")).openGroups,
                 qint64(test::TeamShop::kPointGroups));
        const qint64 openOrders = refresh.figures.openOrders;
        QVERIFY(openOrders > 0);
        QCOMPARE(mapping::openMappedOrders(db, mapping, 1000).size(), openOrders);

        // A refresh with nothing new, then one after a duplicate copy and an ordinary row:
        // the second reads the two rows and a few more, however large the tables are.
        mapping::refreshMappedWatch(db, mapping);
        const qint64 idleStart = bench::sessionRowsRead(db);
        QVERIFY(mapping::refreshMappedWatch(db, mapping).refreshed);
        const qint64 idle = bench::sessionRowsRead(db) - idleStart;
        const qint64 clean = test::TeamShop::kFirstOrder + 1; // a paid order without duplicates
        insertCoupon(root, shop.business(), clean, QStringLiteral("NEWUSER5"));
        insertCoupon(root, shop.business(), clean, QStringLiteral("SPRING10"));
        const qint64 busyStart = bench::sessionRowsRead(db);
        refresh = mapping::refreshMappedWatch(db, mapping);
        const qint64 busy = bench::sessionRowsRead(db) - busyStart;
        QCOMPARE(refresh.rowsRead, qint64(2));
        // Measured: 33 rows idle (the highest ids, state, gaps, totals and the open groups) and
        // 45 with the two rows, against some 800 rows of history in the shop's side-effect
        // tables.
        const QString reads = QStringLiteral("%1 vs %2").arg(busy).arg(idle);
        QVERIFY2(idle < 60, qPrintable(reads));
        QVERIFY2(busy - idle < 25, qPrintable(reads));
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon")).openGroups,
                 qint64(test::TeamShop::kCouponGroups + 1));
        QCOMPARE(refresh.figures.openOrders, openOrders + 1);
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, shopSideEffects());

        // A row committed late, below an id the watch has already passed, is still found.
        const qint64 late = test::TeamShop::kFirstOrder + 2;
        {
            db::Connection writer(shop.dsn(), QStringLiteral("writer"));
            db::Transaction open(writer.database());
            insertCoupon(writer.database(), shop.business(), late, QStringLiteral("NEWUSER5"));
            insertCoupon(root, shop.business(), test::TeamShop::kFirstOrder + 3,
                         QStringLiteral("SPRING10"));
            QVERIFY(mapping::refreshMappedWatch(db, mapping).refreshed);
            open.commit();
        }
        refresh = mapping::refreshMappedWatch(db, mapping);
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon")).openGroups,
                 qint64(test::TeamShop::kCouponGroups + 2));
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, shopSideEffects());

        // A copy recorded in mapped_compensation is no longer live, whatever `live` says.
        const qint64 copy =
            db::scalar(root, QStringLiteral("SELECT MAX(id) FROM `%1`.t_point_flow "
                                            "WHERE delta > 0 AND biz_no IN (SELECT "
                                            "biz_no FROM `%1`.t_point_flow GROUP "
                                            "BY biz_no, biz_type HAVING COUNT(*) > 1)")
                                 .arg(shop.business()))
                .toLongLong();
        QVERIFY(copy > 0);
        const qint64 copyOrder =
            db::scalar(root,
                       QStringLiteral("SELECT biz_no FROM `%1`.t_point_flow WHERE id = ?")
                           .arg(shop.business()),
                       {copy})
                .toLongLong();
        db::exec(
            root,
            QStringLiteral("INSERT INTO mapped_compensation (business_table, target_id, "
                           "side_effect, kept_id, order_id, action, mapping_sha256, statement) "
                           "VALUES (?, ?, 'points', 0, ?, 'REVERSE', ?, 'test')"),
            {shop.business() + QStringLiteral(".t_point_flow"), copy, copyOrder,
             QString::fromLatin1(mapping.sha256)});
        refresh = mapping::refreshMappedWatch(db, mapping);
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("points")).openGroups,
                 qint64(test::TeamShop::kPointGroups - 1));
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, shopSideEffects());

        // `payops inspect --mapping --json`, as this account.
        const test::CliRun run =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--json"),
                          QStringLiteral("--mapping"), shop.mappingPath(), QStringLiteral("--db"),
                          account.dsnFor(shop.dsn().database).toString(true)});
        QVERIFY2(run.exitCode == 1, qPrintable(run.err));
        const QJsonObject duplicates = QJsonDocument::fromJson(run.out.toUtf8())
                                           .object()
                                           .value(QStringLiteral("duplicates"))
                                           .toObject();
        QCOMPARE(duplicates.value(QStringLiteral("groups")).toInteger(), refresh.figures.groups());
        QCOMPARE(duplicates.value(QStringLiteral("extra_copies")).toInteger(),
                 refresh.figures.extraCopies());
        QCOMPARE(duplicates.value(QStringLiteral("money_at_risk_fen")).toInteger(),
                 refresh.figures.valueFen(100));
        QCOMPARE(duplicates.value(QStringLiteral("orders")).toInteger(),
                 refresh.figures.openOrders);
        const QJsonArray sideEffects = duplicates.value(QStringLiteral("side_effects")).toArray();
        QCOMPARE(sideEffects.size(), 3);
        for (const QJsonValue value : sideEffects) {
            const QJsonObject object = value.toObject();
            const auto &f =
                figuresOf(refresh.figures, object.value(QStringLiteral("name")).toString());
            QCOMPARE(object.value(QStringLiteral("groups")).toInteger(), f.openGroups);
            QCOMPARE(object.value(QStringLiteral("extra_copies")).toInteger(), f.extraCopies);
            QCOMPARE(object.value(QStringLiteral("unit")).toString(), mapping::unitName(f.unit));
        }
        QVERIFY(!duplicates.contains(QStringLiteral("coupon_groups")));
        const test::CliRun plain = test::runCli(
            {QStringLiteral("inspect"), QStringLiteral("--mapping"), shop.mappingPath(),
             QStringLiteral("--db"), account.dsnFor(shop.dsn().database).toString(true)});
        QVERIFY2(plain.exitCode == 1, qPrintable(plain.err));
        QVERIFY2(plain.out.contains(QStringLiteral("gift_card: 3 group(s), 3 extra copies worth "
                                                   "3000 fen")),
                 qPrintable(plain.out));

        // Another `live` for the coupons: that side effect starts over and counts by it; the
        // others keep their watermarks.
        QByteArray text = shop.mappingText();
        text.replace("live = \"status <> 'VOID'\"", "live = \"status NOT IN ('VOID', 'USED')\"");
        const mapping::Mapping changed =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("changed.toml"), text));
        QVERIFY(mapping::watchFingerprint(changed, changed.sideEffects.at(0)) !=
                mapping::watchFingerprint(mapping, mapping.sideEffects.at(0)));
        QVERIFY(!mapping::readMappedWatch(db, changed).sideEffects.at(0).complete());
        refresh = mapping::refreshMappedWatch(db, changed);
        QVERIFY(refresh.refreshed);
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures,
                              shopSideEffects(QStringLiteral("status NOT IN ('VOID', 'USED')")));
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon")).openGroups,
                 qint64(test::TeamShop::kCouponGroups + 1));
        // The count of open orders across side effects followed the restart.
        QCOMPARE(mapping::openMappedOrders(db, changed, 1000).size(), refresh.figures.openOrders);
    }

    // Keys that differ in case only are two groups in a table that compares them exactly and
    // one row in the watch's own table: the sums follow what the watch stored, on the first
    // pass and on a refresh, rather than what it wrote.
    void keysMeetingInTheWatchsCollation()
    {
        const test::TeamShop shop;
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        shop.execBusiness(QStringLiteral("ALTER TABLE t_coupon_grant MODIFY tpl_code VARCHAR(32) "
                                         "COLLATE utf8mb4_bin NOT NULL"));
        const qint64 order = test::TeamShop::kFirstOrder + 1; // without duplicates
        for (const char *code : {"promo", "promo", "PROMO", "PROMO", "PROMO"})
            insertCoupon(root, shop.business(), order, QLatin1String(code));
        QVERIFY(mapping::refreshMappedWatch(root, mapping).figures.complete());
        COMPARE_SUMS_WITH_GROUPS(root);
        insertCoupon(root, shop.business(), order, QStringLiteral("promo"));
        insertCoupon(root, shop.business(), order + 1, QStringLiteral("x"));
        insertCoupon(root, shop.business(), order + 1, QStringLiteral("X"));
        QVERIFY(mapping::refreshMappedWatch(root, mapping).refreshed);
        COMPARE_SUMS_WITH_GROUPS(root);
        QCOMPARE(db::scalar(root,
                            QStringLiteral("SELECT COUNT(*) FROM mapped_watch_group WHERE "
                                           "order_id = ? AND group_key = 'promo'"),
                            {order})
                     .toLongLong(),
                 qint64(1));
    }

    // On a replica (a session that refuses writes, as --read-db opens) the watch is read as
    // the primary last refreshed it, and says so; nothing is written.
    void readFromAReplicaAsLastRefreshed()
    {
        const test::TeamShop shop;
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        const mapping::MappedWatchRefresh primary = mapping::refreshMappedWatch(root, mapping);
        QVERIFY(primary.figures.complete());
        insertCoupon(root, shop.business(), test::TeamShop::kFirstOrder + 1,
                     QStringLiteral("late"));
        insertCoupon(root, shop.business(), test::TeamShop::kFirstOrder + 1,
                     QStringLiteral("late"));

        db::Connection replica(shop.dsn().asReadOnly(), QStringLiteral("replica"));
        const mapping::MappedWatchRefresh read =
            mapping::refreshMappedWatch(replica.database(), mapping);
        QVERIFY(!read.refreshed);
        QVERIFY2(read.why.contains(QStringLiteral("replica")), qPrintable(read.why));
        QCOMPARE(read.figures.extraCopies(), primary.figures.extraCopies());
        // The late copy counts once the primary refreshes.
        QCOMPARE(mapping::refreshMappedWatch(root, mapping).figures.extraCopies(),
                 primary.figures.extraCopies() + 1);
    }

    // More side effects than one step of the watch takes (30): each copy of the coupons counts
    // what the coupons count, on the first pass and on a refresh, and an order open in many
    // side effects is one open order.
    void moreSideEffectsThanOneStep()
    {
        const test::TeamShop shop;
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        QByteArray text = shop.mappingText();
        const qsizetype from = text.indexOf("[[side_effects]]");
        const QByteArray coupon = text.mid(from, text.indexOf("[[side_effects]]", from + 1) - from);
        QVERIFY(coupon.contains("name = \"coupon\""));
        QList<Expected> expected = shopSideEffects();
        for (int copy = 1; copy <= 31; ++copy) {
            const QByteArray name = "coupon_" + QByteArray::number(copy);
            text +=
                "\n" + QByteArray(coupon).replace("name = \"coupon\"", "name = \"" + name + '"');
            Expected e = expected.first();
            e.name = QString::fromLatin1(name);
            expected << e;
        }
        const mapping::Mapping mapping =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("many.toml"), text));
        QCOMPARE(mapping.sideEffects.size(), 34);

        mapping::MappedWatchRefresh refresh = mapping::refreshMappedWatch(root, mapping);
        QVERIFY2(refresh.refreshed, qPrintable(refresh.why));
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, expected);
        const qint64 openOrders = refresh.figures.openOrders;
        QCOMPARE(mapping::openMappedOrders(root, mapping, 1000).size(), openOrders);

        const qint64 clean = test::TeamShop::kFirstOrder + 1; // a paid order without duplicates
        insertCoupon(root, shop.business(), clean, QStringLiteral("NEWUSER5"));
        insertCoupon(root, shop.business(), clean, QStringLiteral("NEWUSER5"));
        refresh = mapping::refreshMappedWatch(root, mapping);
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, expected);
        QCOMPARE(refresh.figures.openOrders, openOrders + 1);
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon_31")).openGroups,
                 qint64(test::TeamShop::kCouponGroups + 1));
    }

    // A mapping's names reach SQL quoted and are substituted once: an order column named ord%6
    // (a placeholder of the scan's statement) and a key column whose name is SQL are columns
    // like any other, through `payops mapping check`, the scan and `payops inspect`. The scan's
    // chained QString::arg once put the key into the order's quotes, so that the key's text ran.
    void namesHoldingPlaceholdersOrSql()
    {
        const test::TeamShop shop;
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        const QString order = QStringLiteral("ord%6");
        const QString key = QStringLiteral("tpl` UNION SELECT 7, SLEEP(3) #");
        shop.execBusiness(QStringLiteral("ALTER TABLE t_coupon_grant RENAME COLUMN order_no TO "
                                         "%1, RENAME COLUMN tpl_code TO %2")
                              .arg(db::quoteIdentifier(order), db::quoteIdentifier(key)));
        QByteArray text = shop.mappingText();
        const QByteArray coupon = "order = \"order_no\"\nuser = \"uid\"\nkey = [\"tpl_code\"]";
        QVERIFY(text.contains(coupon));
        text.replace(coupon, "order = \"" + order.toUtf8() + "\"\nuser = \"uid\"\nkey = [\"" +
                                 key.toUtf8() + "\"]");
        const QString path = shop.writeMapping(QStringLiteral("names.toml"), text);
        const QString dsn = shop.dsn().toString(true);

        const test::CliRun check =
            test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                          QStringLiteral("--mapping"), path, QStringLiteral("--db"), dsn});
        QVERIFY2(check.exitCode == 0, qPrintable(check.out + check.err));
        QVERIFY2(check.out.contains(QLatin1String("usable")), qPrintable(check.out));

        const mapping::Mapping mapping = mapping::loadMapping(path);
        const mapping::MappedWatchRefresh refresh = mapping::refreshMappedWatch(root, mapping);
        QVERIFY2(refresh.refreshed, qPrintable(refresh.why));
        QList<Expected> expected = shopSideEffects();
        expected.first().group =
            db::quoteIdentifier(order) + QStringLiteral(", ") + db::quoteIdentifier(key);
        COMPARE_WITH_GROUP_BY(root, shop, refresh.figures, expected);
        QCOMPARE(figuresOf(refresh.figures, QStringLiteral("coupon")).openGroups,
                 qint64(test::TeamShop::kCouponGroups));

        const test::CliRun inspect =
            test::runCli({QStringLiteral("inspect"), QStringLiteral("--mapping"), path,
                          QStringLiteral("--db"), dsn});
        QVERIFY2(inspect.exitCode == 1, qPrintable(inspect.out + inspect.err));
        QVERIFY2(inspect.out.contains(
                     QStringLiteral("coupon: %1 group(s)").arg(test::TeamShop::kCouponGroups)),
                 qPrintable(inspect.out));
    }

    // The first pass keeps to its budget, stops on cancel, reports progress and goes on from
    // where it stopped.
    void firstPassIsResumable()
    {
        const test::TeamShop shop;
        db::Connection connection(shop.dsn(), QStringLiteral("watch"));
        const QSqlDatabase db = connection.database();
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());

        WatchRefreshOptions options;
        options.firstPassBudgetMs = 0;
        mapping::MappedWatchRefresh refresh = mapping::refreshMappedWatch(db, mapping, options);
        QVERIFY(refresh.refreshed);
        QVERIFY(!refresh.figures.complete());
        QCOMPARE(refresh.figures.percentScanned(), 0);

        std::atomic<bool> cancel{true};
        options.firstPassBudgetMs = -1;
        options.cancel = &cancel;
        QVERIFY(mapping::refreshMappedWatch(db, mapping, options).cancelled);

        cancel = false;
        options.firstPassChunk = 40; // several steps over the shop's 300 orders
        QList<int> percents;
        options.progress = [&percents](const DuplicateWatchFigures &figures) {
            percents << figures.percentScanned();
        };
        refresh = mapping::refreshMappedWatch(db, mapping, options);
        QVERIFY(refresh.figures.complete());
        QVERIFY2(percents.size() > 3, qPrintable(QString::number(percents.size())));
        QVERIFY(std::is_sorted(percents.cbegin(), percents.cend()));
        QCOMPARE(percents.last(), 100);
        db::Connection rootConnection(shop.dsn(), QStringLiteral("root"));
        COMPARE_WITH_GROUP_BY(rootConnection.database(), shop, refresh.figures, shopSideEffects());
    }
};

PAYOPS_TEST_MAIN_CORE(TestMappedWatch)
#include "tst_mappedwatch.moc"
