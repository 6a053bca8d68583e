#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/sideeffectkeys.h"
#include "domain/inspection/posture.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensation.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <thread>

using namespace payops;

namespace {

const QStringList &defenceNames()
{
    static const QStringList names{
        QStringLiteral("uk_pay_no"),          QStringLiteral("cas_affected_rows"),
        QStringLiteral("uk_order_tpl"),       QStringLiteral("uk_order_type"),
        QStringLiteral("lock_across_commit"), QStringLiteral("record_only_switch"),
        QStringLiteral("audit_chain"),        QStringLiteral("scheduled_inspection")};
    return names;
}

Defence find(const QList<Defence> &defences, const QString &name)
{
    for (const Defence &defence : defences)
        if (defence.name == name)
            return defence;
    qFatal("no defence named %s", qPrintable(name));
}

QList<Defence> postureOf(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    return inspectPosture(connection.database());
}

// The seed's delivery: the platform's second success callback reaches the other instance 40 ms
// after the first.
void deliverTwice(int firstPort, int secondPort, const QByteArray &body)
{
    std::thread first([&] { test::postCallback(firstPort, body); });
    QTest::qWait(40);
    test::postCallback(secondPort, body);
    first.join();
}

// Every one of `phrases` is in the defence's evidence; QVERIFY2 prints the evidence otherwise.
bool says(const Defence &defence, const QStringList &phrases)
{
    return std::all_of(phrases.cbegin(), phrases.cend(), [&defence](const QString &phrase) {
        return defence.evidence.contains(phrase);
    });
}

QString schemaLevel(const QSqlDatabase &db)
{
    return db::scalar(db,
                      QStringLiteral("SELECT value FROM payops_meta WHERE name = 'schema_level'"))
        .toString();
}

} // namespace

