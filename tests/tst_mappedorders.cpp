// State counts and order evidence on a team's own tables (TeamShop), read through the mapping
// by an account holding only payops_finance plus SELECT on the team's database.
#include "bulkdata.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/mapping/mappedorders.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QSqlQuery>

#include <memory>

namespace payops {
namespace {

// The team's own count, by their raw value, with SQL of its own: every order, or those created
// at or after `since` (the server's DATETIME text).
QMap<QString, qint64> groupByState(const test::TeamShop &shop, const QString &since = {})
{
    db::Connection admin(test::serverDsn().withDatabase(shop.business()),
                         QStringLiteral("test-admin"));
    QSqlQuery query = db::exec(
        admin.database(),
        QStringLiteral("SELECT state, COUNT(*) FROM t_order WHERE gmt_create >= ? GROUP BY state"),
        {since.isEmpty() ? QStringLiteral("1970-01-02") : since});
    QMap<QString, qint64> counts;
    while (query.next())
        counts.insert(query.value(0).toString(), query.value(1).toLongLong());
    return counts;
}

// The counts by the team's raw value, as the tally gave them, for comparing with groupByState.
QMap<QString, qint64> byRawValue(const mapping::Mapping &mapping,
                                 const std::optional<QList<mapping::MappedStateCount>> &counts)
{
    QMap<QString, qint64> raw;
    for (const mapping::MappedStateCount &count :
         counts.value_or(QList<mapping::MappedStateCount>{}))
        if (count.orders > 0)
            raw.insert(count.named ? mapping.orders.valueOf(count.state).toString() : count.state,
                       count.orders);
    return raw;
}

// Seconds from `time` (the server's DATETIME text, UTC) to the server's now.
qint64 secondsSince(const QSqlDatabase &db, const QString &time)
{
    return db::scalar(db, QStringLiteral("SELECT UNIX_TIMESTAMP() - UNIX_TIMESTAMP(?)"), {time})
        .toLongLong();
}

// The shop at a schema level, read by an account holding only payops_finance plus the least
// the team's DBA grants it: SELECT on their database.
struct FinanceOnShop
{
    explicit FinanceOnShop(const QString &level)
        : shop(*db::parseSchemaLevel(level))
        , finance(QStringLiteral("payops_finance"))
        , mapping(mapping::loadMapping(shop.mappingPath()))
    {
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        connection = std::make_unique<db::Connection>(finance.dsnFor(shop.dsn().database),
                                                      QStringLiteral("t"));
    }

    QSqlDatabase db() const { return connection->database(); }

    test::TeamShop shop;
    test::ScratchAccount finance;
    mapping::Mapping mapping;
    std::unique_ptr<db::Connection> connection;
};

} // namespace

class TestMappedOrders : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void stateCountsEqualTheTeamsOwnGroupBy_data() { test::addSchemaLevelRows(); }

    void stateCountsEqualTheTeamsOwnGroupBy()
    {
        QFETCH(QString, level);
        const FinanceOnShop on(level);
        const test::TeamShop &shop = on.shop;
        const mapping::Mapping &mapping = on.mapping;

        const QMap<QString, qint64> raw = groupByState(shop);
        const auto counts = mapping::mappedStateCounts(on.db(), mapping);
        QVERIFY(counts);
        QCOMPARE(counts->size(), mapping.orders.states.size());
        for (const mapping::MappedStateCount &count : *counts) {
            QVERIFY(count.named);
            const QString value = mapping.orders.valueOf(count.state).toString();
            QCOMPARE(count.orders, raw.value(value));
        }
        qint64 total = 0;
        for (const mapping::MappedStateCount &count : *counts)
            total += count.orders;
        QCOMPARE(total, qint64(test::TeamShop::kOrders));

        // A value no state names is shown as itself.
        shop.execBusiness(QStringLiteral("UPDATE t_order SET state = 7 WHERE order_no = %1")
                              .arg(test::TeamShop::kFirstOrder + 1));
        const auto after = mapping::mappedStateCounts(on.db(), mapping);
        QVERIFY(after);
        QCOMPARE(after->size(), mapping.orders.states.size() + 1);
        QCOMPARE(after->last().state, QStringLiteral("7"));
        QVERIFY(!after->last().named);
        QCOMPARE(after->last().orders, qint64(1));
        QCOMPARE(after->at(1).state, QStringLiteral("PAID"));
        QCOMPARE(after->at(1).orders, raw.value(QStringLiteral("1")) - 1);

        // A window by created_at: the seed creates one order a minute from 2026-11-01 00:00 UTC.
        const auto recent = mapping::mappedStateCounts(
            on.db(), mapping, QDateTime(QDate(2026, 11, 1), QTime(4, 0), Qt::UTC));
        QVERIFY(recent);
        qint64 inWindow = 0;
        for (const mapping::MappedStateCount &count : *recent)
            inWindow += count.orders;
        QCOMPARE(inWindow, qint64(test::TeamShop::kOrders - 240));

        const std::atomic<bool> cancelled{true};
        QVERIFY(!mapping::mappedStateCounts(on.db(), mapping, {}, &cancelled));
    }

