// payops-callbackd connected as an account that holds payops_endpoint and nothing else, at
// both schema levels: it serves every kind of callback, and the account cannot do an
// operator's work.
#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace payops;

namespace {

QString outcomeOf(const test::HttpResult &result)
{
    return QJsonDocument::fromJson(result.body)
        .object()
        .value(QStringLiteral("outcome"))
        .toString();
}

} // namespace

class TestEndpointRole final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void servesCallbacks_data() { test::addSchemaLevelRows(); }
    void servesCallbacks()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("endpoint"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 5);
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        test::CallbackdProcess service(endpoint.dsnFor(scratch.name()));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();

        // Paid, with its side effects.
        const QByteArray body = test::callbackBody("EP-1", 1001, 9900);
        const test::HttpResult paid = test::postCallback(service.port(), body);
        QCOMPARE(paid.status, 200);
        QCOMPARE(outcomeOf(paid), QStringLiteral("processed"));
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1001")).toString(),
            QStringLiteral("PAID"));
        const test::SideEffects effects = test::sideEffectsOf(db, 1001);
        QCOMPARE(effects.coupons, 2);
        QCOMPARE(effects.points, 1);
        QCOMPARE(
            db::scalar(
                db, QStringLiteral(
                        "SELECT points_balance FROM users WHERE id = (SELECT user_id FROM orders "
                        "WHERE id = 1001)"))
                .toLongLong(),
            qint64(100));

        // A replay gets the first answer, a conflict 409, a second payment of the order is
        // refused by the CAS; none changes a business row.
        const QString before = test::businessFingerprint(scratch.dsn());
        const test::HttpResult replay = test::postCallback(service.port(), body);
        QCOMPARE(replay.status, 200);
        QCOMPARE(replay.body, paid.body);
        QCOMPARE(test::postCallback(service.port(), test::callbackBody("EP-1", 1001, 100)).status,
                 409);
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
        const test::HttpResult second =
            test::postCallback(service.port(), test::callbackBody("EP-2", 1001, 9900));
        QCOMPARE(second.status, 200);
        QCOMPARE(outcomeOf(second), QStringLiteral("rejected"));
        QCOMPARE(test::sideEffectsOf(db, 1001).coupons, 2);

        // A payment for an order not there yet waits for the drain.
        QCOMPARE(test::postCallback(service.port(), test::callbackBody("EP-3", 9999, 9900)).status,
                 200);
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT status FROM pay_callback_log WHERE pay_no = 'EP-3'"))
                     .toString(),
                 QStringLiteral("UNMATCHED"));

        // The heartbeat keeps the instance's row.
        QTRY_VERIFY_WITH_TIMEOUT(
            db::scalar(db,
                       QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE id = ? "
                                      "AND stopped_at IS NULL"),
                       {service.instance()})
                    .toInt() == 1,
            10000);

        // Record-only: root flips the switch, the endpoint sees it and only records.
        const test::CliRun on =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"),
                          scratch.dsn().toString(), QStringLiteral("--reason"),
                          QStringLiteral("storm"), QStringLiteral("--wait"), QStringLiteral("10")});
        QVERIFY2(on.exitCode == 0, qPrintable(on.err + on.out));
        const test::HttpResult recorded =
            test::postCallback(service.port(), test::callbackBody("EP-4", 1002, 9900));
        QCOMPARE(recorded.status, 200);
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT status FROM pay_callback_log WHERE pay_no = 'EP-4'"))
                     .toString(),
                 QStringLiteral("RECORDED"));
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1002")).toString(),
            QStringLiteral("PENDING"));
        QCOMPARE(service.terminate(), 0);
        QCOMPARE(db::scalar(db,
                            QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE id = ? "
                                           "AND stopped_at IS NOT NULL"),
                            {service.instance()})
                     .toInt(),
                 1);
    }

    void cannotDoAnOperatorsWork_data()
    {
        QTest::addColumn<QString>("level");
        QTest::addColumn<QString>("statement");
        for (const QString &level : {QStringLiteral("legacy"), QStringLiteral("current")}) {
            const auto row = [&level](const char *name, const QString &statement) {
                QTest::addRow("%s %s", qPrintable(level), name) << level << statement;
            };
            row("flip the switch",
                QStringLiteral(
                    "UPDATE callback_switch SET mode = 'RECORD_ONLY', version = version + 1"));
            row("compensate",
                QStringLiteral("INSERT INTO compensation (target_table, target_id, action) "
                               "VALUES ('user_coupon', 1, 'FREEZE_COUPON')"));
            row("freeze a coupon", QStringLiteral("UPDATE user_coupon SET status = 'FROZEN'"));
            row("write the audit log",
                QStringLiteral("INSERT INTO ops_audit_log (action) VALUES ('switch.flip')"));
            row("read the audit log", QStringLiteral("SELECT COUNT(*) FROM ops_audit_log"));
            row("change an amount",
                QStringLiteral("UPDATE orders SET amount_fen = 1 WHERE id = 1001"));
            row("delete a callback", QStringLiteral("DELETE FROM pay_callback_log"));
            row("approve a request",
                QStringLiteral("UPDATE compensation_request SET status = 'APPROVED'"));
            row("import a statement",
                QStringLiteral("INSERT INTO platform_statement (file_sha256, format) "
                               "VALUES (SHA2('s', 256), 'generic')"));
        }
    }

    void cannotDoAnOperatorsWork()
    {
        QFETCH(QString, level);
        QFETCH(QString, statement);
        test::ScratchDatabase scratch(QStringLiteral("endpointno"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        const QString before = test::businessFingerprint(scratch.dsn());
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        db::Connection connection(endpoint.dsnFor(scratch.name()), QStringLiteral("endpoint"));
        try {
            db::execDirect(connection.database(), statement);
            QFAIL("the endpoint's role was allowed to do it");
        } catch (const db::Error &error) {
            QVERIFY2(error.isAccessDenied(), error.what());
        }
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
    }
};

PAYOPS_TEST_MAIN_CORE(TestEndpointRole)
#include "tst_endpointrole.moc"
