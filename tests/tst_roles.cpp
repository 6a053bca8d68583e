#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "scratchdatabase.h"
#include "testmain.h"

using namespace payops;

class TestRoles final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void financeCannotChangeBusinessTables_data()
    {
        QTest::addColumn<QString>("statement");
        QTest::newRow("insert orders")
            << QStringLiteral("INSERT INTO orders (user_id, amount_fen) VALUES (1, 100)");
        QTest::newRow("update orders")
            << QStringLiteral("UPDATE orders SET status = 'PAID' WHERE id = 1001");
        QTest::newRow("delete orders") << QStringLiteral("DELETE FROM orders WHERE id = 1001");
        QTest::newRow("insert coupon") << QStringLiteral(
            "INSERT INTO user_coupon (order_id, coupon_template_id) VALUES (1001, 1)");
        QTest::newRow("update coupon")
            << QStringLiteral("UPDATE user_coupon SET status = 'FROZEN'");
        QTest::newRow("delete coupon") << QStringLiteral("DELETE FROM user_coupon");
        QTest::newRow("insert points") << QStringLiteral(
            "INSERT INTO point_log (order_id, point_type, points) VALUES (1001, 'X', 1)");
        QTest::newRow("update points") << QStringLiteral("UPDATE point_log SET points = 0");
        QTest::newRow("delete points") << QStringLiteral("DELETE FROM point_log");
        QTest::newRow("insert callback") << QStringLiteral(
            "INSERT INTO pay_callback_log (pay_no, order_id, raw_body) VALUES ('x', 1, '{}')");
        QTest::newRow("delete callback") << QStringLiteral("DELETE FROM pay_callback_log");
        QTest::newRow("flip switch")
            << QStringLiteral("UPDATE callback_switch SET mode = 'RECORD_ONLY'");
        QTest::newRow("compensate")
            << QStringLiteral("INSERT INTO compensation (target_table, target_id, action) VALUES "
                              "('user_coupon', 1, 'FREEZE')");
        QTest::newRow("update users") << QStringLiteral("UPDATE users SET points_balance = 0");
        QTest::newRow("audit insert")
            << QStringLiteral("INSERT INTO ops_audit_log (action) VALUES ('x')");
        QTest::newRow("truncate") << QStringLiteral("TRUNCATE TABLE point_log");
    }

    void financeCannotChangeBusinessTables()
    {
        QFETCH(QString, statement);
        test::ScratchDatabase scratch;
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
            db::Migrator(admin, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
            const QSqlDatabase db = admin.database();
            db::exec(db,
                     QStringLiteral(
                         "INSERT INTO orders (id, user_id, amount_fen) VALUES (1001, 1, 9900)"));
            db::exec(
                db, QStringLiteral(
                        "INSERT INTO user_coupon (order_id, coupon_template_id) VALUES (1001, 1)"));
            db::exec(db, QStringLiteral("INSERT INTO point_log (order_id, point_type, points) "
                                        "VALUES (1001, 'PAY_REWARD', 100)"));
            db::exec(db, QStringLiteral("INSERT INTO users (id, points_balance) VALUES (1, 100)"));
        }
        const auto fingerprint = [&scratch] {
            db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
            return db::scalar(
                       admin.database(),
                       QStringLiteral(
                           "SELECT CONCAT_WS('|', (SELECT COUNT(*) FROM orders), (SELECT "
                           "GROUP_CONCAT(status) FROM orders),"
                           " (SELECT COUNT(*) FROM user_coupon), (SELECT GROUP_CONCAT(status) FROM "
                           "user_coupon),"
                           " (SELECT COUNT(*) FROM point_log), (SELECT SUM(points) FROM point_log),"
                           " (SELECT COUNT(*) FROM pay_callback_log), (SELECT mode FROM "
                           "callback_switch),"
                           " (SELECT COUNT(*) FROM compensation), (SELECT SUM(points_balance) FROM "
                           "users),"
                           " (SELECT COUNT(*) FROM ops_audit_log))"))
                .toString();
        };
        const QString before = fingerprint();

        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::Connection connection(finance.dsnFor(scratch.name()), QStringLiteral("finance"));
        // Finance reads everything ...
        QCOMPARE(db::scalar(connection.database(), QStringLiteral("SELECT COUNT(*) FROM orders"))
                     .toInt(),
                 1);
        // ... and changes nothing.
        try {
            db::execDirect(connection.database(), statement);
            QFAIL("the finance role was allowed to change a business table");
        } catch (const db::Error &error) {
            QVERIFY2(error.isAccessDenied(), error.what());
        }
        QCOMPARE(fingerprint(), before);
    }

    void financeMayRecordReconciliation()
    {
        test::ScratchDatabase scratch;
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
            db::Migrator(admin, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
        }
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::Connection connection(finance.dsnFor(scratch.name()), QStringLiteral("finance"));
        db::exec(connection.database(),
                 QStringLiteral("INSERT INTO platform_statement (file_sha256, format) VALUES "
                                "(SHA2('statement', 256), 'generic')"));
        QCOMPARE(db::scalar(connection.database(),
                            QStringLiteral("SELECT COUNT(*) FROM platform_statement"))
                     .toInt(),
                 1);
    }
};

PAYOPS_TEST_MAIN_CORE(TestRoles)
#include "tst_roles.moc"
