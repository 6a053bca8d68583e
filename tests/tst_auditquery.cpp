#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/inspection/posture.h"
#include "domain/inspection/privileges.h"
#include "domain/money/auditlog.h"
#include "domain/money/auditquery.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QFile>
#include <QTemporaryDir>

using namespace payops;

class TestAuditQuery final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("auditq"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 0);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        for (int i = 0; i < 25; ++i)
            appendAudit(connection.database(),
                        i % 2 ? QStringLiteral("switch.flip")
                              : QStringLiteral("compensation.freeze_coupon"),
                        QStringLiteral("user_coupon:%1").arg(i),
                        QStringLiteral("reason, with \"quotes\"\nand a newline %1").arg(i),
                        QStringLiteral("INC-9"), QString(), QStringLiteral("{\"i\":%1}").arg(i));
    }

    void pagesNewestFirstWithFilters()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const QList<AuditEntry> first = loadAuditPage(db, {}, 0, 10);
        QCOMPARE(first.size(), 10);
        QCOMPARE(first.first().id, qint64(25));
        const QList<AuditEntry> second = loadAuditPage(db, {}, first.last().id, 10);
        QCOMPARE(second.first().id, qint64(15));
        QCOMPARE(loadAuditPage(db, {}, 6, 10).size(), 5);
        AuditFilter flips;
        flips.action = QStringLiteral("switch.");
        QCOMPARE(loadAuditPage(db, flips, 0, 100).size(), 12);
        AuditFilter nobody;
        nobody.actor = QStringLiteral("nobody-here");
        QVERIFY(loadAuditPage(db, nobody, 0, 100).isEmpty());
        AuditFilter future;
        future.from = QDateTime::currentDateTimeUtc().addDays(1);
        QVERIFY(loadAuditPage(db, future, 0, 100).isEmpty());
        QCOMPARE(first.first().actor, QStringLiteral("root@localhost"));
    }

    void exportsCsvThatSpreadsheetsRead()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.csv"));
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        QCOMPARE(exportAuditCsv(connection.database(), {}, path), qint64(25));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray csv = file.readAll();
        QVERIFY(csv.startsWith(
            "\xEF\xBB\xBFid,created_at_utc,actor,action")); // the BOM Excel needs for UTF-8
        QVERIFY(csv.contains("\"reason, with \"\"quotes\"\"\nand a newline 0\""));
        QCOMPARE(csv.count("\r\n"), 26);

        std::atomic<bool> cancel{true};
        const QString cancelled = dir.filePath(QStringLiteral("cancelled.csv"));
        QCOMPARE(exportAuditCsv(connection.database(), {}, cancelled, &cancel), qint64(-1));
        QVERIFY(!QFile::exists(cancelled));
    }

    void privilegesComeFromTheServer()
    {
        {
            db::Connection root(m_db->dsn(), QStringLiteral("root"));
            const Privileges all = probePrivileges(root.database());
            QVERIFY(all.flipSwitch && all.drain && all.compensate && all.decideRequests);
        }
        const QString before = test::businessFingerprint(m_db->dsn());
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        {
            db::Connection connection(finance.dsnFor(m_db->name()), QStringLiteral("finance"));
            const Privileges none = probePrivileges(connection.database());
            QVERIFY(!none.flipSwitch && !none.drain && !none.compensate && !none.decideRequests);
        }
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        {
            db::Connection connection(operatorAccount.dsnFor(m_db->name()),
                                      QStringLiteral("operator"));
            const Privileges some = probePrivileges(connection.database());
            QVERIFY(some.flipSwitch && some.drain && some.compensate && some.decideRequests);
        }
        // The endpoint pays orders, but neither audits a drain nor flips, compensates or decides.
        test::ScratchAccount endpoint(QStringLiteral("payops_endpoint"));
        {
            db::Connection connection(endpoint.dsnFor(m_db->name()), QStringLiteral("endpoint"));
            const Privileges rights = probePrivileges(connection.database());
            QVERIFY(!rights.flipSwitch && !rights.drain && !rights.compensate &&
                    !rights.decideRequests);
        }
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    // `payops audit verify` and the posture's audit defence run one verifier: an edited, a
    // removed and a last entry removed are named alike by both; only an edit older than the
    // posture's tail is left to the full walk.
    void aTamperedEntryIsFoundByBothPaths()
    {
        test::ScratchDatabase scratch(QStringLiteral("audittamper"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        db::execDirect(
            db, QStringLiteral(
                    "INSERT INTO ops_audit_log (action, target, reason, ticket) "
                    "SELECT 'backlog.drain', seq, CONCAT('entry ', seq), '' FROM seq_1_to_1005"));
        const auto postureAudit = [&db] {
            for (const Defence &defence : inspectPosture(db)) {
                if (defence.name == QLatin1String("audit_chain"))
                    return defence;
            }
            return Defence();
        };
        const auto bothFind = [&](const QString &problem) {
            const AuditVerification full = verifyAuditChain(db);
            QVERIFY(!full.intact);
            QVERIFY2(full.problem.contains(problem), qPrintable(full.problem));
            const Defence defence = postureAudit();
            QCOMPARE(defence.state, DefenceState::Missing);
            QVERIFY2(defence.evidence.contains(full.problem), qPrintable(defence.evidence));
        };
        QVERIFY(verifyAuditChain(db).intact);
        QCOMPARE(postureAudit().state, DefenceState::Present);

        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_update"));
        db::execDirect(
            db,
            QStringLiteral("UPDATE ops_audit_log SET reason = 'nothing happened' WHERE id = 1000"));
        bothFind(QStringLiteral("entry 1000 does not match its hash"));
        db::execDirect(
            db, QStringLiteral("UPDATE ops_audit_log SET reason = 'entry 1000' WHERE id = 1000"));

        // Before the newest thousand: the posture's quick look does not reach it, the full walk
        // does.
        db::execDirect(
            db,
            QStringLiteral("UPDATE ops_audit_log SET reason = 'nothing happened' WHERE id = 2"));
        QVERIFY(verifyAuditChain(db).problem.contains(
            QStringLiteral("entry 2 does not match its hash")));
        QCOMPARE(postureAudit().state, DefenceState::Present);
        db::execDirect(db,
                       QStringLiteral("UPDATE ops_audit_log SET reason = 'entry 2' WHERE id = 2"));

        db::execDirect(db, QStringLiteral("DROP TRIGGER ops_audit_log_no_delete"));
        db::execDirect(db, QStringLiteral("DELETE FROM ops_audit_log WHERE id = 1003"));
        bothFind(QStringLiteral("entry 1003 is missing"));
        db::execDirect(db, QStringLiteral("DELETE FROM ops_audit_log WHERE id >= 1003"));
        bothFind(QStringLiteral("the chain head names entry 1005 but the log ends at entry 1002"));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
};

PAYOPS_TEST_MAIN_CORE(TestAuditQuery)
#include "tst_auditquery.moc"
