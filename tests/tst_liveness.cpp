#include "callbackfixture.h"
#include "console/instances.h"
#include "console/overview.h"
#include "console/playbook.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/instanceliveness.h"
#include "domain/inspection/posture.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QProcess>
#include <QSqlQuery>
#include <QTimer>

using namespace payops;

namespace {

const QString kInstance = QStringLiteral("quiet");

} // namespace

// One instance, its heartbeat held at one age, asked about by every reader that calls an
// instance live: the switch's acknowledgement wait, the console's instances, overview and
// playbook, the posture, and payops-callbackd refusing its name to a second process. The ages
// sit where the readers used to disagree (3 s, 5 s, whole seconds), under the default threshold
// and under the setting (payops_meta 'instance_alive_seconds') set higher, lower, to nonsense
// and removed.
class TestLiveness final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("liveness"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 0);
        m_connection = std::make_unique<db::Connection>(m_db->dsn(), QStringLiteral("t"));
        // Another host's process, a switch version behind: live, it is waited for and named.
        db::exec(db(),
                 QStringLiteral("INSERT INTO callback_instance (id, host, pid, listen, handler, "
                                "switch_version_applied, mode_applied) "
                                "VALUES (?, 'elsewhere', 1, '10.0.0.9:8080', 'safe', 0, 'NORMAL')"),
                 {kInstance});
    }

    void cleanupTestCase()
    {
        m_connection.reset();
        m_db.reset();
    }

    void everyReaderAgrees_data()
    {
        QTest::addColumn<QString>("setting"); // payops_meta's value; null: no row
        QTest::addColumn<int>("threshold");
        QTest::addColumn<int>("ageMs");
        QTest::addColumn<bool>("live");
        const QString fallback; // null
        const QString byDefault = QStringLiteral("5");
        QTest::newRow("fresh") << byDefault << 5 << 0 << true;
        QTest::newRow("4 s: stale by the old 3 s of the name check")
            << byDefault << 5 << 4000 << true;
        QTest::newRow("5.5 s: alive by the old whole seconds of the instances page")
            << byDefault << 5 << 5500 << false;
        QTest::newRow("30 s") << byDefault << 5 << 30000 << false;
        QTest::newRow("5.5 s, the setting at 10") << QStringLiteral("10") << 10 << 5500 << true;
        QTest::newRow("12 s, the setting at 10") << QStringLiteral("10") << 10 << 12000 << false;
        QTest::newRow("2.5 s, the setting at 2") << QStringLiteral("2") << 2 << 2500 << false;
        QTest::newRow("4 s, the setting nonsense: 5 s")
            << QStringLiteral("4 s") << 5 << 4000 << true;
        QTest::newRow("5.5 s, the setting 0: 5 s") << QStringLiteral("0") << 5 << 5500 << false;
        QTest::newRow("4 s, no setting: 5 s") << fallback << 5 << 4000 << true;
    }

    void everyReaderAgrees()
    {
        QFETCH(QString, setting);
        QFETCH(int, threshold);
        QFETCH(int, ageMs);
        QFETCH(bool, live);
        QCOMPARE(ageMs < threshold * 1000, live);
        db::exec(db(),
                 QStringLiteral("DELETE FROM payops_meta WHERE name = 'instance_alive_seconds'"));
        if (!setting.isNull())
            db::exec(db(),
                     QStringLiteral("INSERT INTO payops_meta (name, value) "
                                    "VALUES ('instance_alive_seconds', ?)"),
                     {setting});
        m_ageMs = ageMs;
        db::exec(db(),
                 QStringLiteral(
                     "UPDATE callback_instance SET host = 'elsewhere', pid = 1, stopped_at = NULL, "
                     "switch_version_applied = 0 WHERE id = ?"),
                 {kInstance});

        hold();
        bool waitedFor = false;
        for (const InstanceAck &ack : waitForAcknowledgement(db(), 1, 0))
            waitedFor = waitedFor || ack.instance == kInstance;
        QCOMPARE(waitedFor, live);

        hold();
        const console::InstanceList instances = console::loadInstances(db());
        QCOMPARE(instances.rows.size(), 1);
        QCOMPARE(instances.rows.first().alive, live);
        QCOMPARE(instances.aliveSeconds, threshold);

        hold();
        console::OverviewTallies tallies;
        const console::OverviewFigures overview = console::loadOverview(db(), tallies, 100);
        QCOMPARE(overview.instancesKnown, 1);
        QCOMPARE(overview.instancesAlive, live ? 1 : 0);
        QCOMPARE(overview.instanceAliveSeconds, threshold);

        hold();
        QCOMPARE(console::readPlaybookFacts(db(), 100).instancesAlive, live ? 1 : 0);

        hold();
        for (const Defence &defence : inspectPosture(db())) {
            if (defence.name == QLatin1String("record_only_switch"))
                QVERIFY2((defence.state == DefenceState::Missing) == live,
                         qPrintable(defence.evidence));
        }

        bool refused = false;
        startUnderTheName(refused);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(refused, live);
    }

private:
    QSqlDatabase db() const { return m_connection->database(); }

    // Sets the heartbeat to m_ageMs ago, while the row is still the other host's.
    void hold()
    {
        db::exec(db(),
                 QStringLiteral(
                     "UPDATE callback_instance SET last_seen_at = NOW(3) - INTERVAL ? MICROSECOND "
                     "WHERE id = ? AND pid = 1"),
                 {qint64(m_ageMs) * 1000, kInstance});
    }

    // Starts payops-callbackd under the instance's name, with the heartbeat held at its age
    // until the process either refuses (exit 2) or takes the row over with its own first beat.
    void startUnderTheName(bool &refused)
    {
        QTimer holder;
        connect(&holder, &QTimer::timeout, this, &TestLiveness::hold);
        holder.start(50);
        hold();
        QProcess process;
        process.start(test::callbackdPath(),
                      {QStringLiteral("--db"), m_db->dsn().toString(true),
                       QStringLiteral("--secret-file"), test::secretFilePath(),
                       QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                       QStringLiteral("--instance"), kInstance});
        const auto tookOver = [this, &process] {
            return db::scalar(db(),
                              QStringLiteral("SELECT pid FROM callback_instance WHERE id = ?"),
                              {kInstance})
                       .toLongLong() == process.processId();
        };
        QTRY_VERIFY_WITH_TIMEOUT(process.state() == QProcess::NotRunning || tookOver(), 30000);
        holder.stop();
        if (process.state() == QProcess::NotRunning) {
            const QString error = QString::fromUtf8(process.readAllStandardError());
            QVERIFY2(process.exitCode() == 2 && error.contains(QStringLiteral("in use by a live")),
                     qPrintable(error));
            refused = true;
            return;
        }
        process.terminate();
        QVERIFY(process.waitForFinished(30000));
    }

    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<db::Connection> m_connection;
    int m_ageMs = 0;
};

PAYOPS_TEST_MAIN_CORE(TestLiveness)
#include "tst_liveness.moc"
