#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/mapping/mappedcompensation.h"
#include "domain/mapping/mappedrequest.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensationrequest.h"
#include "domain/money/compensationworkflow.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QProcess>
#include <QRegularExpression>

#include <thread>

using namespace payops;
using mapping::MappedAction;

namespace {

QString reason()
{
    return QStringLiteral("duplicate payout, INC-9");
}
QString ticket()
{
    return QStringLiteral("INC-9");
}

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

db::SchemaLevel levelOf(const QString &name)
{
    return *db::parseSchemaLevel(name);
}

// The extra live copies, found independently of the planner: in every (order, key...) group of
// live rows not recorded in mapped_compensation, every row but the lowest id. "table:id" each.
QStringList extraLiveCopies(const QSqlDatabase &root, const test::TeamShop &shop)
{
    struct Side
    {
        const char *table, *id, *group, *live;
    };
    const Side sides[] = {{"t_coupon_grant", "id", "order_no, tpl_code", "status <> 'VOID'"},
                          {"t_gift_card", "card_id", "order_ref, card_type, batch", "status <> 9"},
                          {"t_point_flow", "id", "biz_no, biz_type", "delta > 0"}};
    QStringList copies;
    for (const Side &side : sides) {
        const QString table =
            db::quoteIdentifier(shop.business()) + QLatin1Char('.') + QLatin1String(side.table);
        const QString live =
            QStringLiteral("%1 AND %2 NOT IN (SELECT target_id FROM mapped_compensation WHERE "
                           "business_table = '%3.%4')")
                .arg(QLatin1String(side.live), QLatin1String(side.id), shop.business(),
                     QLatin1String(side.table));
        QSqlQuery rows = db::exec(
            root, QStringLiteral("SELECT t.%1 FROM %2 t WHERE %3 AND t.%1 NOT IN (SELECT MIN(%1) "
                                 "FROM %2 WHERE %3 GROUP BY %4) AND (%4) IN (SELECT %4 FROM %2 "
                                 "WHERE %3 GROUP BY %4 HAVING COUNT(*) > 1) ORDER BY t.%1")
                      .arg(QLatin1String(side.id), table, live, QLatin1String(side.group)));
        while (rows.next())
            copies << QStringLiteral("%1:%2").arg(QLatin1String(side.table),
                                                  rows.value(0).toString());
    }
    return copies;
}

QStringList planned(const mapping::Mapping &mapping, const mapping::MappedCompensationPlan &plan)
{
    QStringList copies;
    for (const mapping::MappedCopy &copy : plan.copies)
        copies << QStringLiteral("%1:%2")
                      .arg(mapping.sideEffect(copy.sideEffect)->table)
                      .arg(copy.targetId);
    return copies;
}

// A checksum of a side-effect table's rows compensation must not touch: every row of the
// seed but `targets`.
QString untouched(const QSqlDatabase &root, const test::TeamShop &shop, const QString &table,
                  const QString &id, const QStringList &targets, qint64 lastSeeded)
{
    QStringList ids{QStringLiteral("0")};
    for (const QString &target : targets) {
        if (target.startsWith(table + QLatin1Char(':')))
            ids << target.section(QLatin1Char(':'), 1);
    }
    QSqlQuery columns = db::exec(
        root,
        QStringLiteral("SELECT GROUP_CONCAT(CONCAT('`', COLUMN_NAME, '`')) FROM "
                       "information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"),
        {shop.business(), table});
    columns.next();
    return db::scalar(root,
                      QStringLiteral("SELECT CONCAT(COUNT(*), '/', BIT_XOR(CRC32(CONCAT_WS('|', "
                                     "%1)))) FROM %2.%3 WHERE %4 <= %5 AND %4 NOT IN (%6)")
                          .arg(columns.value(0).toString(), db::quoteIdentifier(shop.business()),
                               table, id)
                          .arg(lastSeeded)
                          .arg(ids.join(QLatin1Char(','))))
        .toString();
}

void setThreshold(const QSqlDatabase &root, qint64 fen)
{
    db::exec(
        root,
        QStringLiteral("UPDATE payops_meta SET value = ? WHERE name = 'four_eyes_threshold_fen'"),
        {QString::number(fen)});
}

// A mapped compensation of `scope`, or the approval of request `approve`, as runMappedCompensation
// does it for the console and the command line.
mapping::MappedResult runMapped(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                const mapping::MappedScope &scope, qint64 approve = 0)
{
    mapping::MappedJob job;
    job.scope = scope;
    job.approveRequestId = approve;
    job.reason = reason();
    job.ticket = ticket();
    return mapping::runMappedCompensation(db, mapping, job);
}

// What the test mapping plans for the whole shop at 100 fen per 100 points: 7 coupons of
// 5.00 yuan, 3 gift cards of 10.00 yuan, 255 points; the used coupon is finance's.
constexpr qint64 kShopFen = 3500 + 3000 + 255;

} // namespace

