// State counts and order evidence on a team's own tables (TeamShop), read through the mapping
// by an account holding only payops_finance plus SELECT on the team's database.
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

// The team's own count, by their raw value, with SQL of its own.
QMap<QString, qint64> groupByState(const test::TeamShop &shop)
{
    db::Connection admin(test::serverDsn().withDatabase(shop.business()),
                         QStringLiteral("test-admin"));
    QSqlQuery query = db::exec(
        admin.database(), QStringLiteral("SELECT state, COUNT(*) FROM t_order GROUP BY state"));
    QMap<QString, qint64> counts;
    while (query.next())
        counts.insert(query.value(0).toString(), query.value(1).toLongLong());
    return counts;
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
