// RECORD_ONLY's group commit (docs/decisions/0054-group-commit.md): recordBatch answers a
// batch as the handler answers one callback at a time, and payops-callbackd, connected as an
// account holding payops_endpoint only, records concurrent callbacks in shared commits behind
// the switch's barrier, bounded.
#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "domain/callback/recordbatch.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <atomic>
#include <thread>

using namespace payops;

namespace {

CallbackRequest request(const QByteArray &payNo, qint64 orderId, qint64 amountFen = 9900,
                        const QString &tradeStatus = QStringLiteral("SUCCESS"))
{
    QString error;
    const auto parsed = CallbackRequest::parse(
        test::callbackBody(payNo, orderId, amountFen, QStringLiteral("CNY"), tradeStatus), &error);
    if (!parsed)
        qFatal("%s", qPrintable(error));
    return *parsed;
}

int count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toInt();
}

QString outcomeOf(const test::HttpResult &result)
{
    return QJsonDocument::fromJson(result.body)
        .object()
        .value(QStringLiteral("outcome"))
        .toString();
}

// Posts every body at once from its own thread; the statuses in the bodies' order.
QList<test::HttpResult> postTogether(int port, const QList<QByteArray> &bodies)
{
    QList<test::HttpResult> results(bodies.size());
    std::vector<std::thread> clients;
    for (qsizetype i = 0; i < bodies.size(); ++i)
        clients.emplace_back([&, i] { results[i] = test::postCallback(port, bodies.at(i)); });
    for (auto &client : clients)
        client.join();
    return results;
}

const QString kPoison = QStringLiteral(
    "CREATE TRIGGER poison BEFORE INSERT ON pay_callback_log FOR EACH ROW "
    "IF NEW.pay_no = 'POISON' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'poisoned'; "
    "END IF");

} // namespace

