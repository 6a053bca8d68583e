#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <atomic>
#include <thread>

using namespace payops;

namespace {

struct Sent
{
    qint64 orderId = 0;
    qint64 startedMicros = 0;
    int status = 0;
};

} // namespace

class TestCallbackdSwitch final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("switch"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), kOrders);
        m_a = std::make_unique<test::CallbackdProcess>(m_db->dsn(), QStringLiteral("safe"),
                                                       QStringLiteral("A"));
        m_b = std::make_unique<test::CallbackdProcess>(m_db->dsn(), QStringLiteral("safe"),
                                                       QStringLiteral("B"));
    }

    // (d) Once the flip to RECORD_ONLY has committed, no instance processes a callback.
    void flipDuringAStormIsABarrier()
    {
        std::vector<Sent> sent(kOrders);
        std::atomic<int> next{0};
        std::atomic<int> done{0};
        std::vector<std::thread> clients;
        for (int c = 0; c < 8; ++c)
            clients.emplace_back([&, c] {
                for (int i = next++; i < kOrders; i = next++) {
                    Sent &s = sent[size_t(i)];
                    s.orderId = 1001 + i;
                    s.startedMicros = nowMicros();
                    s.status =
                        test::postCallback(c % 2 ? m_b->port() : m_a->port(),
                                           test::callbackBody("WX-" + QByteArray::number(s.orderId),
                                                              s.orderId, 9900))
                            .status;
                    ++done;
                }
            });
        QTRY_VERIFY_WITH_TIMEOUT(done.load() >= kOrders / 3, 60000);
        db::Connection connection(m_db->dsn(), QStringLiteral("operator"));
        const QSqlDatabase db = connection.database();
        const FlipResult flip =
            flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("stop the bleeding"));
        const qint64 flipCommitted = nowMicros();
        for (auto &client : clients)
            client.join();

        QVERIFY(flip.changed);
        int after = 0;
        int recorded = 0;
        for (const Sent &s : sent) {
            QCOMPARE(s.status, 200);
            const QString status =
                db::scalar(db,
                           QStringLiteral("SELECT status FROM pay_callback_log WHERE order_id = ?"),
                           {s.orderId})
                    .toString();
            recorded += status == QLatin1String("RECORDED");
            if (s.startedMicros <= flipCommitted)
                continue;
            ++after;
            QVERIFY2(status == QLatin1String("RECORDED"),
                     qPrintable(QStringLiteral("order %1 sent after the flip was %2")
                                    .arg(s.orderId)
                                    .arg(status)));
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"),
                                {s.orderId})
                         .toString(),
                     QStringLiteral("PENDING"));
            QCOMPARE(test::sideEffectsOf(db, s.orderId).coupons, 0);
        }
        QVERIFY2(after > 20, "too few callbacks after the flip to prove anything");
        QVERIFY(recorded >= after);
        // Raw bodies are kept byte for byte.
        QCOMPARE(db::scalar(
                     db, QStringLiteral("SELECT raw_body FROM pay_callback_log WHERE order_id = ?"),
                     {sent.back().orderId})
                     .toByteArray(),
                 test::callbackBody("WX-" + QByteArray::number(sent.back().orderId),
                                    sent.back().orderId, 9900));

        // Both instances report the new version, and say so on /healthz.
        const auto acks = waitForAcknowledgement(db, flip.after.version, 5000);
        QCOMPARE(acks.size(), 2);
        for (const InstanceAck &ack : acks)
            QVERIFY2(ack.acknowledged, qPrintable(ack.instance));
        const auto health =
            QJsonDocument::fromJson(test::get(m_a->port(), QStringLiteral("/healthz")).body)
                .object();
        QCOMPARE(health.value(QStringLiteral("mode")).toString(), QStringLiteral("RECORD_ONLY"));
        QCOMPARE(health.value(QStringLiteral("switch_version")).toInteger(), flip.after.version);
        // A platform retry of a recorded callback adds nothing.
        const QString before = test::businessFingerprint(m_db->dsn());
        QCOMPARE(
            test::postCallback(m_b->port(),
                               test::callbackBody("WX-" + QByteArray::number(sent.back().orderId),
                                                  sent.back().orderId, 9900))
                .status,
            200);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
        // The flip is audited with the database's own idea of who did it.
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT actor FROM ops_audit_log WHERE action = 'switch.flip' "
                                    "ORDER BY id DESC LIMIT 1"))
                     .toString(),
                 QStringLiteral("root@localhost"));
        m_recorded = recorded;
    }

    // (e) Two drainers at once process each recorded callback exactly once.
    void twoDrainersProcessEachOnce()
    {
        QVERIFY(m_recorded > 0);
        const QString dsn = m_db->dsn().toString();
        const test::CliRun refused =
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"), dsn});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(QStringLiteral("RECORD_ONLY")), qPrintable(refused.err));

        const test::CliRun off =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("off"), QStringLiteral("--db"),
                          dsn, QStringLiteral("--reason"), QStringLiteral("fixed"),
                          QStringLiteral("--wait"), QStringLiteral("10")});
        QVERIFY2(off.exitCode == 0, qPrintable(off.err + off.out));
        QVERIFY2(off.out.contains(QStringLiteral("all 2 live instance(s)")), qPrintable(off.out));

        QProcess first;
        QProcess second;
        for (QProcess *drainer : {&first, &second})
            drainer->start(test::cliPath(), {QStringLiteral("drain"), QStringLiteral("--db"), dsn});
        QVERIFY(first.waitForFinished(120000) && second.waitForFinished(120000));
        QCOMPARE(first.exitCode(), 0);
        QCOMPARE(second.exitCode(), 0);
        const QRegularExpression processed(QStringLiteral("processed (\\d+), rejected (\\d+)"));
        int total = 0;
        for (QProcess *drainer : {&first, &second}) {
            const auto match = processed.match(QString::fromUtf8(drainer->readAllStandardOutput()));
            QVERIFY(match.hasMatch());
            QCOMPARE(match.captured(2).toInt(), 0);
            total += match.captured(1).toInt();
        }
        QCOMPARE(total, m_recorded);

        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            db::scalar(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status <> 'PROCESSED'"))
                .toInt(),
            0);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
                     .toInt(),
                 kOrders);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")).toInt(),
                 2 * kOrders);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM point_log")).toInt(), kOrders);
        QCOMPARE(db::scalar(
                     db, QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE accepted = 1"))
                     .toInt(),
                 kOrders);
    }

    void degradeNeedsAReasonAndNamesWhoDidNotAcknowledge()
    {
        const QString dsn = m_db->dsn().toString();
        const test::CliRun noReason = test::runCli(
            {QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"), dsn});
        QCOMPARE(noReason.exitCode, 2);
        QVERIFY(noReason.err.contains(QStringLiteral("--reason is required")));
        {
            // An instance that heartbeats but never applies a new version (a hung worker). Its
            // name (any --instance) holds a %1, which must stay text in the message.
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            db::execDirect(
                connection.database(),
                QStringLiteral("INSERT INTO callback_instance (id, last_seen_at, "
                               "switch_version_applied) VALUES ('stuck%1-7', NOW(3), 1)"));
        }
        const test::CliRun on =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"),
                          dsn, QStringLiteral("--reason"), QStringLiteral("drill"),
                          QStringLiteral("--wait"), QStringLiteral("2")});
        QCOMPARE(on.exitCode, 1);
        QVERIFY2(on.err.contains(QStringLiteral("stuck%1-7 (still at version 1)")),
                 qPrintable(on.err));
        QVERIFY2(!on.err.contains(QStringLiteral("A (")), qPrintable(on.err));
    }

    void cleanupTestCase()
    {
        QCOMPARE(m_a->terminate(), 0);
        QCOMPARE(m_b->terminate(), 0);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        QCOMPARE(db::scalar(connection.database(),
                            QStringLiteral("SELECT COUNT(*) FROM callback_instance WHERE id IN "
                                           "('A', 'B') AND stopped_at IS NOT NULL"))
                     .toInt(),
                 2);
    }

private:
    static constexpr int kOrders = 400;
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<test::CallbackdProcess> m_a;
    std::unique_ptr<test::CallbackdProcess> m_b;
    int m_recorded = 0;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdSwitch)
#include "tst_callbackd_switch.moc"
