#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/callback/signature.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace payops;
using Headers = QList<QPair<QByteArray, QByteArray>>;

// The wire contract of docs/callback-contract.md, over real HTTP against a real database: every bad
// input gets its status code and changes no business table.
class TestCallbackdContract final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("contract"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 20);
        {
            db::Connection connection(m_db->dsn(), QStringLiteral("t"));
            db::execDirect(connection.database(),
                           QStringLiteral("UPDATE orders SET status = 'CLOSED' WHERE id = 1019"));
        }
        m_service = std::make_unique<test::CallbackdProcess>(m_db->dsn());
    }

    void cleanupTestCase() { QCOMPARE(m_service->terminate(), 0); }

    void refusedInputsChangeNothing_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<Headers>("headers"); // empty: sign properly
        QTest::addColumn<int>("status");
        const QByteArray good = test::callbackBody("P-GOOD", 1001, 9900);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        const QByteArray secret = test::testSecret();

        QTest::newRow("no signature")
            << good << Headers{{"X-Payops-Timestamp", QByteArray::number(now)}} << 401;
        QTest::newRow("wrong secret")
            << good
            << Headers{{"X-Payops-Timestamp", QByteArray::number(now)},
                       {"X-Payops-Signature", signatureHeader("not-the-secret-at-all", now, good)}}
            << 401;
        QTest::newRow("body changed after signing")
            << good
            << Headers{{"X-Payops-Timestamp", QByteArray::number(now)},
                       {"X-Payops-Signature", signatureHeader(secret, now, good + " ")}}
            << 401;
        QTest::newRow("stale timestamp")
            << good
            << Headers{{"X-Payops-Timestamp", QByteArray::number(now - 301)},
                       {"X-Payops-Signature", signatureHeader(secret, now - 301, good)}}
            << 401;
        QTest::newRow("future timestamp")
            << good
            << Headers{{"X-Payops-Timestamp", QByteArray::number(now + 400)},
                       {"X-Payops-Signature", signatureHeader(secret, now + 400, good)}}
            << 401;
        QTest::newRow("not json") << QByteArray("pay_no=P1&order_id=1001") << Headers{} << 400;
        QTest::newRow("empty body") << QByteArray() << Headers{} << 400;
        QTest::newRow("missing order_id")
            << QByteArray(
                   R"({"pay_no":"P-M","amount_fen":9900,"currency":"CNY","trade_status":"SUCCESS"})")
            << Headers{} << 400;
        QTest::newRow("missing amount")
            << QByteArray(
                   R"({"pay_no":"P-M","order_id":1001,"currency":"CNY","trade_status":"SUCCESS"})")
            << Headers{} << 400;
        QTest::newRow("order_id as string")
            << QByteArray(
                   R"({"pay_no":"P-T","order_id":"1001","amount_fen":9900,"currency":"CNY","trade_status":"SUCCESS"})")
            << Headers{} << 400;
        QTest::newRow("amount as float")
            << QByteArray(
                   R"({"pay_no":"P-T","order_id":1001,"amount_fen":99.5,"currency":"CNY","trade_status":"SUCCESS"})")
            << Headers{} << 400;
        QTest::newRow("pay_no as number")
            << QByteArray(
                   R"({"pay_no":42,"order_id":1001,"amount_fen":9900,"currency":"CNY","trade_status":"SUCCESS"})")
            << Headers{} << 400;
        QTest::newRow("pay_no of 65 characters")
            << test::callbackBody(QByteArray(65, 'X'), 1001, 9900) << Headers{} << 400;
        QTest::newRow("100 KiB body")
            << QByteArray(R"({"pay_no":"P-BIG","pad":")" + QByteArray(100 * 1024, 'a') + R"("})")
            << Headers{} << 413;
    }

    void refusedInputsChangeNothing()
    {
        QFETCH(QByteArray, body);
        QFETCH(Headers, headers);
        QFETCH(int, status);
        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult result = headers.isEmpty()
                                            ? test::postCallback(m_service->port(), body)
                                            : test::postRaw(m_service->port(), body, headers);
        QCOMPARE(result.status, status);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    // An RFC 3339 paid_at no DATETIME holds is refused with its reason, not stored without
    // the platform's time (reconciliation finds a payment by it).
    void unstorablePaidAtIsRefused_data()
    {
        QTest::addColumn<QByteArray>("paidAt");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<qint64>("orderId"); // one each: the accepted resend pays it
        QTest::newRow("leap second")
            << QByteArray("2016-12-31T23:59:60Z") << QStringLiteral("leap second") << qint64(1006);
        QTest::newRow("year 0000") << QByteArray("0000-01-01T00:00:00Z")
                                   << QStringLiteral("years 1000 to 9999") << qint64(1007);
        QTest::newRow("year 10000 in UTC") << QByteArray("9999-12-31T23:00:00-05:00")
                                           << QStringLiteral("years 1000 to 9999") << qint64(1008);
    }

    void unstorablePaidAtIsRefused()
    {
        QFETCH(QByteArray, paidAt);
        QFETCH(QString, reason);
        QFETCH(qint64, orderId);
        const QByteArray payNo = "P-TIME-" + QByteArray::number(orderId);
        const QByteArray storable = test::callbackBody(payNo, orderId, 9900);
        const QByteArray body = QByteArray(storable).replace("2026-12-02T09:00:00.123Z", paidAt);
        QVERIFY(body != storable);
        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult result = test::postCallback(m_service->port(), body);
        QCOMPARE(result.status, 400);
        QVERIFY2(QString::fromUtf8(result.body).contains(reason), result.body.constData());
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        QCOMPARE(
            db::scalar(connection.database(),
                       QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = ?"),
                       {payNo})
                .toInt(),
            0);
        // The same callback with a time the database holds is taken, and its time stored.
        QCOMPARE(test::postCallback(m_service->port(), storable).status, 200);
        QCOMPARE(
            db::scalar(
                connection.database(),
                QStringLiteral(
                    "SELECT CAST(platform_paid_at AS CHAR) FROM pay_callback_log WHERE pay_no = ?"),
                {payNo})
                .toString(),
            QStringLiteral("2026-12-02 09:00:00.123"));
    }

    void businessRejectionsAreRecordedAndLeaveTheOrder_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<qint64>("orderId");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>(
            "stored"); // the callback's status: an unknown order may still arrive
        QTest::newRow("unknown order")
            << test::callbackBody("P-UNKNOWN", 999999, 9900) << qint64(999999)
            << QStringLiteral("unknown_order") << QStringLiteral("UNMATCHED");
        QTest::newRow("amount mismatch")
            << test::callbackBody("P-AMOUNT", 1002, 9800) << qint64(1002)
            << QStringLiteral("amount_mismatch") << QStringLiteral("REJECTED");
        QTest::newRow("currency mismatch")
            << test::callbackBody("P-CUR", 1003, 9900, QStringLiteral("USD")) << qint64(1003)
            << QStringLiteral("currency_mismatch") << QStringLiteral("REJECTED");
        QTest::newRow("closed order")
            << test::callbackBody("P-CLOSED", 1019, 9900) << qint64(1019)
            << QStringLiteral("order_closed") << QStringLiteral("REJECTED");
    }

    void businessRejectionsAreRecordedAndLeaveTheOrder()
    {
        QFETCH(QByteArray, body);
        QFETCH(qint64, orderId);
        QFETCH(QString, reason);
        QFETCH(QString, stored);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const QString statusBefore =
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"), {orderId})
                .toString();
        const test::HttpResult result = test::postCallback(m_service->port(), body);
        QCOMPARE(result.status, 200);
        const QJsonObject answer = QJsonDocument::fromJson(result.body).object();
        QCOMPARE(answer.value(QStringLiteral("outcome")).toString(), QStringLiteral("rejected"));
        QCOMPARE(answer.value(QStringLiteral("reason")).toString(), reason);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"), {orderId})
                     .toString(),
                 statusBefore);
        QCOMPARE(test::sideEffectsOf(db, orderId).coupons, 0);
        QCOMPARE(
            db::scalar(db,
                       QStringLiteral(
                           "SELECT reason FROM pay_callback_log WHERE order_id = ? AND status = ?"),
                       {orderId, stored})
                .toString(),
            reason);
        QCOMPARE(db::scalar(db,
                            QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE order_id = "
                                           "? AND accepted = 0 AND reason = ?"),
                            {orderId, reason})
                     .toInt(),
                 1);
    }

    void nonSuccessIsRecordedOnlyThenSuccessPays()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const test::HttpResult waiting = test::postCallback(
            m_service->port(), test::callbackBody("P-WAIT", 1004, 9900, QStringLiteral("CNY"),
                                                  QStringLiteral("WAIT_BUYER_PAY")));
        QCOMPARE(waiting.status, 200);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1004")).toString(),
            QStringLiteral("PENDING"));
        QCOMPARE(db::scalar(db, QStringLiteral(
                                    "SELECT status FROM pay_callback_log WHERE pay_no = 'P-WAIT'"))
                     .toString(),
                 QStringLiteral("IGNORED"));
        // The same payment's SUCCESS notice is not a conflict: it supersedes the notice.
        const test::HttpResult success =
            test::postCallback(m_service->port(), test::callbackBody("P-WAIT", 1004, 9900));
        QCOMPARE(success.status, 200);
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = 1004")).toString(),
            QStringLiteral("PAID"));
        QCOMPARE(test::sideEffectsOf(db, 1004).coupons, 2);
    }

    void replayGetsTheFirstAnswerAndConflictGets409()
    {
        const QByteArray body = test::callbackBody("P-REPLAY", 1005, 9900);
        const test::HttpResult first = test::postCallback(m_service->port(), body);
        QCOMPARE(first.status, 200);
        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult again = test::postCallback(m_service->port(), body);
        QCOMPARE(again.status, 200);
        QCOMPARE(again.body, first.body);
        const test::HttpResult different =
            test::postCallback(m_service->port(), test::callbackBody("P-REPLAY", 1005, 100));
        QCOMPARE(different.status, 409);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    void hostileStringsAreStoredExactly_data()
    {
        QTest::addColumn<QByteArray>("payNo");
        QTest::newRow("sql metacharacters") << QByteArray("P'; DROP TABLE orders; -- \\\" `x` %_");
        QTest::newRow("chinese and emoji") << QByteArray("微信支付-订单🧧-42");
        QTest::newRow("trailing space") << QByteArray("P-SPACE ");
        QTest::newRow("case differs") << QByteArray("p-space");
        QTest::newRow("64 cjk") << QString(64, QChar(0x6B3E)).toUtf8();
    }

    void hostileStringsAreStoredExactly()
    {
        QFETCH(QByteArray, payNo);
        static qint64 orderId = 1010;
        ++orderId;
        const test::HttpResult result =
            test::postCallback(m_service->port(), test::callbackBody(payNo, orderId, 9900));
        QCOMPARE(result.status, 200);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(
            db::scalar(db, QStringLiteral("SELECT pay_no FROM pay_callback_log WHERE order_id = ?"),
                       {orderId})
                .toByteArray(),
            payNo);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"), {orderId})
                     .toString(),
                 QStringLiteral("PAID"));
        QVERIFY(db.tables().contains(QStringLiteral("orders")));
    }

    void healthAndMetrics()
    {
        const test::HttpResult health = test::get(m_service->port(), QStringLiteral("/healthz"));
        QCOMPARE(health.status, 200);
        const QJsonObject state = QJsonDocument::fromJson(health.body).object();
        QCOMPARE(state.value(QStringLiteral("db")).toString(), QStringLiteral("ok"));
        QCOMPARE(state.value(QStringLiteral("mode")).toString(), QStringLiteral("NORMAL"));
        QVERIFY(state.value(QStringLiteral("switch_version")).toInteger() >= 1);

        const test::HttpResult metrics = test::get(m_service->port(), QStringLiteral("/metrics"));
        QCOMPARE(metrics.status, 200);
        QVERIFY2(metrics.body.contains("payops_callbacks_total{outcome=\"unauthorized\"} 5"),
                 metrics.body.constData());
        QVERIFY(metrics.body.contains("payops_callbacks_total{outcome=\"too_large\"} 1"));
        QVERIFY(metrics.body.contains("payops_duplicates_suppressed_total{defence=\"replay\"} 1"));
        QVERIFY(metrics.body.contains("payops_callback_duration_seconds_count"));
        QVERIFY(metrics.body.contains("payops_mode{mode=\"NORMAL\"} 1"));
        QVERIFY(metrics.body.contains("payops_backlog_recorded 0"));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<test::CallbackdProcess> m_service;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdContract)
#include "tst_callbackd_contract.moc"