class TestRecordBatch final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("recordbatch"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 400);
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_root = std::make_unique<db::Connection>(m_db->dsn(), QStringLiteral("root"));
        m_as = std::make_unique<db::Connection>(m_endpoint->dsnFor(m_db->name()),
                                                QStringLiteral("endpoint"));
        flipSwitch(root(), CallbackMode::RecordOnly, QStringLiteral("group commit"));
    }

    // Replays and 409s inside one batch are answered as one at a time; what needs the full
    // path is handed back, never answered wrong.
    void batchAnswersAsOneAtATime()
    {
        SwitchObserver observer;
        const QString instance = QStringLiteral("batch-test");
        const RecordBatchResult first = recordBatch(
            endpoint(),
            {request("B-1", 1001), request("B-2", 1002, 9900, QStringLiteral("NOTPAY"))}, instance,
            observer);
        QVERIFY(first.recordOnly);
        QVERIFY(observer.recordOnlyHint.load());
        QCOMPARE(first.inserted, 2);
        QVERIFY(first.committed >= first.txBegin && first.txBegin > 0);

        const QList<CallbackRequest> batch{request("B-3", 1003),
                                           request("B-3", 1003),
                                           request("B-3", 1003, 100),
                                           request("B-1", 1001),
                                           request("B-1", 1001, 100),
                                           request("B-2", 1002),
                                           request("B-4", 1004, 9900, QStringLiteral("NOTPAY")),
                                           request("B-4", 1004)};
        const RecordBatchResult second = recordBatch(endpoint(), batch, instance, observer);
        QCOMPARE(second.answers.size(), batch.size());
        QCOMPARE(second.inserted, 2);
        const auto outcome = [&second](int i) { return second.answers.at(i)->outcome; };
        QCOMPARE(outcome(0), Outcome::Recorded);
        QCOMPARE(outcome(1), Outcome::Replayed);
        QCOMPARE(second.answers.at(1)->suppressedBy, Defence::Replay);
        QCOMPARE(second.answers.at(1)->body, second.answers.at(0)->body);
        QCOMPARE(second.answers.at(2)->httpStatus, 409);
        QCOMPARE(outcome(3), Outcome::Replayed);
        QCOMPARE(second.answers.at(3)->body, first.answers.at(0)->body);
        QCOMPARE(second.answers.at(4)->httpStatus, 409);
        QVERIFY(!second.answers.at(5)); // a SUCCESS superseding a stored notice
        QCOMPARE(outcome(6), Outcome::Recorded);
        QVERIFY(!second.answers.at(7)); // superseding the notice of this very batch
        // Each answered as answerForResend answers it against the stored row.
        const auto stored = findCallback(endpoint(), "B-1");
        QVERIFY(stored);
        QCOMPARE(answerForResend(*stored, batch.at(4))->httpStatus, 409);

        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "LIKE 'B-%' AND status = 'RECORDED' AND "
                                              "instance = 'batch-test'")),
                 4);
        QCOMPARE(db::scalar(root(), QStringLiteral(
                                        "SELECT trade_status FROM pay_callback_log WHERE pay_no = "
                                        "'B-4'"))
                     .toString(),
                 QStringLiteral("NOTPAY"));
        // Byte for byte, with its digest, as insertCallback stores one.
        QCOMPARE(db::scalar(root(),
                            QStringLiteral("SELECT raw_body FROM pay_callback_log WHERE pay_no = "
                                           "'B-3'"))
                     .toByteArray(),
                 batch.at(0).rawBody);
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "= 'B-3' AND body_sha256 = SHA2(raw_body, 256)")),
                 1);
    }

    // Bytes that are not UTF-8 (a body in GBK) reach raw_body unchanged.
    void valueRowsKeepsBytes()
    {
        const QByteArray bytes("\xb0\xa1\x00\xff'\\\"x", 9);
        db::execDirect(root(), QStringLiteral("CREATE TEMPORARY TABLE bytes (b BLOB)"));
        db::execDirect(root(), QStringLiteral("INSERT INTO bytes VALUES ") +
                                   db::valueRows(root(), {{bytes}, {QByteArray()}}));
        QSqlQuery query = db::exec(root(), QStringLiteral("SELECT b FROM bytes"));
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toByteArray(), bytes);
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toByteArray(), QByteArray());
    }

    void aBatchThatReadsNormalWritesNothing()
    {
        flipSwitch(root(), CallbackMode::Normal, QStringLiteral("back"));
        SwitchObserver observer;
        observer.recordOnlyHint = true;
        const RecordBatchResult result =
            recordBatch(endpoint(), {request("N-1", 1010)}, QStringLiteral("x"), observer);
        QVERIFY(!result.recordOnly);
        QVERIFY(!observer.recordOnlyHint.load());
        QVERIFY(!result.answers.at(0));
        QCOMPARE(result.committed, 0);
        QCOMPARE(count(root(), QStringLiteral(
                                   "SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = 'N-1'")),
                 0);
        flipSwitch(root(), CallbackMode::RecordOnly, QStringLiteral("again"));
    }

    // One transaction: a batch whose INSERT fails leaves none of its rows.
    void aFailedBatchLeavesNothing()
    {
        db::execDirect(root(), kPoison);
        SwitchObserver observer;
        QVERIFY_THROWS_EXCEPTION(
            db::Error, recordBatch(endpoint(), {request("F-1", 1011), request("POISON", 1012)},
                                   QStringLiteral("x"), observer));
        db::execDirect(root(), QStringLiteral("DROP TRIGGER poison"));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "IN ('F-1', 'POISON')")),
                 0);
    }

    // Another writer stores a pay_no between the batch's lookup and its INSERT: the batch
    // rolls back and every callback of it takes the handler's path.
    void aPayNoStoredMeanwhileTakesTheFullPath()
    {
        db::Connection other(m_db->dsn(), QStringLiteral("other"));
        db::Transaction transaction(other.database());
        insertCallback(other.database(), request("D-1", 1020), QStringLiteral("RECORDED"),
                       QStringLiteral("other"), CallbackAnswer::success(Outcome::Recorded));
        // The batch's INSERT waits on uk_pay_no for this transaction, which then commits.
        std::thread committer([&transaction] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            transaction.commit();
        });
        SwitchObserver observer;
        RecordBatchResult result;
        try {
            result = recordBatch(endpoint(), {request("D-2", 1021), request("D-1", 1020)},
                                 QStringLiteral("x"), observer);
        } catch (...) {
            committer.join();
            throw;
        }
        committer.join();
        QVERIFY(result.recordOnly);
        QCOMPARE(result.committed, 0);
        QVERIFY(!result.answers.at(0) && !result.answers.at(1));
        QCOMPARE(count(root(), QStringLiteral(
                                   "SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = 'D-2'")),
                 0);
    }

    // Over HTTP: concurrent callbacks share commits; copies of one pay_no make one row, the
    // second copy replayed; each callback's trace is written.
    void concurrentCallbacksShareCommits()
    {
        test::CallbackdProcess service(
            m_endpoint->dsnFor(m_db->name()), QStringLiteral("safe"), QStringLiteral("RB"),
            {QStringLiteral("--record-batch-ms"), QStringLiteral("300"),
             QStringLiteral("--record-batch-rows"), QStringLiteral("50")});
        waitForRecordOnly(service.port());
        QList<QByteArray> bodies;
        for (int i = 0; i < 15; ++i)
            bodies << test::callbackBody("H-" + QByteArray::number(i), 1100 + i, 9900)
                   << test::callbackBody("H-" + QByteArray::number(i), 1100 + i, 9900);
        const QList<test::HttpResult> results = postTogether(service.port(), bodies);
        for (qsizetype i = 0; i < results.size(); i += 2) {
            QCOMPARE(results.at(i).status, 200);
            QCOMPARE(results.at(i + 1).status, 200);
            // A replay gets the first answer, byte for byte.
            QCOMPARE(outcomeOf(results.at(i)), QStringLiteral("recorded"));
            QCOMPARE(results.at(i + 1).body, results.at(i).body);
        }
        QCOMPARE(
            test::metric(service.port(), "payops_duplicates_suppressed_total{defence=\"replay\"}"),
            qint64(15));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "LIKE 'H-%' AND status = 'RECORDED'")),
                 15);
        const qint64 batches = test::metric(service.port(), "payops_record_batches_total");
        QCOMPARE(test::metric(service.port(), "payops_record_batch_rows_total"), qint64(15));
        QVERIFY2(batches >= 1 && batches < 15, qPrintable(QString::number(batches)));
        // One trace per answer, written before it; the rows of one batch share one commit.
        QCOMPARE(count(root(),
                       QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE pay_no LIKE 'H-%' "
                                      "AND instance = 'RB' AND http_status = 200")),
                 30);
        QCOMPARE(count(root(), QStringLiteral(
                                   "SELECT COUNT(DISTINCT committed_at) FROM callback_trace WHERE "
                                   "pay_no LIKE 'H-%' AND outcome = 'recorded' AND "
                                   "tx_begin_at <= committed_at")),
                 int(batches));
        QCOMPARE(service.terminate(), 0);
    }

    // A batch that fails answers 503 to each of its callbacks, and nothing of it stays.
    void aFailedBatchAnswers503ToEach()
    {
        test::CallbackdProcess service(
            m_endpoint->dsnFor(m_db->name()), QStringLiteral("safe"), QStringLiteral("RB"),
            {QStringLiteral("--record-batch-ms"), QStringLiteral("500")});
        waitForRecordOnly(service.port());
        db::execDirect(root(), kPoison);
        const QList<test::HttpResult> results =
            postTogether(service.port(), {test::callbackBody("P-1", 1201, 9900),
                                          test::callbackBody("POISON", 1202, 9900),
                                          test::callbackBody("P-3", 1203, 9900)});
        db::execDirect(root(), QStringLiteral("DROP TRIGGER poison"));
        for (const test::HttpResult &result : results)
            QCOMPARE(result.status, 503);
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "IN ('P-1', 'POISON', 'P-3')")),
                 0);
        QCOMPARE(test::metric(service.port(), "payops_record_batches_total"), qint64(0));
        // The platform's retry is recorded.
        QCOMPARE(
            outcomeOf(test::postCallback(service.port(), test::callbackBody("P-1", 1201, 9900))),
            QStringLiteral("recorded"));
        QCOMPARE(service.terminate(), 0);
    }

    // A storm offered at many times what the queue holds: every request is answered, 200 or
    // 503, and only what was answered 200 is stored.
    void aStormIsBounded()
    {
        test::CallbackdProcess service(m_endpoint->dsnFor(m_db->name()), QStringLiteral("safe"),
                                       QStringLiteral("RB"),
                                       {QStringLiteral("--record-batch-ms"), QStringLiteral("20"),
                                        QStringLiteral("--record-batch-rows"), QStringLiteral("4"),
                                        QStringLiteral("--queue-depth"), QStringLiteral("6"),
                                        QStringLiteral("--queue-wait-ms"), QStringLiteral("30")});
        waitForRecordOnly(service.port());
        QList<QByteArray> bodies;
        for (int i = 0; i < 60; ++i)
            bodies << test::callbackBody("S-" + QByteArray::number(i), 3000 + i, 9900);
        // The writers are held at the switch's shared lock for the storm's first seconds, so
        // the queue fills however fast this machine commits (a sanitizer build sends slower
        // than the writers would otherwise drain).
        db::Connection holder(m_db->dsn(), QStringLiteral("holder"));
        db::Transaction hold(holder.database());
        db::execDirect(holder.database(),
                       QStringLiteral("SELECT mode FROM callback_switch WHERE id = 1 FOR UPDATE"));
        std::thread release([&hold] {
            std::this_thread::sleep_for(std::chrono::seconds(2));
            hold.commit();
        });
        const QList<test::HttpResult> results = postTogether(service.port(), bodies);
        release.join();
        int ok = 0;
        int refused = 0;
        for (const test::HttpResult &result : results) {
            QVERIFY2(result.status == 200 || result.status == 503,
                     qPrintable(QString::number(result.status)));
            (result.status == 200 ? ok : refused) += 1;
        }
        QVERIFY2(refused > 0, "the queue never filled: the storm proves nothing");
        QCOMPARE(
            count(root(),
                  QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no LIKE 'S-%'")),
            ok);
        QCOMPARE(service.terminate(), 0);
    }

    // The batch's COMMIT reply is lost (PAYOPS_TEST_LOSE_COMMIT_REPLY): every callback of the
    // batch is looked up again on another connection and answered from what was stored.
    void aLostCommitReplyIsLookedUp()
    {
        qputenv("PAYOPS_TEST_LOSE_COMMIT_REPLY", "L-1");
        test::CallbackdProcess service(
            m_endpoint->dsnFor(m_db->name()), QStringLiteral("safe"), QStringLiteral("RB"),
            {QStringLiteral("--record-batch-ms"), QStringLiteral("500")});
        qunsetenv("PAYOPS_TEST_LOSE_COMMIT_REPLY");
        waitForRecordOnly(service.port());
        const QList<test::HttpResult> results =
            postTogether(service.port(), {test::callbackBody("L-1", 1301, 9900),
                                          test::callbackBody("L-2", 1302, 9900)});
        for (const test::HttpResult &result : results) {
            QCOMPARE(result.status, 200);
            QCOMPARE(outcomeOf(result), QStringLiteral("recorded"));
        }
        QCOMPARE(test::metric(service.port(), "payops_record_batches_total"), qint64(1));
        QCOMPARE(test::metric(service.port(), "payops_callbacks_total{outcome=\"replayed\"}"),
                 qint64(2));
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "IN ('L-1', 'L-2') AND status = 'RECORDED'")),
                 2);
        QCOMPARE(service.terminate(), 0);
    }

    // The barrier: a flip back to NORMAL waits for the batches that read RECORD_ONLY, and
    // every callback sent after it committed is paid, not recorded.
    void flipBackDuringABatchedStormIsABarrier()
    {
        test::CallbackdProcess service(m_endpoint->dsnFor(m_db->name()), QStringLiteral("safe"),
                                       QStringLiteral("RB"),
                                       {QStringLiteral("--record-batch-ms"), QStringLiteral("5")});
        waitForRecordOnly(service.port());
        constexpr int kSent = 200;
        constexpr qint64 kFirstOrder = 1201;
        std::vector<qint64> started(kSent);
        std::vector<int> statuses(kSent);
        std::atomic<int> next{0};
        std::atomic<int> done{0};
        std::vector<std::thread> clients;
        for (int c = 0; c < 8; ++c)
            clients.emplace_back([&] {
                for (int i = next++; i < kSent; i = next++) {
                    started[size_t(i)] = nowMicros();
                    statuses[size_t(i)] =
                        test::postCallback(
                            service.port(),
                            test::callbackBody("W-" + QByteArray::number(i), kFirstOrder + i, 9900))
                            .status;
                    ++done;
                }
            });
        QTRY_VERIFY_WITH_TIMEOUT(done.load() >= kSent / 3, 20000);
        flipSwitch(root(), CallbackMode::Normal, QStringLiteral("storm over"));
        const qint64 flipCommitted = nowMicros();
        for (auto &client : clients)
            client.join();

        int after = 0;
        for (int i = 0; i < kSent; ++i) {
            QCOMPARE(statuses[size_t(i)], 200);
            if (started[size_t(i)] <= flipCommitted)
                continue;
            ++after;
            QCOMPARE(
                db::scalar(root(),
                           QStringLiteral("SELECT status FROM pay_callback_log WHERE pay_no = ?"),
                           {QStringLiteral("W-%1").arg(i)})
                    .toString(),
                QStringLiteral("PROCESSED"));
        }
        QVERIFY2(after > 20, "too few callbacks after the flip to prove anything");
        QVERIFY(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                             "LIKE 'W-%' AND status = 'RECORDED'")) > 0);
        // Every batch that recorded committed before the flip did.
        QCOMPARE(db::scalar(root(),
                            QStringLiteral("SELECT COUNT(*) FROM callback_trace t JOIN "
                                           "pay_callback_log l ON l.pay_no = t.pay_no WHERE "
                                           "l.pay_no LIKE 'W-%' AND l.status = 'RECORDED' AND "
                                           "t.outcome = 'recorded' AND t.committed_at > ?"),
                            {formatMicros(flipCommitted)})
                     .toInt(),
                 0);
        QCOMPARE(service.terminate(), 0);
    }

    // A gateway's recording step goes through the group commit too: deliveries at the same
    // moment share one commit, and each is still forwarded exactly once, after it.
    void aGatewayRecordsInGroups()
    {
        test::CountingUpstream upstream;
        test::CallbackdProcess gateway(
            m_endpoint->dsnFor(m_db->name()), QString(), QStringLiteral("GW"),
            {QStringLiteral("--upstream"), upstream.url(), QStringLiteral("--record-batch-ms"),
             QStringLiteral("500")});
        QList<QByteArray> bodies;
        for (int i = 0; i < 8; ++i)
            bodies << test::callbackBody("G-" + QByteArray::number(i), 2001 + i, 9900);
        const QList<test::HttpResult> results = postTogether(gateway.port(), bodies);
        for (const test::HttpResult &result : results)
            QCOMPARE(result.status, 200);
        const QHash<QByteArray, int> forwards = upstream.countByPayNo();
        QCOMPARE(forwards.size(), 8);
        for (int count : forwards)
            QCOMPARE(count, 1);
        QCOMPARE(count(root(), QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                              "LIKE 'G-%' AND gateway = 1 AND status = "
                                              "'FORWARDED'")),
                 8);
        const qint64 batches = test::metric(gateway.port(), "payops_record_batches_total");
        QCOMPARE(test::metric(gateway.port(), "payops_record_batch_rows_total"), qint64(8));
        QVERIFY2(batches >= 1 && batches < 8, qPrintable(QString::number(batches)));
        QCOMPARE(gateway.terminate(), 0);
    }

private:
    void waitForRecordOnly(int port)
    {
        QTRY_COMPARE_WITH_TIMEOUT(
            QJsonDocument::fromJson(test::get(port, QStringLiteral("/healthz")).body)
                .object()
                .value(QStringLiteral("mode"))
                .toString(),
            QStringLiteral("RECORD_ONLY"), 10000);
    }

    QSqlDatabase root() const { return m_root->database(); }
    QSqlDatabase endpoint() const { return m_as->database(); }

    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<db::Connection> m_root;
    std::unique_ptr<db::Connection> m_as;
};

PAYOPS_TEST_MAIN_CORE(TestRecordBatch)
#include "tst_recordbatch.moc"