class TestPosture final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aLegacySandboxMissesTheSideEffectKeys()
    {
        test::ScratchDatabase scratch(QStringLiteral("posture"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        const QList<Defence> defences = postureOf(scratch.dsn());

        QStringList names;
        for (const Defence &defence : defences) {
            names << defence.name;
            QVERIFY2(!defence.title.isEmpty() && !defence.letsThrough.isEmpty() &&
                         !defence.evidence.isEmpty(),
                     qPrintable(defence.name));
        }
        QCOMPARE(names, defenceNames());
        QCOMPARE(find(defences, QStringLiteral("uk_pay_no")).state, DefenceState::Present);
        const Defence coupons = find(defences, QStringLiteral("uk_order_tpl"));
        QCOMPARE(coupons.state, DefenceState::Missing);
        QVERIFY2(
            says(coupons,
                 {QStringLiteral("user_coupon has no unique key on (order_id, coupon_template_id)"),
                  QStringLiteral("level legacy")}),
            qPrintable(coupons.evidence));
        QCOMPARE(find(defences, QStringLiteral("uk_order_type")).state, DefenceState::Missing);
        // Nothing has happened yet: no traffic to judge the lock or the CAS by.
        QCOMPARE(find(defences, QStringLiteral("lock_across_commit")).state, DefenceState::Unknown);
        QCOMPARE(find(defences, QStringLiteral("cas_affected_rows")).state, DefenceState::Unknown);
        QCOMPARE(find(defences, QStringLiteral("record_only_switch")).state, DefenceState::Present);
        QCOMPARE(find(defences, QStringLiteral("audit_chain")).state, DefenceState::Present);
        // No inspection was ever stored.
        const Defence inspection = find(defences, QStringLiteral("scheduled_inspection"));
        QCOMPARE(inspection.state, DefenceState::Missing);
        QVERIFY2(inspection.evidence.contains(QStringLiteral("no inspection was ever stored")),
                 qPrintable(inspection.evidence));
        QVERIFY(!allPresent(defences));
    }

    // A stored run within the last 24 hours is a schedule; an older newest run is one that stopped.
    void aScheduledInspectionIsAStoredRecentRun()
    {
        test::ScratchDatabase scratch(QStringLiteral("postureinspect"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        QCOMPARE(find(postureOf(scratch.dsn()), QStringLiteral("scheduled_inspection")).state,
                 DefenceState::Missing);

        QCOMPARE(test::runCli(
                     {QStringLiteral("inspect"), QStringLiteral("--db"), scratch.dsn().toString()})
                     .exitCode,
                 0);
        const Defence recent =
            find(postureOf(scratch.dsn()), QStringLiteral("scheduled_inspection"));
        QCOMPARE(recent.state, DefenceState::Present);
        QVERIFY2(recent.evidence.contains(QStringLiteral("(cli), within the last 24 hours")),
                 qPrintable(recent.evidence));

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        db::exec(
            connection.database(),
            QStringLiteral("UPDATE inspection_run SET started_at = started_at - INTERVAL 25 HOUR"));
        const Defence stale =
            find(postureOf(scratch.dsn()), QStringLiteral("scheduled_inspection"));
        QCOMPARE(stale.state, DefenceState::Missing);
        QVERIFY2(stale.evidence.contains(QStringLiteral("more than 24 hours ago")),
                 qPrintable(stale.evidence));
    }

    // The fix step: refused while live duplicates remain, and nothing changes; after
    // compensation it adds the keys, and the posture sees them.
    void theSideEffectKeysWaitForCompensation()
    {
        test::ScratchDatabase scratch(QStringLiteral("posturefix"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 3);
        const QString before = test::businessFingerprint(scratch.dsn());

        QStringList progress;
        const SideEffectKeysResult refused =
            applySideEffectKeys(connection, [&progress](const QString &line) { progress << line; });
        QVERIFY(refused.refused);
        QVERIFY(!refused.applied);
        QVERIFY2(refused.message.contains(QStringLiteral("6 duplicate coupon group(s)")) &&
                     refused.message.contains(QStringLiteral("3 duplicate points group(s)")) &&
                     refused.message.contains(QStringLiteral("Compensate them first")),
                 qPrintable(refused.message));
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
        QCOMPARE(schemaLevel(db), QStringLiteral("legacy"));
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT COUNT(*) FROM schema_migrations WHERE version = 100"))
                     .toInt(),
                 0);
        QCOMPARE(find(postureOf(scratch.dsn()), QStringLiteral("uk_order_tpl")).state,
                 DefenceState::Missing);

        const CompensationSettings settings;
        const CompensationPlan plan = planCompensation(db, CompensationScope::all(), settings);
        QCOMPARE(executeCompensation(db, plan, QStringLiteral("duplicate payout"),
                                     QStringLiteral("INC-13"), settings)
                     .done,
                 9);
        QVERIFY(countLiveDuplicates(db).isEmpty());

        progress.clear();
        const SideEffectKeysResult applied =
            applySideEffectKeys(connection, [&progress](const QString &line) { progress << line; });
        QVERIFY2(applied.applied && !applied.refused, qPrintable(applied.message));
        QCOMPARE(applied.migrations, QStringList{QStringLiteral("0100_side_effect_keys.sql")});
        QCOMPARE(progress, QStringList{QStringLiteral("applying 0100_side_effect_keys.sql")});
        QCOMPARE(schemaLevel(db), QStringLiteral("current"));
        const QList<Defence> defences = postureOf(scratch.dsn());
        const Defence coupons = find(defences, QStringLiteral("uk_order_tpl"));
        QCOMPARE(coupons.state, DefenceState::Present);
        QVERIFY2(coupons.evidence.contains(
                     QStringLiteral("uk_order_tpl (live_order_id, coupon_template_id)")),
                 qPrintable(coupons.evidence));
        QCOMPARE(find(defences, QStringLiteral("uk_order_type")).state, DefenceState::Present);
        // The key now refuses what the incident did.
        try {
            db::exec(db, QStringLiteral(
                             "INSERT INTO user_coupon (user_id, order_id, coupon_template_id) "
                             "SELECT user_id, order_id, coupon_template_id FROM user_coupon "
                             "WHERE superseded_by IS NULL LIMIT 1"));
            QFAIL("a second live coupon of one template went in");
        } catch (const db::Error &error) {
            QVERIFY(error.isDuplicateKey());
        }

        const SideEffectKeysResult again = applySideEffectKeys(connection);
        QVERIFY(!again.applied && !again.refused);
        QVERIFY2(again.message.contains(QStringLiteral("already")), qPrintable(again.message));
    }

    void theFixStepRefusesADatabasePayopsNeverMigrated()
    {
        test::ScratchDatabase scratch(QStringLiteral("posturebare"));
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        try {
            applySideEffectKeys(connection);
            QFAIL("the keys were applied to a bare database");
        } catch (const db::Error &error) {
            QVERIFY2(error.message().contains(QStringLiteral("run payops migrate first")),
                     error.what());
        }
        QVERIFY(connection.database().tables().isEmpty());
    }

    // Real payops-callbackd processes: the incident's handler releases before its commit, the
    // safe one after; an unsafe instance stopped and replaced no longer decides.
    void theLockFollowsTheRunningHandler()
    {
        test::ScratchDatabase scratch(QStringLiteral("posturelock"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 4);
        {
            const QStringList delay{QStringLiteral("--commit-delay-ms"), QStringLiteral("150")};
            test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("A"), delay);
            test::CallbackdProcess b(scratch.dsn(), QStringLiteral("unsafe-demo"),
                                     QStringLiteral("B"), delay);
            deliverTwice(a.port(), b.port(), test::callbackBody("WX-1001", 1001, 9900));
            deliverTwice(a.port(), b.port(), test::callbackBody("WX-1002", 1002, 9900));

            const QList<Defence> defences = postureOf(scratch.dsn());
            const Defence lock = find(defences, QStringLiteral("lock_across_commit"));
            QCOMPARE(lock.state, DefenceState::Missing);
            QVERIFY2(
                says(lock, {QStringLiteral(
                                "instance A, handler unsafe-demo: 2 of 2 callback(s) released the "
                                "lock before the commit"),
                            QStringLiteral("instance B, handler unsafe-demo")}),
                qPrintable(lock.evidence));
            const Defence cas = find(defences, QStringLiteral("cas_affected_rows"));
            QCOMPARE(cas.state, DefenceState::Missing);
            QVERIFY2(cas.evidence.contains(
                         QStringLiteral("2 payment attempt(s) updated 0 rows and went on anyway "
                                        "(affected_rows_ignored, instance B)")),
                     qPrintable(cas.evidence));
            QVERIFY(!allPresent(defences));
            QCOMPARE(a.terminate(), 0);
            QCOMPARE(b.terminate(), 0);
        }
        // The fix step's restart: the same names, the safe handler.
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("A"));
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("B"));
        deliverTwice(a.port(), b.port(), test::callbackBody("WX-1003", 1003, 9900));
        // A second payment of a paid order: the CAS rejects it and nothing is issued.
        QCOMPARE(
            test::postCallback(b.port(), test::callbackBody("WX-1003-again", 1003, 9900)).status,
            200);

        const QList<Defence> defences = postureOf(scratch.dsn());
        const Defence lock = find(defences, QStringLiteral("lock_across_commit"));
        QCOMPARE(lock.state, DefenceState::Present);
        QVERIFY2(
            says(lock, {QStringLiteral("released after the commit"),
                        QStringLiteral(
                            "instance A, handler unsafe-demo released before the commit in 2 of 2 "
                            "callback(s) but no longer runs")}),
            qPrintable(lock.evidence));
        // The unsafe run's ignored attempts are within the hour still, named but no longer
        // deciding: the running code rejected the second payment.
        const Defence cas = find(defences, QStringLiteral("cas_affected_rows"));
        QCOMPARE(cas.state, DefenceState::Present);
        QVERIFY2(
            says(cas,
                 {QStringLiteral("1 repeated payment attempt(s) were rejected by the CAS"),
                  QStringLiteral(
                      "2 attempt(s) went on with 0 rows updated on instance B, which no longer "
                      "runs that code")}),
            qPrintable(cas.evidence));
        QCOMPARE(find(defences, QStringLiteral("record_only_switch")).state, DefenceState::Present);
    }

    void anInstanceBehindTheSwitchIsMissing()
    {
        test::ScratchDatabase scratch(QStringLiteral("postureswitch"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO callback_instance (id, handler, last_seen_at, switch_version_applied) "
                "VALUES ('late-1', 'safe', UTC_TIMESTAMP(3), 0), ('stale-1', 'safe', "
                "UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE, 0)"));
        const Defence behind = find(postureOf(scratch.dsn()), QStringLiteral("record_only_switch"));
        QCOMPARE(behind.state, DefenceState::Missing);
        QVERIFY2(behind.evidence.contains(
                     QStringLiteral("1 of 1 live instance(s) have not applied it: late-1 (applies "
                                    "version 0)")),
                 qPrintable(behind.evidence));
        db::exec(
            db, QStringLiteral(
                    "UPDATE callback_instance SET switch_version_applied = 1 WHERE id = 'late-1'"));
        QCOMPARE(find(postureOf(scratch.dsn()), QStringLiteral("record_only_switch")).state,
                 DefenceState::Present);
    }

    void aBrokenAuditChainIsMissing()
    {
        test::ScratchDatabase scratch(QStringLiteral("postureaudit"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        for (int i = 1; i <= 3; ++i)
            appendAudit(db, QStringLiteral("backlog.drain"), QString::number(i),
                        QStringLiteral("entry %1").arg(i), QString(), QString(), QString());
        const Defence intact = find(postureOf(scratch.dsn()), QStringLiteral("audit_chain"));
        QCOMPARE(intact.state, DefenceState::Present);
        QVERIFY2(intact.evidence.contains(QStringLiteral("all 3 audit entries")),
                 qPrintable(intact.evidence));

        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_update"));
        db::execDirect(
            db,
            QStringLiteral("UPDATE ops_audit_log SET reason = 'nothing happened' WHERE id = 2"));
        const Defence edited = find(postureOf(scratch.dsn()), QStringLiteral("audit_chain"));
        QCOMPARE(edited.state, DefenceState::Missing);
        QVERIFY2(edited.evidence.contains(QStringLiteral("entry 2 does not match its hash")),
                 qPrintable(edited.evidence));
        db::execDirect(db,
                       QStringLiteral("UPDATE ops_audit_log SET reason = 'entry 2' WHERE id = 2"));
        QCOMPARE(find(postureOf(scratch.dsn()), QStringLiteral("audit_chain")).state,
                 DefenceState::Present);
        // The last entry removed: the head no longer agrees.
        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_delete"));
        db::execDirect(db, QStringLiteral("DELETE FROM ops_audit_log WHERE id = 3"));
        const Defence truncated = find(postureOf(scratch.dsn()), QStringLiteral("audit_chain"));
        QCOMPARE(truncated.state, DefenceState::Missing);
        QVERIFY2(truncated.evidence.contains(
                     QStringLiteral("the chain head names entry 3 but the log ends at entry 2")),
                 qPrintable(truncated.evidence));
    }

    void theCommandLineAnswersInJsonWithExitCodes()
    {
        test::ScratchDatabase legacy(QStringLiteral("posturecli"));
        test::prepareCallbackDatabase(legacy.dsn(), QStringLiteral("legacy"), 0);
        const test::CliRun json = test::runCli({QStringLiteral("posture"), QStringLiteral("--db"),
                                                legacy.dsn().toString(), QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 1);
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(json.out.toUtf8(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(json.out));
        QCOMPARE(document.object().keys(), QStringList{QStringLiteral("defences")});
        const QJsonArray defences = document.object().value(QStringLiteral("defences")).toArray();
        QStringList names;
        for (const QJsonValue &value : defences) {
            const QJsonObject defence = value.toObject();
            QCOMPARE(defence.keys(),
                     (QStringList{QStringLiteral("evidence"), QStringLiteral("lets_through"),
                                  QStringLiteral("name"), QStringLiteral("state"),
                                  QStringLiteral("title")}));
            QVERIFY(QStringList({QStringLiteral("present"), QStringLiteral("missing"),
                                 QStringLiteral("unknown")})
                        .contains(defence.value(QStringLiteral("state")).toString()));
            QVERIFY(!defence.value(QStringLiteral("lets_through")).toString().isEmpty());
            names << defence.value(QStringLiteral("name")).toString();
            if (names.last() == QLatin1String("uk_order_type"))
                QCOMPARE(defence.value(QStringLiteral("state")).toString(),
                         QStringLiteral("missing"));
        }
        QCOMPARE(names, defenceNames());

        const test::CliRun text = test::runCli(
            {QStringLiteral("posture"), QStringLiteral("--db"), legacy.dsn().toString()});
        QCOMPARE(text.exitCode, 1);
        QCOMPARE(text.out.count(QLatin1Char('\n')), defenceNames().size());
        QVERIFY2(text.out.contains(QStringLiteral("missing uk_order_tpl ")) &&
                     text.out.contains(QStringLiteral("Lets through: ")),
                 qPrintable(text.out));

        // Current level, inspected, no traffic: nothing missing, the unknowns do not fail it.
        test::ScratchDatabase current(QStringLiteral("posturecur"));
        test::prepareCallbackDatabase(current.dsn(), QStringLiteral("current"), 0);
        QCOMPARE(test::runCli(
                     {QStringLiteral("inspect"), QStringLiteral("--db"), current.dsn().toString()})
                     .exitCode,
                 0);
        const test::CliRun clean = test::runCli(
            {QStringLiteral("posture"), QStringLiteral("--db"), current.dsn().toString()});
        QVERIFY2(clean.exitCode == 0, qPrintable(clean.out + clean.err));
        QVERIFY(!clean.out.contains(QStringLiteral("missing ")));

        test::ScratchDatabase bare(QStringLiteral("posturenone"));
        const test::CliRun unmigrated = test::runCli(
            {QStringLiteral("posture"), QStringLiteral("--db"), bare.dsn().toString()});
        QCOMPARE(unmigrated.exitCode, 2);
        QVERIFY2(unmigrated.err.contains(QStringLiteral("run payops migrate first")),
                 qPrintable(unmigrated.err));
        QVERIFY(unmigrated.out.isEmpty());

        Dsn nowhere = legacy.dsn();
        nowhere.database = QStringLiteral("posture_no_such_db");
        const test::CliRun unreachable =
            test::runCli({QStringLiteral("posture"), QStringLiteral("--db"), nowhere.toString()});
        QCOMPARE(unreachable.exitCode, 2);
        QVERIFY(!unreachable.err.isEmpty());
    }
};

PAYOPS_TEST_MAIN_CORE(TestPosture)
#include "tst_posture.moc"
