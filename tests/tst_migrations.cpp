#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/callbacklog.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/sandbox.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QSqlQuery>
#include <QSqlRecord>

using namespace payops;

namespace {

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

QStringList tables(const QSqlDatabase &db)
{
    QStringList names = db.tables();
    names.sort();
    return names;
}

// Two coupons and two points rows for one order: the incident's shape.
void insertDuplicateSideEffects(const QSqlDatabase &db, qint64 orderId)
{
    for (int i = 0; i < 2; ++i) {
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO user_coupon (id, user_id, order_id, coupon_template_id, created_at) "
                "VALUES (NULL, 7, ?, 1, NOW(3))"),
            {orderId});
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO point_log (id, user_id, order_id, point_type, points, created_at) "
                "VALUES (NULL, 7, ?, 'PAY_REWARD', 100, NOW(3))"),
            {orderId});
    }
}

} // namespace

class TestMigrations final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void freshApplyCreatesEveryTable()
    {
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::Migrator migrator(connection, checkMigrationRequirement);
        const auto outcome = migrator.migrate(db::SchemaLevel::Current, false);
        QVERIFY(outcome.applied.size() >= 4);
        const QSqlDatabase db = connection.database();
        for (const char *table :
             {"orders", "pay_callback_log", "user_coupon", "point_log", "order_transition",
              "order_state_log", "callback_trace", "callback_switch", "callback_instance",
              "compensation", "ops_audit_log", "platform_statement", "reconciliation_result",
              "schema_migrations"})
            QVERIFY2(tables(db).contains(QLatin1String(table)), table);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM schema_migrations")),
                 qint64(outcome.applied.size()));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM order_transition")), qint64(4));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT mode FROM callback_switch WHERE id = 1"))
                     .toString(),
                 QStringLiteral("NORMAL"));
        QCOMPARE(migrator.currentLevel(), std::optional(db::SchemaLevel::Current));
        QVERIFY(!db::isSandboxDatabase(db));
    }

    void reapplyIsNoOp()
    {
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement).migrate(std::nullopt, false);
        const QSqlDatabase db = connection.database();
        const QString before =
            db::scalar(db, QStringLiteral("SELECT GROUP_CONCAT(CONCAT(version, checksum, "
                                          "applied_at) ORDER BY version) FROM schema_migrations"))
                .toString();
        const auto second =
            db::Migrator(connection, checkMigrationRequirement).migrate(std::nullopt, false);
        QVERIFY(second.applied.isEmpty());
        const QString after =
            db::scalar(db, QStringLiteral("SELECT GROUP_CONCAT(CONCAT(version, checksum, "
                                          "applied_at) ORDER BY version) FROM schema_migrations"))
                .toString();
        QCOMPARE(after, before);
    }

    void changedMigrationIsRefusedByName()
    {
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, false);
        QList<db::Migration> edited = db::bundledMigrations(connection.isMariaDb());
        QVERIFY(!edited.isEmpty());
        edited.first().script += "\n-- edited after the fact\n";
        edited.first().checksum = QStringLiteral("0").repeated(64);
        try {
            db::Migrator(connection, edited, checkMigrationRequirement)
                .migrate(std::nullopt, false);
            QFAIL("a changed migration was accepted");
        } catch (const db::Error &error) {
            QVERIFY2(error.message().contains(edited.first().fileName), error.what());
            QVERIFY2(error.message().contains(QStringLiteral("changed")), error.what());
        }
    }

    // A migration numbered below 0100 that a database at level current does not have yet is
    // still applied to it: the migrator goes by what is missing, not by the highest number.
    void aLaterLegacyMigrationReachesACurrentDatabase_data() { test::addSchemaLevelRows(); }
    void aLaterLegacyMigrationReachesACurrentDatabase()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        QList<db::Migration> before = db::bundledMigrations(connection.isMariaDb());
        // 0014, 0021, which redefines 0014's trigger and allowance, and 0025, which redefines
        // their routines: missing all three.
        const QList<int> later{14, 21, 25};
        QStringList missing;
        for (const db::Migration &migration : before) {
            if (later.contains(migration.version))
                missing << migration.fileName;
        }
        QCOMPARE(missing.size(), later.size());
        before.removeIf(
            [&later](const db::Migration &migration) { return later.contains(migration.version); });
        db::Migrator(connection, before, checkMigrationRequirement)
            .migrate(db::parseSchemaLevel(level), false);
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = "
                          "DATABASE() AND TRIGGER_NAME = 'compensation_four_eyes'")),
            qint64(0));

        const auto outcome =
            db::Migrator(connection, checkMigrationRequirement).migrate(std::nullopt, false);
        QCOMPARE(outcome.applied, missing);
        QCOMPARE(outcome.level, db::parseSchemaLevel(level).value());
        QCOMPARE(
            count(db, QStringLiteral(
                          "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = "
                          "DATABASE() AND TRIGGER_NAME = 'compensation_four_eyes'")),
            qint64(1));
    }

    // 0026 reaches a database at each level that has every migration before it: the order
    // number of a row from before is its order_id, and the endpoint's account records a
    // gateway's row under an order number that is no payops order id.
    void orderNumbersReachEveryEarlierLevel_data() { test::addSchemaLevelRows(); }
    void orderNumbersReachEveryEarlierLevel()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        QList<db::Migration> before = db::bundledMigrations(connection.isMariaDb());
        const auto isOrderNumbers = [](const db::Migration &migration) {
            return migration.version == 26;
        };
        QCOMPARE(std::count_if(before.cbegin(), before.cend(), isOrderNumbers), 1);
        before.removeIf(isOrderNumbers);
        db::Migrator(connection, before, checkMigrationRequirement)
            .migrate(db::parseSchemaLevel(level), false);
        const QSqlDatabase db = connection.database();
        db::exec(db, QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body) "
                                    "VALUES ('P-BEFORE', 1001, '{}')"));

        const auto outcome =
            db::Migrator(connection, checkMigrationRequirement).migrate(std::nullopt, false);
        QCOMPARE(outcome.applied, QStringList{QStringLiteral("0026_order_numbers.sql")});
        QCOMPARE(outcome.level, db::parseSchemaLevel(level).value());
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT %1 FROM pay_callback_log WHERE pay_no = "
                                               "'P-BEFORE'")
                                    .arg(orderNoColumn()))
                     .toByteArray(),
                 QByteArray("1001"));

        const test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        db::Connection asEndpoint(endpoint.dsnFor(scratch.name()), QStringLiteral("e"));
        db::exec(asEndpoint.database(),
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, out_trade_no, "
                                "raw_body, gateway) VALUES ('P-AFTER', 0, "
                                "'N202404181780861744366403007', '{}', 1)"));
        QCOMPARE(db::scalar(asEndpoint.database(),
                            QStringLiteral("SELECT %1 FROM pay_callback_log WHERE pay_no = "
                                           "'P-AFTER'")
                                .arg(orderNoColumn()))
                     .toByteArray(),
                 QByteArray("N202404181780861744366403007"));
    }

    void seedColumnsAreEnoughToInsert()
    {
        // Every column beyond the seed's own must have a default.
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement)
            .migrate(db::SchemaLevel::Current, false);
        const QSqlDatabase db = connection.database();
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO orders (id, user_id, amount_fen, status, created_at, paid_at) "
                     "VALUES (1001, 1, 9900, 'PENDING', NOW(3), NULL)"));
        db::exec(db,
                 QStringLiteral(
                     "INSERT INTO pay_callback_log (id, pay_no, order_id, raw_body, created_at) "
                     "VALUES (NULL, 'P1', 1001, '{}', NOW(3))"));
        db::exec(db, QStringLiteral("INSERT INTO user_coupon (id, user_id, order_id, "
                                    "coupon_template_id, status, created_at) "
                                    "VALUES (NULL, 1, 1001, 1, 'ISSUED', NOW(3))"));
        db::exec(
            db, QStringLiteral(
                    "INSERT INTO point_log (id, user_id, order_id, point_type, points, created_at) "
                    "VALUES (NULL, 1, 1001, 'PAY_REWARD', 100, NOW(3))"));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM point_log")), qint64(1));
    }

    void keysExistOnlyAtCurrent()
    {
        test::ScratchDatabase legacyDb(QStringLiteral("legacy"));
        db::Connection legacy(legacyDb.dsn(), QStringLiteral("t"));
        db::Migrator(legacy, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, false);
        insertDuplicateSideEffects(legacy.database(), 1001); // the legacy schema lets it happen
        QCOMPARE(countLiveDuplicates(legacy.database()).couponGroups, qint64(1));

        test::ScratchDatabase currentDb(QStringLiteral("current"));
        db::Connection current(currentDb.dsn(), QStringLiteral("t"));
        db::Migrator(current, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
        try {
            insertDuplicateSideEffects(current.database(), 1001);
            QFAIL("uk_order_tpl did not refuse a second coupon");
        } catch (const db::Error &error) {
            QVERIFY2(error.isDuplicateKey(), error.what());
            QVERIFY2(error.message().contains(QStringLiteral("uk_order_tpl")), error.what());
        }
        try {
            db::exec(current.database(),
                     QStringLiteral("INSERT INTO point_log (order_id, point_type, points) VALUES "
                                    "(5, 'PAY_REWARD', 1)"));
            db::exec(current.database(),
                     QStringLiteral("INSERT INTO point_log (order_id, point_type, points) VALUES "
                                    "(5, 'PAY_REWARD', 1)"));
            QFAIL("uk_order_type did not refuse a second points row");
        } catch (const db::Error &error) {
            QVERIFY2(error.message().contains(QStringLiteral("uk_order_type")), error.what());
        }
    }

    void legacyToCurrentRefusedWhileDuplicatesLive()
    {
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        db::Migrator(connection, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, false);
        insertDuplicateSideEffects(db, 4242);
        try {
            db::Migrator(connection, checkMigrationRequirement)
                .migrate(db::SchemaLevel::Current, false);
            QFAIL("moved to current with live duplicates");
        } catch (const db::Error &error) {
            const QString message = error.message();
            QVERIFY2(message.contains(QStringLiteral("1 duplicate coupon group")), error.what());
            QVERIFY2(message.contains(QStringLiteral("1 duplicate points group")), error.what());
            QVERIFY2(message.contains(QStringLiteral("4242")), error.what());
        }
        QCOMPARE(db::Migrator(connection).currentLevel(), std::optional(db::SchemaLevel::Legacy));
        QVERIFY(
            !db.record(QStringLiteral("user_coupon")).contains(QStringLiteral("live_order_id")));

        // Once each duplicate is superseded (what compensation does), the keys go on.
        db::exec(db, QStringLiteral(
                         "UPDATE user_coupon SET superseded_by = (SELECT MIN(id) FROM (SELECT id "
                         "FROM user_coupon) k) "
                         "WHERE id <> (SELECT MIN(id) FROM (SELECT id FROM user_coupon) k2)"));
        db::exec(db,
                 QStringLiteral("UPDATE point_log SET superseded_by = (SELECT MIN(id) FROM (SELECT "
                                "id FROM point_log) k) "
                                "WHERE id <> (SELECT MIN(id) FROM (SELECT id FROM point_log) k2)"));
        const auto outcome = db::Migrator(connection, checkMigrationRequirement)
                                 .migrate(db::SchemaLevel::Current, false);
        QCOMPARE(outcome.applied, QStringList{QStringLiteral("0100_side_effect_keys.sql")});
        QCOMPARE(db::Migrator(connection).currentLevel(), std::optional(db::SchemaLevel::Current));
    }

    void currentCannotGoBackToLegacy()
    {
        test::ScratchDatabase scratch;
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::Migrator(connection, checkMigrationRequirement)
            .migrate(db::SchemaLevel::Current, false);
        QVERIFY_THROWS_EXCEPTION(db::Error, db::Migrator(connection, checkMigrationRequirement)
                                                .migrate(db::SchemaLevel::Legacy, false));
    }

    void sandboxMarkAndDemoSeed()
    {
        test::ScratchDatabase scratch;
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("t"));
            const auto outcome = db::Migrator(connection, checkMigrationRequirement)
                                     .migrate(db::SchemaLevel::Legacy, true);
            QVERIFY(outcome.sandboxMarked);
            QVERIFY(db::isSandboxDatabase(connection.database()));
        }
        seedDemoData(scratch.dsn());
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders")), qint64(3000));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(DISTINCT status) FROM orders")), qint64(5));
        const LiveDuplicateCount duplicates = countLiveDuplicates(db);
        QVERIFY2(duplicates.couponGroups >= 24 && duplicates.couponGroups <= 200,
                 qPrintable(duplicates.describe()));
        QVERIFY2(duplicates.pointGroups >= 12 && duplicates.pointGroups <= 100,
                 qPrintable(duplicates.describe()));
        // The evidence of each incident order shows a lock released before its commit.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(DISTINCT order_id) FROM callback_trace "
                                          "WHERE lock_released_at < committed_at")),
                 duplicates.pointGroups);
        // Points balances match the points log.
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 count(db, QStringLiteral("SELECT SUM(points) FROM point_log")));
        QVERIFY(!db.tables().contains(QStringLiteral("demo_seq")));
    }
};

PAYOPS_TEST_MAIN_CORE(TestMigrations)
#include "tst_migrations.moc"