    // With [orders] updated_at the console's tally reads the window once, then only the orders
    // changed or created since: its counts stay equal to a GROUP BY of the team's own, a late
    // commit is counted, and a refresh reads the changed rows, not the window.
    void stateTallyReadsWhatChanged_data() { test::addSchemaLevelRows(); }

    void stateTallyReadsWhatChanged()
    {
        QFETCH(QString, level);
        const FinanceOnShop on(level);
        const test::TeamShop &shop = on.shop;
        const mapping::Mapping &mapping = on.mapping;
        QVERIFY(!mapping.orders.updatedAt.isEmpty());
        const QSqlDatabase db = on.db();

        // A window back to the seed's first order (2026-11-01 00:00 UTC, one a minute).
        mapping::MappedStateTally tally(secondsSince(db, QStringLiteral("2026-11-01")) + 3600);
        auto counts = tally.advance(db, mapping);
        QCOMPARE(byRawValue(mapping, counts), groupByState(shop));
        QCOMPARE(tally.rowsRead(), qint64(test::TeamShop::kOrders));

        // Nothing changed: a refresh reads (almost) nothing.
        const qint64 idleStart = bench::sessionRowsRead(db);
        counts = tally.advance(db, mapping);
        const qint64 idle = bench::sessionRowsRead(db) - idleStart;
        QCOMPARE(tally.rowsRead(), qint64(0));
        QCOMPARE(byRawValue(mapping, counts), groupByState(shop));

        // States change and orders are created: each moves to its new state, and the refresh
        // reads those rows (the new ones twice: by creation and by change), not the window.
        constexpr qint64 first = test::TeamShop::kFirstOrder;
        shop.execBusiness(QStringLiteral("UPDATE t_order SET state = 2 WHERE order_no IN "
                                         "(%1, %2, %3)")
                              .arg(first + 9)
                              .arg(first + 19)
                              .arg(first + 29)); // PENDING orders closed
        shop.execBusiness(QStringLiteral("UPDATE t_order SET state = 3 WHERE order_no IN (%1, %2)")
                              .arg(first + 1)
                              .arg(first + 2)); // PAID orders refunding
        shop.execBusiness(QStringLiteral(
            "INSERT INTO t_order (order_no, uid, total, state, gmt_create) VALUES "
            "(900001, 7001, 9.90, 0, UTC_TIMESTAMP()), (900002, 7002, 9.90, 0, UTC_TIMESTAMP()), "
            "(900003, 7003, 9.90, 7, UTC_TIMESTAMP())"));
        const qint64 busyStart = bench::sessionRowsRead(db);
        counts = tally.advance(db, mapping);
        const qint64 busy = bench::sessionRowsRead(db) - busyStart;
        QCOMPARE(byRawValue(mapping, counts), groupByState(shop));
        QCOMPARE(tally.rowsRead(), qint64(5 + 3 + 3));
        QCOMPARE(counts->last().state, QStringLiteral("7")); // a value no state names
        QVERIFY(!counts->last().named);
        // Measured: 2 rows idle and 13 with the 11 changed, against the window's 300 orders.
        const QString reads = QStringLiteral("idle %1, busy %2").arg(idle).arg(busy);
        QVERIFY2(idle <= 5, qPrintable(reads));
        QVERIFY2(busy - idle <= 2 * 11, qPrintable(reads));

        // A transaction whose change carries a time before the last refresh (its statement ran
        // earlier) and commits after it is still counted.
        {
            db::Connection writer(test::serverDsn().withDatabase(shop.business()),
                                  QStringLiteral("writer"));
            db::Transaction open(writer.database());
            db::exec(writer.database(), QStringLiteral("SET timestamp = UNIX_TIMESTAMP() - 20"));
            db::exec(
                writer.database(),
                QStringLiteral("UPDATE t_order SET state = 4 WHERE order_no = %1").arg(first + 3));
            counts = tally.advance(db, mapping);
            QCOMPARE(byRawValue(mapping, counts), groupByState(shop)); // not committed yet
            open.commit();
        }
        counts = tally.advance(db, mapping);
        QCOMPARE(byRawValue(mapping, counts), groupByState(shop));
        // REFUNDED: the seed's two and the late one.
        QCOMPARE(byRawValue(mapping, counts).value(QStringLiteral("4")), qint64(3));

        // A narrower window: the orders created before it leave the counts. The seed's orders
        // from 04:00 on stay (a margin of half a minute either side of the edge).
        tally.setWindowSeconds(secondsSince(db, QStringLiteral("2026-11-01 03:59:30")));
        counts = tally.advance(db, mapping);
        QCOMPARE(byRawValue(mapping, counts),
                 groupByState(shop, QStringLiteral("2026-11-01 04:00")));
        // A wider one again: the window is read once more.
        tally.setWindowSeconds(secondsSince(db, QStringLiteral("2026-11-01")) + 3600);
        counts = tally.advance(db, mapping);
        QCOMPARE(byRawValue(mapping, counts), groupByState(shop));
        QCOMPARE(tally.rowsRead(), qint64(test::TeamShop::kOrders + 3));

        // Without updated_at, each refresh is the GROUP BY over the window, as before.
        QByteArray text = shop.mappingText();
        text.replace("updated_at = \"gmt_modified\"\n", "");
        const mapping::Mapping plain =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("plain.toml"), text));
        mapping::MappedStateTally every(secondsSince(db, QStringLiteral("2026-11-01")) + 3600);
        QCOMPARE(byRawValue(plain, every.advance(db, plain)), groupByState(shop));
        QCOMPARE(every.rowsRead(), qint64(0));
        // So is a window holding more orders than the tally keeps.
        mapping::MappedStateTally large(secondsSince(db, QStringLiteral("2026-11-01")) + 3600, 100);
        QCOMPARE(byRawValue(mapping, large.advance(db, mapping)), groupByState(shop));
        QCOMPARE(large.rowsRead(), qint64(101));
        QCOMPARE(byRawValue(mapping, large.advance(db, mapping)), groupByState(shop));
        QCOMPARE(large.rowsRead(), qint64(0));

        const std::atomic<bool> cancelled{true};
        QVERIFY(!mapping::MappedStateTally(3600).advance(db, mapping, &cancelled));
    }

    void evidenceOfADuplicateShowsBothCopies_data() { test::addSchemaLevelRows(); }

    void evidenceOfADuplicateShowsBothCopies()
    {
        QFETCH(QString, level);
        const FinanceOnShop on(level);
        const test::TeamShop &shop = on.shop;
        const mapping::Mapping &mapping = on.mapping;
        const qint64 orderId = test::TeamShop::kUsedCouponOrder; // i = 11: 20.90 yuan, paid

        const mapping::MappedOrderEvidence evidence =
            mapping::loadMappedOrderEvidence(on.db(), mapping, orderId);
        QVERIFY(evidence.found);
        QCOMPARE(evidence.order.state, QStringLiteral("PAID"));
        QVERIFY(evidence.order.stateNamed);
        QCOMPARE(evidence.order.amountFen, qint64(2090));
        QCOMPARE(evidence.payments.size(), 1);
        QCOMPARE(evidence.payments[0].payNo, QByteArray("42000") + QByteArray::number(orderId));
        QCOMPARE(evidence.payments[0].amountFen, qint64(2090));
        QCOMPARE(evidence.payments[0].channel, QStringLiteral("alipay"));

        QList<mapping::MappedSideEffectRow> coupons;
        for (const mapping::MappedSideEffectRow &row : evidence.sideEffects)
            if (row.sideEffect == QStringLiteral("coupon"))
                coupons << row;
        QCOMPARE(coupons.size(), 2);
        QCOMPARE(coupons[0].key, QStringList{QStringLiteral("NEWUSER5")});
        QCOMPARE(coupons[0].value, qint64(500));
        QVERIFY(coupons[0].live && !coupons[0].used);
        QVERIFY(coupons[1].live && coupons[1].used); // the extra copy, already used
        QVERIFY(coupons[0].id < coupons[1].id);

        // payops never saw this shop's callbacks: its own tables hold nothing for the order.
        QVERIFY(evidence.callbacks.isEmpty());
        QVERIFY(evidence.traces.isEmpty());

        // A row payops froze is shown as such and is no longer live, whatever `live` says.
        shop.execBusiness(
            QStringLiteral("INSERT INTO %1.mapped_compensation (business_table, target_id, "
                           "side_effect, kept_id, order_id, action, mapping_sha256, "
                           "statement) VALUES ('%2.t_coupon_grant', %3, 'coupon', %4, %5, "
                           "'FREEZE', REPEAT('0', 64), 'UPDATE')")
                .arg(db::quoteIdentifier(shop.dsn().database), shop.business())
                .arg(coupons[1].id)
                .arg(coupons[0].id)
                .arg(orderId));
        const mapping::MappedOrderEvidence frozen =
            mapping::loadMappedOrderEvidence(on.db(), mapping, orderId);
        QList<mapping::MappedSideEffectRow> again;
        for (const mapping::MappedSideEffectRow &row : frozen.sideEffects)
            if (row.sideEffect == QStringLiteral("coupon"))
                again << row;
        QCOMPARE(again.size(), 2);
        QCOMPARE(again[1].compensated, QStringLiteral("FREEZE"));
        QVERIFY(!again[1].live);
        QVERIFY(again[0].live);

        QVERIFY(!mapping::loadMappedOrderEvidence(on.db(), mapping, 1).found);
    }
};

} // namespace payops

PAYOPS_TEST_MAIN_CORE(payops::TestMappedOrders)
#include "tst_mappedorders.moc"