class TestMappedCompensation final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The whole story as an operator with only the business grants compensation needs: a dry
    // run, the run, a rerun, and what each left behind, at both schema levels.
    void compensatesTheExtraCopiesOnce_data() { test::addSchemaLevelRows(); }
    void compensatesTheExtraCopiesOnce()
    {
        QFETCH(QString, level);
        test::TeamShop shop(levelOf(level));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        // Every business grant compensation needs (docs/mapping.md) but UPDATE on the coupons,
        // until the refusal below was seen.
        QStringList grants =
            test::teamShopCompensationGrants(shop.business(), operatorAccount.user());
        const QString couponUpdate = grants.filter(QStringLiteral("t_coupon_grant")).constFirst();
        grants.removeOne(couponUpdate);
        for (const QString &grant : std::as_const(grants))
            shop.execBusiness(grant);
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        db::Connection root(shop.dsn(), QStringLiteral("root"));
        db::Connection asOperator(operatorAccount.dsnFor(shop.dsn().database),
                                  QStringLiteral("operator"));
        const QSqlDatabase db = asOperator.database();

        const QMap<QString, qint64> before = shop.checksums();
        const QStringList extra = extraLiveCopies(root.database(), shop);
        QCOMPARE(extra.size(), test::TeamShop::kCouponGroups + test::TeamShop::kGiftCardGroups +
                                   test::TeamShop::kPointGroups);
        const qint64 lastPoint =
            count(root.database(), QStringLiteral("SELECT MAX(id) FROM %1.t_point_flow")
                                       .arg(db::quoteIdentifier(shop.business())));
        const QStringList sums{untouched(root.database(), shop, QStringLiteral("t_coupon_grant"),
                                         QStringLiteral("id"), extra, 1 << 30),
                               untouched(root.database(), shop, QStringLiteral("t_gift_card"),
                                         QStringLiteral("card_id"), extra, 1 << 30),
                               untouched(root.database(), shop, QStringLiteral("t_point_flow"),
                                         QStringLiteral("id"), extra, lastPoint)};

        // The dry run plans exactly the extra copies and writes nothing.
        const mapping::MappedCompensationPlan plan =
            mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all());
        QCOMPARE(planned(mapping, plan), extra);
        QCOMPARE(plan.count(QStringLiteral("coupon"), MappedAction::Freeze),
                 test::TeamShop::kCouponGroups - 1);
        QCOMPARE(plan.count(QStringLiteral("coupon"), MappedAction::Finance), 1);
        QCOMPARE(plan.count(QStringLiteral("gift_card"), MappedAction::Freeze),
                 test::TeamShop::kGiftCardGroups);
        QCOMPARE(plan.count(QStringLiteral("points"), MappedAction::Reverse),
                 test::TeamShop::kPointGroups);
        // Yuan in fen exactly: seven 5.00 coupons.
        QCOMPARE(plan.valueFen(QStringLiteral("coupon"), MappedAction::Freeze), qint64(3500));
        // What four eyes counts: the coupons, three 10-yuan gift cards and 255 points at 1 fen
        // each, not the used coupon.
        QCOMPARE(plan.moneyFen(), qint64(3500 + 3000 + 255));
        QVERIFY(mapping::planMappedCompensation(db, mapping, {}).isEmpty());
        QCOMPARE(mapping::planMappedCompensation(
                     db, mapping, mapping::MappedScope{{test::TeamShop::kUsedCouponOrder}, false})
                     .copies.size(),
                 1);
        // Stopped, planning does not go on (nor the run, below).
        const std::atomic<bool> stop{true};
        QVERIFY(mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all(), &stop)
                    .cancelled);

        const qint64 auditBefore =
            count(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"));
        // Without the UPDATE grant on the coupons the refusal names it, before anything is
        // written anywhere (the gift cards and points it may change are left alone too).
        const QString refusal = test::refusal(
            [&] { mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket()); });
        QVERIFY2(refusal.contains(
                     QStringLiteral("GRANT UPDATE ON `%1`.`t_coupon_grant`").arg(shop.business())),
                 qPrintable(refusal));
        QCOMPARE(shop.checksums(), before);
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM mapped_compensation")),
                 qint64(0));
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log")),
                 auditBefore);
        shop.execBusiness(couponUpdate);
        QVERIFY(
            mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket(), 200, &stop)
                .cancelled);
        QCOMPARE(shop.checksums(), before);

        const mapping::MappedCompensationOutcome outcome =
            mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket(), 4);
        QCOMPARE(outcome.done.size(), extra.size() - 1);
        QCOMPARE(outcome.finance.size(), 1);
        QCOMPARE(outcome.finance.first().orderId, test::TeamShop::kUsedCouponOrder);
        QCOMPARE(outcome.skipped, 0);

        // Only the USED copy is still a live duplicate, and it is as it was.
        const QStringList left = extraLiveCopies(root.database(), shop);
        QCOMPARE(left, QStringList{planned(mapping, {outcome.finance})});
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT status FROM %1.t_coupon_grant WHERE id = %2")
                                .arg(db::quoteIdentifier(shop.business()))
                                .arg(outcome.finance.first().targetId))
                     .toString(),
                 QStringLiteral("USED"));
        // Nothing else changed: the tables compensation never writes, and every row of the side
        // effects it did not target.
        const QMap<QString, qint64> after = shop.checksums();
        for (const char *table : {"t_order", "t_pay_record", "t_member"})
            QCOMPARE(after.value(QLatin1String(table)), before.value(QLatin1String(table)));
        QCOMPARE((QStringList{untouched(root.database(), shop, QStringLiteral("t_coupon_grant"),
                                        QStringLiteral("id"), extra, 1 << 30),
                              untouched(root.database(), shop, QStringLiteral("t_gift_card"),
                                        QStringLiteral("card_id"), extra, 1 << 30),
                              untouched(root.database(), shop, QStringLiteral("t_point_flow"),
                                        QStringLiteral("id"), extra, lastPoint)}),
                 sums);

        // Each reversal row negates its row, copies user, order and key, and says what it is.
        const QString business = db::quoteIdentifier(shop.business());
        QCOMPARE(count(root.database(),
                       QStringLiteral(
                           "SELECT COUNT(*) FROM mapped_compensation m "
                           "JOIN %1.t_point_flow o ON o.id = m.target_id "
                           "JOIN %1.t_point_flow r ON r.id = m.reversal_id "
                           "WHERE m.action = 'REVERSE' AND r.delta = -o.delta AND r.uid = o.uid "
                           "AND r.biz_no = o.biz_no AND r.biz_type = o.biz_type "
                           "AND r.remark = 'payops reversal' AND o.remark = ''")
                           .arg(business)),
                 qint64(test::TeamShop::kPointGroups));
        QCOMPARE(count(root.database(),
                       QStringLiteral("SELECT COUNT(*) FROM %1.t_point_flow WHERE id > %2")
                           .arg(business)
                           .arg(lastPoint)),
                 qint64(test::TeamShop::kPointGroups));
        // The records and the audit carry the mapping's SHA-256, the statement and the account.
        QCOMPARE(db::scalar(root.database(),
                            QStringLiteral("SELECT COUNT(*) FROM mapped_compensation WHERE "
                                           "mapping_sha256 = ? AND created_by = ? AND statement = "
                                           "CASE side_effect WHEN 'coupon' THEN ? "
                                           "WHEN 'gift_card' THEN ? ELSE ? END"),
                            {QString::fromLatin1(mapping.sha256),
                             operatorAccount.user() + QStringLiteral("@localhost"),
                             mapping::mappedStatement(mapping, mapping.sideEffects[0]),
                             mapping::mappedStatement(mapping, mapping.sideEffects[1]),
                             mapping::mappedStatement(mapping, mapping.sideEffects[2])})
                     .toLongLong(),
                 qint64(outcome.done.size()));
        QSqlQuery audit = db::exec(
            root.database(),
            QStringLiteral(
                "SELECT action, target, JSON_VALUE(after_json, '$.mapping_sha256'), "
                "JSON_VALUE(after_json, '$.statement'), actor FROM ops_audit_log WHERE id > ? "
                "ORDER BY id"),
            {auditBefore});
        int entries = 0;
        while (audit.next()) {
            ++entries;
            const bool freeze =
                audit.value(0).toString() == QLatin1String("compensation.mapped_freeze");
            QVERIFY2(freeze ||
                         audit.value(0).toString() == QLatin1String("compensation.mapped_reverse"),
                     qPrintable(audit.value(0).toString()));
            QVERIFY(audit.value(1).toString().startsWith(shop.business() + QLatin1Char('.')));
            QCOMPARE(audit.value(2).toByteArray(), mapping.sha256);
            QCOMPARE(
                audit.value(3).toString(),
                mapping::mappedStatement(
                    mapping,
                    mapping.sideEffects
                        [audit.value(1).toString().contains(QLatin1String("t_coupon_grant")) ? 0
                         : audit.value(1).toString().contains(QLatin1String("t_gift_card"))  ? 1
                                                                                             : 2]));
            QCOMPARE(audit.value(4).toString(),
                     operatorAccount.user() + QStringLiteral("@localhost"));
        }
        QCOMPARE(entries, outcome.done.size());

        // A rerun plans only the used copy, and changes nothing.
        const qint64 records =
            count(root.database(), QStringLiteral("SELECT COUNT(*) FROM mapped_compensation"));
        const qint64 audited =
            count(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"));
        const mapping::MappedCompensationPlan again =
            mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all());
        QCOMPARE(again.copies.size(), 1);
        const mapping::MappedCompensationOutcome rerun =
            mapping::executeMappedCompensation(db, mapping, again, reason(), ticket());
        QVERIFY(rerun.done.isEmpty());
        // Even the first plan, carried out again, does nothing twice.
        QVERIFY(mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket())
                    .done.isEmpty());
        QCOMPARE(shop.checksums(), after);
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM mapped_compensation")),
                 records);
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM ops_audit_log")),
                 audited);
        QVERIFY(verifyAuditChain(root.database()).intact);
    }

    // The team changes a coupon group between the plan and the run; the run re-reads under
    // lock both the copy it takes back and the copy the group keeps, and leaves the group alone:
    // a copy used since the dry run is not frozen (planned again, it is the finance's), and a
    // group whose kept copy was voided keeps its other one rather than leave the customer none.
    void aGroupChangedSinceThePlanIsLeftAlone_data()
    {
        QTest::addColumn<bool>("keptCopy");
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("financeAfter");
        QTest::newRow("copy used") << false << QStringLiteral("USED") << 1;
        QTest::newRow("kept copy voided") << true << QStringLiteral("VOID") << 0;
    }

    void aGroupChangedSinceThePlanIsLeftAlone()
    {
        QFETCH(bool, keptCopy);
        QFETCH(QString, status);
        QFETCH(int, financeAfter);
        test::TeamShop shop;
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        db::Connection connection(shop.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const mapping::MappedScope scope{{test::TeamShop::kFirstOrder + 10}, false};
        const mapping::MappedCompensationPlan plan =
            mapping::planMappedCompensation(db, mapping, scope);
        QCOMPARE(plan.copies.size(), 1);
        QCOMPARE(plan.copies.first().action, MappedAction::Freeze);
        const mapping::MappedCopy &copy = plan.copies.first();
        db::execDirect(db,
                       QStringLiteral("UPDATE %1.t_coupon_grant SET status = '%2' WHERE id = %3")
                           .arg(db::quoteIdentifier(shop.business()), status)
                           .arg(keptCopy ? copy.keptId : copy.targetId));
        const QMap<QString, qint64> before = shop.checksums();
        const mapping::MappedCompensationOutcome outcome =
            mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket());
        QVERIFY(outcome.done.isEmpty());
        QCOMPARE(outcome.skipped, 1);
        QCOMPARE(shop.checksums(), before);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM mapped_compensation")), qint64(0));
        const mapping::MappedCompensationPlan again =
            mapping::planMappedCompensation(db, mapping, scope);
        QCOMPARE(again.copies.size(), financeAfter);
        QCOMPARE(again.count(QStringLiteral("coupon"), MappedAction::Finance), financeAfter);
    }

    // The reference mapping, payops's own schema at the incident's level: the same copies are
    // taken back as payops's own compensation would, once.
    void theReferenceMappingOnPayopsOwnTables()
    {
        test::ScratchDatabase scratch(QStringLiteral("ref"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 6);
        const mapping::Mapping mapping = mapping::loadMapping(
            QStringLiteral(PAYOPS_TEST_SOURCE_DIR "/../docs/mapping/payops.toml"));
        const mapping::MappedCompensationPlan plan =
            mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all());
        // Six orders: two templates' coupons and the points twice each; every third order's
        // second coupon of template 1 already used.
        QCOMPARE(plan.count(QStringLiteral("coupon"), MappedAction::Freeze), 10);
        QCOMPARE(plan.count(QStringLiteral("coupon"), MappedAction::Finance), 2);
        QCOMPARE(plan.count(QStringLiteral("points"), MappedAction::Reverse), 6);
        const mapping::MappedCompensationOutcome outcome =
            mapping::executeMappedCompensation(db, mapping, plan, reason(), ticket());
        QCOMPARE(outcome.done.size(), 16);
        QCOMPARE(
            count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE status = 'FROZEN'")),
            qint64(10));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM point_log r JOIN point_log o ON "
                                          "o.id = r.reverses_id WHERE r.points = -o.points AND "
                                          "r.pay_no <=> o.pay_no AND r.user_id = o.user_id")),
                 qint64(6));
        QCOMPARE(
            mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all()).copies.size(),
            2);
    }

    // Four eyes through a mapping, as two accounts holding payops_operator and the business
    // grants. What Alice compensates alone counts toward her allowance: runs of one order each
    // cannot pass the threshold one by one, and the database refuses the row that would go
    // over even when the client does not ask. Above it a request is filed and nothing is
    // written; Alice cannot approve it, another mapping cannot, nor payops's own tables;
    // duplicates that changed make the approval refused; Bob with the same mapping carries
    // it out once, every row under the request, none against his own allowance.
    void fourEyesThroughTheMapping_data() { test::addSchemaLevelRows(); }
    void fourEyesThroughTheMapping()
    {
        QFETCH(QString, level);
        test::TeamShop shop(levelOf(level));
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        shop.grantCompensation(alice);
        shop.grantCompensation(bob);
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        db::Connection root(shop.dsn(), QStringLiteral("root"));
        const qint64 threshold = 2000;
        setThreshold(root.database(), threshold);
        db::Connection asAlice(alice.dsnFor(shop.dsn().database), QStringLiteral("alice"));
        db::Connection asBob(bob.dsnFor(shop.dsn().database), QStringLiteral("bob"));
        const QSqlDatabase db = asAlice.database();
        const auto recorded = [&root] {
            return count(root.database(),
                         QStringLiteral("SELECT COUNT(*) FROM mapped_compensation"));
        };

        QList<qint64> orders;
        for (const mapping::MappedCopy &copy :
             mapping::planMappedCompensation(db, mapping, mapping::MappedScope::all()).copies) {
            if (copy.action != MappedAction::Finance && !orders.contains(copy.orderId))
                orders << copy.orderId;
        }
        qint64 carriedOut = 0;
        QList<qint64> filedOrders;
        for (qint64 order : orders) {
            const mapping::MappedResult run = runMapped(db, mapping, {{order}, false});
            QVERIFY2(run.refusal.isEmpty(), qPrintable(run.refusal));
            if (run.filedRequestId > 0)
                filedOrders << order;
            else
                carriedOut += run.fourEyes.moneyFen;
        }
        QVERIFY(!filedOrders.isEmpty());
        QVERIFY(carriedOut <= threshold);
        QCOMPARE(soloCompensatedFen(db), carriedOut);
        QCOMPARE(count(root.database(),
                       QStringLiteral("SELECT SUM(amount_fen) FROM mapped_compensation")),
                 carriedOut);
        const qint64 soloRows = recorded();

        // Past the client's check: the database refuses the row, and the batch writes nothing.
        QMap<QString, qint64> before = shop.checksums();
        const mapping::MappedCompensationPlan over =
            mapping::planMappedCompensation(db, mapping, {filedOrders, false});
        QVERIFY(carriedOut + over.moneyFen() > threshold);
        const QString refused = test::refusal(
            [&] { mapping::executeMappedCompensation(db, mapping, over, reason(), ticket()); });
        QVERIFY2(refused.contains(QStringLiteral("four eyes")), qPrintable(refused));
        QCOMPARE(shop.checksums(), before);
        QCOMPARE(recorded(), soloRows);
        // Nor can a row claim another account, or no worth, to slip under the allowance.
        const QString row = QStringLiteral(
            "INSERT INTO mapped_compensation (business_table, target_id, side_effect, kept_id, "
            "order_id, action, value_fen, amount_fen, mapping_sha256, statement, created_by) "
            "VALUES ('x.y', 1, 'coupon', 0, 1, 'FREEZE', 5000, 0, '', '', %1)");
        const QString claimed =
            test::refusal([&] { db::exec(db, row.arg(QStringLiteral("'someone@%'"))); });
        QVERIFY2(claimed.contains(QStringLiteral("created_by")), qPrintable(claimed));
        const QString free =
            test::refusal([&] { db::exec(db, row.arg(QStringLiteral("CURRENT_USER()"))); });
        QVERIFY2(free.contains(QStringLiteral("four eyes")), qPrintable(free));

        // The rest is filed as a request, and nothing is written.
        const mapping::MappedResult filed = runMapped(db, mapping, mapping::MappedScope::all());
        QVERIFY2(filed.refusal.isEmpty(), qPrintable(filed.refusal));
        QVERIFY(filed.filedRequestId > 0);
        QCOMPARE(filed.fourEyes.moneyFen, kShopFen - carriedOut);
        QCOMPARE(shop.checksums(), before);
        QCOMPARE(recorded(), soloRows);
        const qint64 id = filed.filedRequestId;
        const auto request = loadCompensationRequest(asBob.database(), id);
        QVERIFY(request && request->mapped);
        QCOMPARE(request->status, QStringLiteral("PENDING"));
        QCOMPARE(request->amountFen, kShopFen - carriedOut);
        QCOMPARE(request->mapped->sha256, QString::fromLatin1(mapping.sha256));
        QCOMPARE(request->mapped->fenPerHundredPoints, 100);
        QVERIFY(request->scope.everything);
        QCOMPARE(request->mapped->sideEffects.first(),
                 QStringLiteral("coupon: %1.t_coupon_grant").arg(shop.business()));

        // A request for one order, which Bob rejects: it is never carried out.
        const qint64 rejected =
            runMapped(db, mapping, {{filedOrders.first()}, false}).filedRequestId;
        QVERIFY(rejected > 0);
        QVERIFY(!test::refusal([&] { rejectCompensationRequest(db, rejected); }).isEmpty());
        QVERIFY(rejectCompensationRequest(asBob.database(), rejected));
        const mapping::MappedResult late = runMapped(asBob.database(), mapping, {}, rejected);
        QVERIFY2(late.refusal.contains(QStringLiteral("REJECTED")), qPrintable(late.refusal));

        // The requester: refused before anything, and by the database itself.
        const mapping::MappedResult own = runMapped(db, mapping, {}, id);
        QVERIFY2(own.refusal.contains(QStringLiteral("another operator")), qPrintable(own.refusal));
        QVERIFY(!test::refusal([&] {
                     db::exec(db,
                              QStringLiteral("UPDATE compensation_request SET status = 'APPROVED', "
                                             "decided_account = CURRENT_USER() WHERE id = ?"),
                              {id});
                 }).isEmpty());

        // Another mapping file, and payops's own tables, are refused and change nothing.
        const mapping::Mapping other = mapping::loadMapping(
            shop.writeMapping(QStringLiteral("other.toml"),
                              shop.mappingText() + "\n# the same tables, another file\n"));
        const mapping::MappedResult otherFile = runMapped(asBob.database(), other, {}, id);
        QVERIFY2(otherFile.refusal.contains(QStringLiteral("another mapping file")),
                 qPrintable(otherFile.refusal));
        CompensationJob ownTables;
        ownTables.approveRequestId = id;
        ownTables.reason = reason();
        ownTables.ticket = ticket();
        const CompensationResult notOurs = runCompensation(asBob.database(), ownTables);
        QVERIFY2(notOurs.refusal.contains(QStringLiteral("mapping")), qPrintable(notOurs.refusal));

        // The team issued one more copy since: the amount asked no longer fits.
        shop.execBusiness(QStringLiteral(
            "INSERT INTO t_coupon_grant (order_no, uid, tpl_code, face, status, gmt_create) "
            "SELECT order_no, uid, tpl_code, face, 'ISSUED', gmt_create FROM t_coupon_grant "
            "WHERE id = (SELECT MIN(id) FROM t_coupon_grant)"));
        const mapping::MappedResult grew = runMapped(asBob.database(), mapping, {}, id);
        QVERIFY2(grew.refusal.contains(QStringLiteral("grew")), qPrintable(grew.refusal));
        QCOMPARE(loadCompensationRequest(asBob.database(), id)->status, QStringLiteral("PENDING"));
        QCOMPARE(recorded(), soloRows);
        shop.execBusiness(QStringLiteral("DELETE FROM t_coupon_grant ORDER BY id DESC LIMIT 1"));
        QCOMPARE(shop.checksums(), before);

        const mapping::MappedResult approved = runMapped(asBob.database(), mapping, {}, id);
        QVERIFY2(approved.refusal.isEmpty(), qPrintable(approved.refusal));
        QVERIFY(approved.approved);
        const qint64 expected = test::TeamShop::kCouponGroups - 1 +
                                test::TeamShop::kGiftCardGroups + test::TeamShop::kPointGroups;
        QCOMPARE(count(root.database(),
                       QStringLiteral("SELECT COUNT(*) FROM mapped_compensation WHERE request_id "
                                      "= %1")
                           .arg(id)),
                 expected - soloRows);
        QCOMPARE(recorded(), expected);
        QCOMPARE(extraLiveCopies(root.database(), shop).size(), 1); // the used coupon
        QCOMPARE(loadCompensationRequest(asBob.database(), id)->status, QStringLiteral("EXECUTED"));
        // Under the request, not under Bob's own allowance.
        QCOMPARE(soloCompensatedFen(asBob.database()), 0);
        // Once: a second approval is refused and writes nothing.
        const mapping::MappedResult again = runMapped(asBob.database(), mapping, {}, id);
        QVERIFY2(again.refusal.contains(QStringLiteral("EXECUTED")), qPrintable(again.refusal));
        QCOMPARE(recorded(), expected);
    }

    // The command line, and two operators at once on the same orders: one running the command,
    // one in process. Each row is compensated once.
    void theCommandLineBesideAnotherOperator()
    {
        test::TeamShop shop;
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        shop.grantCompensation(alice);
        shop.grantCompensation(bob);
        const QStringList base{QStringLiteral("compensate"), QStringLiteral("--db"),
                               bob.dsnFor(shop.dsn().database).toString(true),
                               QStringLiteral("--mapping"), shop.mappingPath()};
        const QMap<QString, qint64> before = shop.checksums();
        const test::CliRun dry = test::runCli(base + QStringList{QStringLiteral("--dry-run")});
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.err));
        QVERIFY2(dry.out.contains(QStringLiteral("coupon: 7 to freeze (35.00 yuan, 0 points), 1 "
                                                 "used and left to finance (5.00 yuan, 0 points)")),
                 qPrintable(dry.out));
        QVERIFY2(dry.out.contains(QStringLiteral("gift_card: 3 to freeze (30.00 yuan, 0 points)")),
                 qPrintable(dry.out));
        QVERIFY2(dry.out.contains(QStringLiteral("points: 5 to reverse")), qPrintable(dry.out));
        QCOMPARE(shop.checksums(), before);

        // The used-coupon choice is payops's own; a mapping leaves used copies to finance.
        QCOMPARE(test::runCli(base + QStringList{QStringLiteral("--dry-run"),
                                                 QStringLiteral("--used-coupons"),
                                                 QStringLiteral("receivable")})
                     .exitCode,
                 2);
        // Above the four-eyes threshold a mapped compensation files a request and changes
        // nothing; Alice may approve it only with the very same mapping file.
        db::Connection root(shop.dsn(), QStringLiteral("root"));
        setThreshold(root.database(), 500);
        const QStringList act{QStringLiteral("--reason"), reason(), QStringLiteral("--ticket"),
                              ticket()};
        const test::CliRun filed = test::runCli(base + act);
        QCOMPARE(filed.exitCode, 1);
        const QRegularExpressionMatch request =
            QRegularExpression(QStringLiteral("request (\\d+) waits")).match(filed.err);
        QVERIFY2(request.hasMatch(), qPrintable(filed.err));
        QCOMPARE(shop.checksums(), before);
        const QStringList approveAsAlice{QStringLiteral("compensate"),
                                         QStringLiteral("--db"),
                                         alice.dsnFor(shop.dsn().database).toString(true),
                                         QStringLiteral("--approve"),
                                         request.captured(1),
                                         QStringLiteral("--reason"),
                                         reason(),
                                         QStringLiteral("--ticket"),
                                         ticket()};
        const test::CliRun withoutMapping = test::runCli(approveAsAlice);
        QCOMPARE(withoutMapping.exitCode, 1);
        QVERIFY2(withoutMapping.err.contains(QStringLiteral("--mapping")),
                 qPrintable(withoutMapping.err));
        const test::CliRun otherMapping = test::runCli(
            approveAsAlice +
            QStringList{QStringLiteral("--mapping"),
                        shop.writeMapping(QStringLiteral("changed.toml"),
                                          shop.mappingText() + "\n# changed since\n")});
        QCOMPARE(otherMapping.exitCode, 1);
        QVERIFY2(otherMapping.err.contains(QStringLiteral("another mapping file")),
                 qPrintable(otherMapping.err));
        QCOMPARE(shop.checksums(), before);
        // One gift card's order (10.00 yuan) is above the threshold too: Bob files it, Bob may
        // not approve it, Alice approves it with the same mapping file.
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        qint64 giftCardOrder = 0;
        for (const mapping::MappedCopy &copy :
             mapping::planMappedCompensation(root.database(), mapping, mapping::MappedScope::all())
                 .copies) {
            if (copy.sideEffect == QLatin1String("gift_card")) {
                giftCardOrder = copy.orderId;
                break;
            }
        }
        const test::CliRun oneOrder = test::runCli(
            base + act + QStringList{QStringLiteral("--order"), QString::number(giftCardOrder)});
        const QRegularExpressionMatch second =
            QRegularExpression(QStringLiteral("request (\\d+) waits")).match(oneOrder.err);
        QVERIFY2(second.hasMatch(), qPrintable(oneOrder.err));
        const QStringList approveSecond{QStringLiteral("--approve"), second.captured(1),
                                        QStringLiteral("--mapping"), shop.mappingPath()};
        const test::CliRun byBob =
            test::runCli(base + act + QStringList{QStringLiteral("--approve"), second.captured(1)});
        QCOMPARE(byBob.exitCode, 1);
        QVERIFY2(byBob.err.contains(QStringLiteral("another operator")), qPrintable(byBob.err));
        const test::CliRun byAlice = test::runCli(approveAsAlice.mid(0, 3) + approveSecond + act);
        QVERIFY2(byAlice.exitCode == 0, qPrintable(byAlice.err));
        QVERIFY2(
            byAlice.out.contains(QStringLiteral("approved request %1").arg(second.captured(1))),
            qPrintable(byAlice.out));
        QVERIFY2(byAlice.out.contains(QStringLiteral("gift_card: 1 frozen")),
                 qPrintable(byAlice.out));
        QCOMPARE(count(root.database(),
                       QStringLiteral("SELECT COUNT(*) FROM mapped_compensation WHERE request_id "
                                      "= %1 AND order_id = %2")
                           .arg(second.captured(1))
                           .arg(giftCardOrder)),
                 1);
        setThreshold(root.database(), 0);

        // Alice, in process, a transaction per copy, starts as Bob's command does.
        QProcess command;
        command.start(test::cliPath(), base + act);
        QVERIFY(command.waitForStarted());
        int aliceDid = 0;
        QString failure;
        std::thread inProcess([&] {
            try {
                db::Connection connection(alice.dsnFor(shop.dsn().database), alice.user());
                const mapping::MappedCompensationPlan plan = mapping::planMappedCompensation(
                    connection.database(), mapping, mapping::MappedScope::all());
                aliceDid = int(mapping::executeMappedCompensation(connection.database(), mapping,
                                                                  plan, reason(), ticket(), 1)
                                   .done.size());
            } catch (const db::Error &error) {
                failure = error.message();
            }
        });
        QVERIFY(command.waitForFinished(60000));
        inProcess.join();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        const QString out = QString::fromUtf8(command.readAllStandardOutput());
        QVERIFY2(command.exitCode() == 0, command.readAllStandardError().constData());
        // What the command did, from its lines after the plan's ("gift_card: 2 frozen (...").
        int bobDid = 0;
        QRegularExpressionMatchIterator did =
            QRegularExpression(QStringLiteral("^\\w+: (\\d+) (frozen|reversed) "),
                               QRegularExpression::MultilineOption)
                .globalMatch(out);
        while (did.hasNext())
            bobDid += did.next().captured(1).toInt();
        QVERIFY2(out.contains(QStringLiteral("left to finance: coupon row")), qPrintable(out));

        const int expected = test::TeamShop::kCouponGroups - 1 + test::TeamShop::kGiftCardGroups +
                             test::TeamShop::kPointGroups;
        QCOMPARE(aliceDid + bobDid, expected - 1); // the gift card approved above
        QCOMPARE(count(root.database(), QStringLiteral("SELECT COUNT(*) FROM mapped_compensation")),
                 qint64(expected));
        QCOMPARE(count(root.database(),
                       QStringLiteral(
                           "SELECT COUNT(*) FROM %1.t_point_flow WHERE remark = 'payops reversal'")
                           .arg(db::quoteIdentifier(shop.business()))),
                 qint64(test::TeamShop::kPointGroups));
        QCOMPARE(extraLiveCopies(root.database(), shop).size(), 1);
    }
};

PAYOPS_TEST_MAIN_CORE(TestMappedCompensation)
#include "tst_mappedcompensation.moc"
