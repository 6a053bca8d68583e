#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/backlogdrainer.h"
#include "domain/callback/missingpayment.h"
#include "domain/money/auditlog.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "scratchdatabase.h"
#include "testmain.h"

using namespace payops;

namespace {

// A migrated database with order 1001 waiting for its payment and statement 1, whose line 7
// is the platform's payment of it (pay_no WX-LOST) that never reached us, line 8 a refund and
// line 9 a payment of a merchant order number that is not one of our ids.
void seed(const test::ScratchDatabase &scratch)
{
    db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
    db::Migrator(admin, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
    const QSqlDatabase db = admin.database();
    db::exec(db, QStringLiteral("INSERT INTO users (id, points_balance) VALUES (1, 0)"));
    db::exec(
        db,
        QStringLiteral(
            "INSERT INTO orders (id, user_id, amount_fen) VALUES (1001, 1, 9900), (1002, 1, 500)"));
    db::exec(db,
             QStringLiteral(
                 "INSERT INTO platform_statement (id, file_sha256, format, channel, line_count) "
                 "VALUES (1, REPEAT('a', 64), 'wechat', 'wechat', 3)"));
    db::exec(db,
             QStringLiteral("INSERT INTO platform_statement_line (statement_id, line_no, pay_no, "
                            "order_id, amount_fen, status, paid_at) VALUES "
                            "(1, 7, 'WX-LOST', 1001, 9900, 'SUCCESS', '2026-12-01 01:02:03.450'),"
                            "(1, 8, 'WX-REFUND', 1001, -9900, 'REFUND', '2026-12-01 02:00:00'),"
                            "(1, 9, 'WX-OTHER', 0, 500, 'SUCCESS', '2026-12-01 03:00:00')"));
}

qint64 count(const test::ScratchDatabase &scratch, const QString &sql)
{
    db::Connection admin(scratch.dsn(), QStringLiteral("count"));
    return db::scalar(admin.database(), sql).toLongLong();
}

} // namespace

class TestMissingPayment final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void draftedByFinanceConfirmedByAnOperatorAppliedByTheDrain()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection financeDb(finance.dsnFor(scratch.name()), QStringLiteral("finance"));
        db::Connection operatorDb(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));

        const qint64 draft = draftMissingPayment(financeDb.database(), 1, 7, 0,
                                                 QStringLiteral("漏单 on the 1 Dec bill"));
        QVERIFY(draft > 0);
        // Finance cannot confirm its own draft, nor write the amount it drafts.
        QVERIFY(!test::refusal([&] {
                     confirmMissingPayment(financeDb.database(), draft, QString());
                 }).isEmpty());
        QVERIFY(!test::refusal([&] {
                     db::exec(financeDb.database(),
                              QStringLiteral("INSERT INTO missing_payment_draft (statement_id, "
                                             "line_no, amount_fen) VALUES (1, 9, 1)"));
                 }).isEmpty());

        QList<MissingPaymentDraft> drafts = loadMissingPaymentDrafts(operatorDb.database(), 1);
        QCOMPARE(drafts.size(), 1);
        QCOMPARE(drafts[0].status, QStringLiteral("DRAFT"));
        QCOMPARE(drafts[0].payNo, QByteArray("WX-LOST"));
        QCOMPARE(drafts[0].amountFen, 9900);
        QCOMPARE(drafts[0].orderId, 1001);
        QCOMPARE(drafts[0].channel, QStringLiteral("wechat"));
        QVERIFY(drafts[0].draftedBy.startsWith(finance.user()));

        confirmMissingPayment(operatorDb.database(), draft,
                              QStringLiteral("checked against the bill"));
        drafts = loadMissingPaymentDrafts(operatorDb.database(), 1);
        QCOMPARE(drafts[0].status, QStringLiteral("CONFIRMED"));
        QVERIFY(drafts[0].decidedBy.startsWith(operatorAccount.user()));
        QVERIFY(drafts[0].callbackId > 0);
        QCOMPARE(
            count(scratch, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = 'WX-LOST' "
                               "AND status = 'RECORDED' AND amount_fen = 9900 AND order_id = 1001 "
                               "AND platform_paid_at = '2026-12-01 01:02:03.450'")),
            1);
        // Decided once: neither confirmed again nor discarded afterwards.
        QVERIFY(!test::refusal([&] {
                     confirmMissingPayment(operatorDb.database(), draft, QString());
                 }).isEmpty());
        QVERIFY(!test::refusal([&] {
                     discardMissingPayment(operatorDb.database(), draft, QString());
                 }).isEmpty());

        // The drain applies the recorded callback through the payment pipeline, once.
        DrainOptions options;
        options.worker = QStringLiteral("test-drain");
        const DrainResult drained = drainBacklog(operatorDb.dsn(), options);
        QCOMPARE(drained.processed, 1);
        QCOMPARE(
            count(scratch,
                  QStringLiteral("SELECT COUNT(*) FROM orders WHERE id = 1001 AND status = 'PAID' "
                                 "AND pay_no = 'WX-LOST'")),
            1);
        QCOMPARE(drainBacklog(operatorDb.dsn(), options).processed, 0);

        // Drafted and confirmed, each audited by the database under the account that did it.
        QCOMPARE(
            count(scratch, QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = "
                                          "'reconcile.draft_missing_payment' AND actor LIKE '%1@%'")
                               .arg(finance.user())),
            1);
        QCOMPARE(count(scratch,
                       QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = "
                                      "'reconcile.confirm_missing_payment' AND actor LIKE '%1@%'")
                           .arg(operatorAccount.user())),
                 1);
        db::Connection admin(scratch.dsn(), QStringLiteral("verify"));
        QVERIFY(verifyAuditChain(admin.database()).intact);
    }

    void theDrafterCannotConfirm()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection operatorDb(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        const qint64 draft = draftMissingPayment(operatorDb.database(), 1, 7, 0, QString());
        QVERIFY(test::refusal([&] {
                    confirmMissingPayment(operatorDb.database(), draft, QString());
                }).contains(QStringLiteral("another account")));
        QCOMPARE(count(scratch, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")), 0);
        // Discarding needs no second account, and the pay_no may then be drafted again.
        discardMissingPayment(operatorDb.database(), draft, QStringLiteral("drafted by mistake"));
        QVERIFY(draftMissingPayment(operatorDb.database(), 1, 7, 0, QString()) > draft);
    }

    void onlyWhatTheStatementListsAndWeLack()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
        const QSqlDatabase db = admin.database();
        QVERIFY(test::refusal([&] {
                    draftMissingPayment(db, 1, 99, 0, QString());
                }).contains(QStringLiteral("no such statement line")));
        QVERIFY(test::refusal([&] {
                    draftMissingPayment(db, 1, 8, 0, QString());
                }).contains(QStringLiteral("SUCCESS")));
        QVERIFY(test::refusal([&] {
                    draftMissingPayment(db, 1, 9, 0, QString());
                }).contains(QStringLiteral("which order")));
        // A line whose merchant order number is not ours pays the order the drafter names.
        const qint64 other = draftMissingPayment(db, 1, 9, 1002, QString());
        QCOMPARE(count(scratch,
                       QStringLiteral("SELECT order_id FROM missing_payment_draft WHERE id = %1")
                           .arg(other)),
                 1002);
        // One live draft per pay_no.
        draftMissingPayment(db, 1, 7, 0, QString());
        QVERIFY(!test::refusal([&] { draftMissingPayment(db, 1, 7, 0, QString()); }).isEmpty());
        // A pay_no that reached us meanwhile is not recorded twice.
        db::exec(db,
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, status) "
                                "VALUES ('WX-OTHER', 1002, '{}', 'RECORDED')"));
        QVERIFY(test::refusal([&] {
                    draftMissingPayment(db, 1, 9, 1002, QString());
                }).contains(QStringLiteral("already recorded")));
        QCOMPARE(
            count(scratch, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = 'WX-OTHER'")),
            1);
    }
};

PAYOPS_TEST_MAIN_CORE(TestMissingPayment)
#include "tst_missingpayment.moc"
