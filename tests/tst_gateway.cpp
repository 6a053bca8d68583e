// payops-callbackd in gateway mode (--upstream) in front of a counting upstream, with real
// processes, real HTTP and a real MariaDB: each callback is forwarded exactly once, unchanged,
// and the platform gets the upstream's answer. The gateways connect as an account holding only
// payops_endpoint, the drains as one holding only payops_operator.
#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/callbacktrace.h"
#include "domain/callback/signature.h"
#include "rawhttp.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

using namespace payops;
using namespace std::chrono_literals;

namespace {

QByteArray payNoOf(const char *prefix, int i)
{
    return QByteArray(prefix) + QByteArray::number(i);
}

QByteArray bodyOf(const QByteArray &payNo, int i)
{
    return test::callbackBody(payNo, 1001 + i, 9900);
}

QString statusOf(const QSqlDatabase &db, const QByteArray &payNo)
{
    return db::scalar(db, QStringLiteral("SELECT status FROM pay_callback_log WHERE pay_no = ?"),
                      {payNo})
        .toString();
}

int countOf(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toInt();
}

// Runs `send(i)` for i in [0, count) on `clients` threads; `done` counts the finished ones.
void inParallel(int count, int clients, const std::function<void(int)> &send,
                std::atomic<int> *done = nullptr)
{
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&] {
            for (int i = next++; i < count; i = next++) {
                send(i);
                if (done)
                    ++*done;
            }
        });
    for (std::thread &thread : threads)
        thread.join();
}

// A handler that checks the signature's time as an SDK does, against its own clock: older than
// 60 s (an SDK's 300 s, shortened for the tests) is refused 401.
test::CannedAnswer refusingOldSignatures(const test::CountingUpstream::Request &request)
{
    test::CannedAnswer answer;
    const qint64 signedAt = request.header("X-Payops-Timestamp").toLongLong();
    if (QDateTime::currentSecsSinceEpoch() - signedAt > 60)
        answer.status = 401;
    return answer;
}

} // namespace

class TestGateway final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_operator = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
    }

    // Two deliveries of each pay_no 40 ms apart, one to each of two gateways, while the
    // upstream takes 60 ms to answer: the later finds the earlier's claim and is answered 503
    // without a forward, so each pay_no is forwarded once; the platform's retry gets the
    // upstream's answer from the row.
    void twoGatewaysForwardEachPayNoOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwonce"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CountingUpstream upstream(0, {}, 60);
        const auto a = gateway(scratch, upstream.url(), QStringLiteral("GA"));
        const auto b = gateway(scratch, upstream.url(), QStringLiteral("GB"));

        constexpr int kPayNos = 200;
        std::vector<test::HttpResult> first(kPayNos);
        std::vector<test::HttpResult> second(kPayNos);
        inParallel(kPayNos, 8, [&](int i) {
            const QByteArray body = bodyOf(payNoOf("GW-", i), i);
            std::thread earlier([&] { first[size_t(i)] = test::postCallback(a->port(), body); });
            std::this_thread::sleep_for(40ms);
            second[size_t(i)] = test::postCallback(b->port(), body);
            earlier.join();
        });

        QCOMPARE(upstream.count(), kPayNos);
        const QHash<QByteArray, int> forwards = upstream.countByPayNo();
        int busy = 0;
        for (int i = 0; i < kPayNos; ++i) {
            const QByteArray payNo = payNoOf("GW-", i);
            QCOMPARE(forwards.value(payNo), 1);
            // Whichever claimed first forwarded (on a loaded machine the later may win); the
            // other came while the forward was out (503) or after it was stored (200), and the
            // platform's retry of a 503 gets the stored answer.
            QVERIFY2(first[size_t(i)].status == 200 || second[size_t(i)].status == 200,
                     payNo.constData());
            for (auto [answers, port] : {std::pair{&first, a->port()}, {&second, b->port()}}) {
                test::HttpResult &answer = (*answers)[size_t(i)];
                if (answer.status == 503) {
                    ++busy;
                    answer = test::postCallback(port, bodyOf(payNo, i));
                }
                QCOMPARE(answer.status, 200);
                QCOMPARE(answer.body, upstream.answerBodyFor(payNo));
            }
        }
        QVERIFY2(busy > 0, "no delivery came while another's forward was out");
        QCOMPARE(upstream.count(), kPayNos);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE gateway "
                                            "= 1 AND status = 'FORWARDED' AND forwards = 1 AND "
                                            "upstream_status = 200 AND forwarded_at IS NOT NULL")),
                 kPayNos);
        // One trace per forward, with its times in order; the waiting deliveries forwarded none.
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace WHERE "
                                            "forwarded_at IS NOT NULL AND upstream_status = 200 "
                                            "AND upstream_answered_at >= forwarded_at")),
                 kPayNos);
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace")),
                 2 * kPayNos + busy);
        // The heartbeat says what each instance is; whichever forwarded found the upstream ok.
        QSqlQuery states = db::exec(db, QStringLiteral("SELECT COUNT(*), SUM(upstream_state = "
                                                       "'ok'), SUM(upstream_state = 'failing') "
                                                       "FROM callback_instance WHERE mode = "
                                                       "'gateway'"));
        QVERIFY(states.next());
        QCOMPARE(states.value(0).toInt(), 2);
        QVERIFY(states.value(1).toInt() >= 1);
        QCOMPARE(states.value(2).toInt(), 0);
        const QString metrics =
            QString::fromUtf8(test::get(a->port(), QStringLiteral("/metrics")).body);
        QVERIFY2(metrics.contains(QStringLiteral("payops_upstream_requests_total{status=\"200\"}")),
                 qPrintable(metrics));
        QVERIFY(metrics.contains(QStringLiteral("payops_upstream_duration_seconds_count ")));
    }

    // The team's handler gets the request as the platform sent it, byte for byte, with its
    // headers, plus the four the gateway adds; the platform gets the handler's answer as it was.
    void theForwardIsUnchanged()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwbytes"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CannedAnswer plain;
        plain.body = "accepted %PAY_NO%";
        plain.contentType = "text/plain; charset=utf-8";
        test::CountingUpstream upstream(0, plain);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GX"));

        const QByteArray payNo = "GW-BYTES-1";
        const QByteArray body = bodyOf(payNo, 0);
        const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
        const QByteArray signature = signatureHeader(test::testSecret(), timestamp, body);
        const test::HttpResult answer =
            test::postRaw(service->port(), body,
                          {{"X-Payops-Timestamp", QByteArray::number(timestamp)},
                           {"X-Payops-Signature", signature}});
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.body, QByteArray("accepted GW-BYTES-1"));
        QCOMPARE(answer.contentType, QByteArray("text/plain; charset=utf-8"));

        const QList<test::CountingUpstream::Request> received = upstream.received();
        QCOMPARE(received.size(), 1);
        const test::CountingUpstream::Request &forward = received.first();
        QCOMPARE(forward.body, body);
        QCOMPARE(forward.header("Content-Type"), QByteArray("application/json"));
        QCOMPARE(forward.header("X-Payops-Timestamp"), QByteArray::number(timestamp));
        QCOMPARE(forward.header("X-Payops-Signature"), signature);
        QCOMPARE(forward.header("X-Payops-Pay-No"), payNo);
        QCOMPARE(forward.header("X-Payops-Order-Id"), QByteArray("1001"));
        QCOMPARE(forward.header("X-Payops-Delivery"), QByteArray("1"));
        QCOMPARE(forward.header("Idempotency-Key"), payNo);
        QCOMPARE(forward.header("Accept"), QByteArray()); // nothing of the client's own

        // A resend gets the first answer and is not forwarded; another amount is a conflict.
        const test::HttpResult again = test::postCallback(service->port(), body);
        QCOMPARE(again.status, 200);
        QCOMPARE(again.body, QByteArray("accepted GW-BYTES-1"));
        QCOMPARE(test::postCallback(service->port(), test::callbackBody(payNo, 1001, 1)).status,
                 409);
        QCOMPARE(upstream.count(), 1);
    }

    // A client's header holding a bare CR is not passed on: at a handler that reads CR as the
    // end of a line it would start a header of the client's choosing, before payops's own. A
    // callback sent without a Content-Type reaches the upstream without one, not with curl's
    // form type.
    void headersArePassedOnAsSentOrNotAtAll()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwheaders"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 2);
        test::CountingUpstream upstream;
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GC"));
        const auto send = [&service](const QByteArray &payNo, int i,
                                     const QByteArray &contentType) {
            const QByteArray body = bodyOf(payNo, i);
            const qint64 now = QDateTime::currentSecsSinceEpoch();
            const int fd = test::connectFrom("127.0.0.1", service->port(), 5000);
            const QByteArray request =
                "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\n" + contentType +
                "X-Payops-Timestamp: " + QByteArray::number(now) +
                "\r\nX-Payops-Signature: " + signatureHeader(test::testSecret(), now, body) +
                "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
            const bool sent = fd >= 0 && test::sendAll(fd, request);
            const auto responses =
                sent ? test::readResponses(fd, 1, 10000) : QList<test::RawResponse>();
            test::closeSocket(fd);
            return responses.isEmpty() ? 0 : responses.first().status;
        };

        const int forged =
            send("GW-CR-1", 0, "Content-Type: application/json\rIdempotency-Key: forged\r\n");
        // libmicrohttpd may refuse the line itself; taken, nothing of it goes on.
        if (forged == 200) {
            QCOMPARE(upstream.count(), 1);
            const test::CountingUpstream::Request forward = upstream.received().first();
            QCOMPARE(forward.header("Idempotency-Key"), QByteArray("GW-CR-1"));
            for (const auto &[name, value] : forward.headers)
                QVERIFY2(!value.contains('\r') && !value.contains("forged"),
                         (name + ": " + value).constData());
        } else {
            QVERIFY2(forged == 400, qPrintable(QString::number(forged)));
            QCOMPARE(upstream.count(), 0);
        }

        const int before = upstream.count();
        QCOMPARE(send("GW-UNTYPED-1", 1, QByteArray()), 200);
        QCOMPARE(upstream.count(), before + 1);
        const test::CountingUpstream::Request untyped = upstream.received().last();
        QCOMPARE(untyped.payNo(), QByteArray("GW-UNTYPED-1"));
        QCOMPARE(untyped.header("Content-Type"), QByteArray());
        QCOMPARE(service->terminate(), 0);
    }

    // An upstream answering a status HTTP does not have (600) is not passed to the platform:
    // it hears 502 and retries, and the row keeps why.
    void aStatusHttpDoesNotHaveIsNotPassedOn()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwstatus"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CannedAnswer odd;
        odd.status = 600;
        test::CountingUpstream upstream(0, odd);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GS"));
        const test::HttpResult answer = test::postCallback(service->port(), bodyOf("GW-600-1", 0));
        QCOMPARE(answer.status, 502);
        QCOMPARE(upstream.count(), 1);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(
            db::scalar(root.database(),
                       QStringLiteral("SELECT CONCAT(status, ' ', upstream_status IS NULL, ' ', "
                                      "upstream_error) FROM pay_callback_log"))
                .toString(),
            QStringLiteral("FORWARDING 1 answered status 600, which is not HTTP's"));
        QCOMPARE(service->terminate(), 0);
    }

    // A retry after the handler refused forwards what the platform sent last, not its first
    // delivery: a handler that refuses a signature older than five minutes (WeChat Pay's SDKs
    // do) takes the retry. The first was signed 250 s in the past, as if the handler had been
    // down since.
    void aRetryForwardsTheLatestDelivery()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwfresh"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        // The handler checks the signature's time as an SDK does, against its own clock.
        test::CountingUpstream upstream(refusingOldSignatures);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GL"));
        const QByteArray body = bodyOf("GW-FRESH-1", 0);
        QCOMPARE(test::postCallback(service->port(), body, now - 250).status, 401);
        const test::HttpResult retry = test::postCallback(service->port(), body, now);
        QCOMPARE(retry.status, 200);
        QCOMPARE(upstream.count(), 2);
        const test::CountingUpstream::Request forwarded = upstream.received().last();
        QCOMPARE(forwarded.header("X-Payops-Timestamp"), QByteArray::number(now));
        QCOMPARE(forwarded.header("X-Payops-Signature"),
                 signatureHeader(test::testSecret(), now, body));
        QCOMPARE(forwarded.header("X-Payops-Delivery"), QByteArray("2"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        QCOMPARE(statusOf(root.database(), "GW-FRESH-1"), QStringLiteral("FORWARDED"));
        QVERIFY(
            db::scalar(root.database(), QStringLiteral("SELECT raw_headers FROM pay_callback_log"))
                .toString()
                .contains(QString::number(now)));
        QCOMPARE(service->terminate(), 0);
    }

    // Held by the platform's retries (--hold-by-retries): while the switch is RECORD_ONLY a
    // delivery is recorded and answered 503, and after the hold the platform's next delivery is
    // what reaches the handler, signed when it was sent. The first was signed 250 s before the
    // retry, as if the hold had lasted that long; the handler refuses signatures older than 60 s,
    // as an SDK refuses older than 300. Without the option the hold answers success and the
    // platform sends nothing more.
    void aHoldByRetriesForwardsTheRetryAfterIt()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwhold"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        test::CountingUpstream upstream(refusingOldSignatures);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GHR"),
                                     {QStringLiteral("--hold-by-retries"), QStringLiteral("pay")});
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("hold"));
        const QByteArray body = bodyOf("GW-HOLD-1", 0);
        QCOMPARE(test::postCallback(service->port(), body, now - 250).status, 503);
        QCOMPARE(statusOf(db, "GW-HOLD-1"), QStringLiteral("RECORDED"));
        QCOMPARE(upstream.count(), 0);
        flipSwitch(db, CallbackMode::Normal, QStringLiteral("released"));

        QCOMPARE(test::postCallback(service->port(), body, now).status, 200);
        QCOMPARE(upstream.count(), 1);
        QCOMPARE(upstream.received().last().header("X-Payops-Timestamp"), QByteArray::number(now));
        QCOMPARE(statusOf(db, "GW-HOLD-1"), QStringLiteral("FORWARDED"));
        QCOMPARE(service->terminate(), 0);
    }

    // With the upstream down the platform gets a failure, so it retries, and the row keeps why;
    // its retry once the upstream is back forwards once.
    void upstreamDownThenUp()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwdown"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        int port = 0;
        {
            const test::CountingUpstream probe;
            port = probe.port(); // closed again: nothing listens there now
        }
        // Credentials in the URL never reach callback_instance or /healthz.
        const QString url = QStringLiteral("http://team:pw@127.0.0.1:%1/notify").arg(port);
        const QString shown = QStringLiteral("http://127.0.0.1:%1/notify").arg(port);
        const auto service = gateway(scratch, url, QStringLiteral("GD"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();

        const QByteArray payNo = "GW-DOWN-1";
        const test::HttpResult down = test::postCallback(service->port(), bodyOf(payNo, 0));
        QCOMPARE(down.status, 502);
        QCOMPARE(
            QJsonDocument::fromJson(down.body).object().value(QStringLiteral("code")).toString(),
            QStringLiteral("FAIL"));
        QSqlQuery row = db::exec(db,
                                 QStringLiteral("SELECT status, upstream_status IS NULL, "
                                                "upstream_error, forwards, gateway FROM "
                                                "pay_callback_log WHERE pay_no = ?"),
                                 {payNo});
        QVERIFY(row.next());
        QCOMPARE(row.value(0).toString(), QStringLiteral("FORWARDING"));
        QVERIFY(row.value(1).toBool());
        QVERIFY(!row.value(2).toString().isEmpty());
        QCOMPARE(row.value(3).toInt(), 1);
        QCOMPARE(row.value(4).toInt(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(
            db::scalar(db, QStringLiteral("SELECT upstream_state FROM callback_instance WHERE id "
                                          "= 'GD'"))
                .toString(),
            QStringLiteral("failing"), 5000);
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT CONCAT(mode, ' ', upstream) FROM "
                                               "callback_instance WHERE id = 'GD'"))
                     .toString(),
                 QStringLiteral("gateway ") + shown);
        const QJsonObject health =
            QJsonDocument::fromJson(test::get(service->port(), QStringLiteral("/healthz")).body)
                .object();
        QCOMPARE(health.value(QStringLiteral("instance_mode")).toString(),
                 QStringLiteral("gateway"));
        QCOMPARE(health.value(QStringLiteral("upstream")).toString(), shown);
        QVERIFY(test::get(service->port(), QStringLiteral("/metrics"))
                    .body.contains("payops_upstream_requests_total{status=\"error\"} 1"));

        const test::CountingUpstream upstream(port);
        const test::HttpResult retried = test::postCallback(service->port(), bodyOf(payNo, 0));
        QCOMPARE(retried.status, 200);
        QCOMPARE(retried.body, upstream.answerBodyFor(payNo));
        QCOMPARE(upstream.count(), 1);
        QCOMPARE(upstream.received().first().header("X-Payops-Delivery"), QByteArray("2"));
        QCOMPARE(statusOf(db, payNo), QStringLiteral("FORWARDED"));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT CONCAT(forwards, ' ', upstream_status, "
                                               "' [', upstream_error, ']') FROM pay_callback_log"))
                     .toString(),
                 QStringLiteral("2 200 []"));
        QTRY_COMPARE_WITH_TIMEOUT(
            db::scalar(db, QStringLiteral("SELECT upstream_state FROM callback_instance WHERE id "
                                          "= 'GD'"))
                .toString(),
            QStringLiteral("ok"), 5000);
    }

    // An answer that is not the platform's success (here a 500) is passed on as it is, so the
    // platform retries; the row keeps it, and the retry forwards again.
    void aRefusalIsPassedOnAndForwardedAgain()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwrefused"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CannedAnswer busy;
        busy.status = 500;
        busy.body = R"({"code":"FAIL","message":"busy %PAY_NO%"})";
        test::CountingUpstream upstream(0, busy);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GF"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();

        const QByteArray payNo = "GW-REFUSED-1";
        for (int delivery = 1; delivery <= 2; ++delivery) {
            const test::HttpResult answer = test::postCallback(service->port(), bodyOf(payNo, 0));
            QCOMPARE(answer.status, 500);
            QCOMPARE(answer.body, upstream.answerBodyFor(payNo));
            QCOMPARE(upstream.count(), delivery);
            QCOMPARE(upstream.received().last().header("X-Payops-Delivery"),
                     QByteArray::number(delivery));
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT CONCAT(status, ' ', forwards, ' ', "
                                                   "upstream_status, ' ', upstream_error) FROM "
                                                   "pay_callback_log"))
                         .toString(),
                     QStringLiteral("FORWARDING %1 500 answered 500, not the platform's success")
                         .arg(delivery));
        }
    }

    // An answer past 1 MiB (a URL that serves a file, a handler that never stops writing) is
    // not read on, so that no worker holds it in memory: the forward counts as unanswered, the
    // platform hears 502 and retries, and the next delivery forwards again.
    void anAnswerPastOneMebibyteIsNotReadOn()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwhuge"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CannedAnswer huge;
        huge.body = QByteArray(8 * 1024 * 1024, 'x');
        test::CountingUpstream upstream(0, huge);
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GH"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();

        const QByteArray payNo = "GW-HUGE-1";
        for (int delivery = 1; delivery <= 2; ++delivery) {
            const test::HttpResult answer = test::postCallback(service->port(), bodyOf(payNo, 0));
            QCOMPARE(answer.status, 502);
            QCOMPARE(upstream.count(), delivery);
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT CONCAT(status, ' ', forwards, ' ', "
                                                   "upstream_status IS NULL, ' ', upstream_error) "
                                                   "FROM pay_callback_log"))
                         .toString(),
                     QStringLiteral("FORWARDING %1 1 the answer ran past 1048576 bytes and was "
                                    "not read on")
                         .arg(delivery));
        }
    }

    // In RECORD_ONLY a gateway records and answers success without forwarding; the drain to
    // the upstream, run by an operator, forwards each once and skips a pay_no whose lock live
    // traffic holds; a second drain forwards nothing. The handler's drain leaves these rows be.
    void recordOnlyThenDrain()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwdrain"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CountingUpstream upstream;
        const auto service = gateway(scratch, upstream.url(), QStringLiteral("GR"));
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        const FlipResult flip = flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("test"));
        QVERIFY(waitForAcknowledgement(db, flip.after.version, 5000).first().acknowledged);

        constexpr int kPayNos = 20;
        for (int i = 0; i < kPayNos; ++i) {
            const test::HttpResult answer =
                test::postCallback(service->port(), bodyOf(payNoOf("GW-REC-", i), i));
            QCOMPARE(answer.status, 200);
            QCOMPARE(QJsonDocument::fromJson(answer.body)
                         .object()
                         .value(QStringLiteral("outcome"))
                         .toString(),
                     QStringLiteral("recorded"));
        }
        QCOMPARE(upstream.count(), 0);
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                            "'RECORDED' AND gateway = 1")),
                 kPayNos);
        const test::CliRun refused =
            drainAs({QStringLiteral("--upstream"), upstream.url()}, scratch);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(QStringLiteral("RECORD_ONLY")), qPrintable(refused.err));
        flipSwitch(db, CallbackMode::Normal, QStringLiteral("test over"));

        const test::CliRun handlerDrain = drainAs({}, scratch);
        QVERIFY2(handlerDrain.exitCode == 0, qPrintable(handlerDrain.err + handlerDrain.out));
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                            "'RECORDED'")),
                 kPayNos);

        // A live gateway's claim of one row's forward, as it holds while the forward is out.
        const QByteArray busy = payNoOf("GW-REC-", 7);
        db::exec(db,
                 QStringLiteral("UPDATE pay_callback_log SET forward_claimed_until = NOW(3) + "
                                "INTERVAL 1 HOUR WHERE pay_no = ?"),
                 {busy});
        const QStringList upstreamFlags{QStringLiteral("--upstream"),    upstream.url(),
                                        QStringLiteral("--concurrency"), QStringLiteral("3"),
                                        QStringLiteral("--rate"),        QStringLiteral("100")};
        const test::CliRun first = drainAs(upstreamFlags, scratch);
        QVERIFY2(first.exitCode == 0, qPrintable(first.err + first.out));
        QVERIFY2(first.out.contains(QStringLiteral("forwarded 19, failed 0, skipped 1 of 20")),
                 qPrintable(first.out));
        QVERIFY2(first.err.contains(QStringLiteral("/s)")), qPrintable(first.err)); // progress
        QCOMPARE(upstream.count(), kPayNos - 1);
        QCOMPARE(statusOf(db, busy), QStringLiteral("RECORDED"));
        db::exec(db,
                 QStringLiteral("UPDATE pay_callback_log SET forward_claimed_until = NULL WHERE "
                                "pay_no = ?"),
                 {busy});

        const test::CliRun second = drainAs(upstreamFlags, scratch);
        QVERIFY2(second.out.contains(QStringLiteral("forwarded 1, failed 0, skipped 0 of 1")),
                 qPrintable(second.out));
        const test::CliRun third = drainAs(upstreamFlags, scratch);
        QVERIFY2(third.out.contains(QStringLiteral("forwarded 0, failed 0, skipped 0 of 0")),
                 qPrintable(third.out));
        QCOMPARE(upstream.count(), kPayNos);
        for (int count : upstream.countByPayNo())
            QCOMPARE(count, 1);
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                            "'FORWARDED' AND forwards = 1")),
                 kPayNos);
        // Two drains forwarded something: two audit entries, under the operator's account.
        QCOMPARE(db::scalar(db,
                            QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = "
                                           "'backlog.drain_upstream' AND actor = ?"),
                            {m_operator->user() + QStringLiteral("@localhost")})
                     .toInt(),
                 2);
    }

    // Once every instance acknowledged a flip to RECORD_ONLY, nothing reaches the handler: a
    // forward is claimed under the switch's shared lock, so none is claimed after the flip
    // committed, and an instance acknowledges only once each forward it claimed before has
    // ended (docs/gateway.md). A forward claimed just before the flip may still arrive after
    // its commit, never after the acknowledgement.
    void theSwitchIsABarrier()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwbarrier"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CountingUpstream upstream(0, {}, 150);
        const auto a = gateway(scratch, upstream.url(), QStringLiteral("GBA"));
        const auto b = gateway(scratch, upstream.url(), QStringLiteral("GBB"));
        db::Connection root(scratch.dsn(), QStringLiteral("operator"));
        const QSqlDatabase db = root.database();

        constexpr int kPayNos = 160;
        std::vector<int> statuses(kPayNos);
        std::atomic<int> done{0};
        std::thread storm([&] {
            inParallel(
                kPayNos, 12,
                [&](int i) {
                    statuses[size_t(i)] = test::postCallback(i % 2 ? b->port() : a->port(),
                                                             bodyOf(payNoOf("GW-BAR-", i), i))
                                              .status;
                },
                &done);
        });
        QTRY_VERIFY_WITH_TIMEOUT(done.load() >= kPayNos / 4, 60000);
        const FlipResult flip = flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("stop"));
        QVERIFY(flip.changed);
        for (const InstanceAck &ack : waitForAcknowledgement(db, flip.after.version, 5000))
            QVERIFY2(ack.acknowledged, qPrintable(ack.instance));
        const qint64 acknowledged = nowMicros();
        storm.join();

        for (int status : statuses)
            QCOMPARE(status, 200);
        const QList<test::CountingUpstream::Request> received = upstream.received();
        QVERIFY(!received.isEmpty());
        for (const test::CountingUpstream::Request &forward : received)
            QVERIFY2(forward.arrivedMicros < acknowledged,
                     qPrintable(QStringLiteral("%1 forwarded %2 us after every instance "
                                               "acknowledged the flip")
                                    .arg(QString::fromLatin1(forward.payNo()),
                                         QString::number(forward.arrivedMicros - acknowledged))));
        const int recorded = countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log "
                                                        "WHERE status = 'RECORDED'"));
        QVERIFY2(recorded > 20, "too few callbacks after the flip to prove anything");
        QCOMPARE(recorded + upstream.count(), kPayNos);
    }

    // kill -9 under load: every delivery answered 2xx has its row with the upstream's answer;
    // the platform's retries forward the rest, and a pay_no is forwarded twice only when the
    // gateway died between the upstream's answer and recording it.
    void killedUnderLoad()
    {
        test::ScratchDatabase scratch(QStringLiteral("gwkill"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CountingUpstream upstream(0, {}, 15);
        // Its claims of the forwards it had out when it died hold for its bound and margin
        // (3 + 5 s): the platform's retries meanwhile are answered 503.
        auto victim = gateway(scratch, upstream.url(), QStringLiteral("GK"),
                              {QStringLiteral("--upstream-timeout"), QStringLiteral("2"),
                               QStringLiteral("--upstream-bound"), QStringLiteral("3")});
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();

        constexpr int kPayNos = 300;
        std::vector<int> statuses(kPayNos);
        std::atomic<int> done{0};
        const int port = victim->port();
        std::thread storm([&] {
            inParallel(
                kPayNos, 8,
                [&](int i) {
                    statuses[size_t(i)] =
                        test::postCallback(port, bodyOf(payNoOf("GW-K-", i), i)).status;
                },
                &done);
        });
        QTRY_VERIFY_WITH_TIMEOUT(done.load() >= kPayNos / 3, 60000);
        QCOMPARE(::kill(pid_t(victim->pid()), SIGKILL), 0);
        storm.join();
        victim.reset();

        QHash<QByteArray, QString> atKill;
        QSqlQuery rows =
            db::exec(db, QStringLiteral("SELECT pay_no, status FROM pay_callback_log"));
        while (rows.next())
            atKill.insert(rows.value(0).toByteArray(), rows.value(1).toString());
        int answered = 0;
        for (int i = 0; i < kPayNos; ++i) {
            if (statuses[size_t(i)] / 100 != 2)
                continue;
            ++answered;
            QCOMPARE(atKill.value(payNoOf("GW-K-", i)), QStringLiteral("FORWARDED"));
        }
        QVERIFY2(answered >= kPayNos / 3 && answered < kPayNos,
                 qPrintable(QString::number(answered)));

        // The platform retries every one; a new gateway takes them.
        const auto successor = gateway(scratch, upstream.url(), QStringLiteral("GK2"));
        std::atomic<int> refused{0};
        inParallel(kPayNos, 8, [&](int i) {
            int status = 0;
            for (int attempt = 0; attempt < 60 && status != 200; ++attempt) {
                if (attempt > 0)
                    std::this_thread::sleep_for(250ms);
                status =
                    test::postCallback(successor->port(), bodyOf(payNoOf("GW-K-", i), i)).status;
                refused += status == 503;
            }
            QCOMPARE(status, 200);
        });
        const QHash<QByteArray, int> forwards = upstream.countByPayNo();
        QCOMPARE(forwards.size(), kPayNos);
        for (auto it = forwards.cbegin(); it != forwards.cend(); ++it) {
            QVERIFY2(it.value() == 1 ||
                         (it.value() == 2 && atKill.value(it.key()) == QLatin1String("FORWARDING")),
                     qPrintable(QStringLiteral("%1 forwarded %2 times, %3 at the kill")
                                    .arg(QString::fromLatin1(it.key()))
                                    .arg(it.value())
                                    .arg(atKill.value(it.key()))));
        }
        QCOMPARE(countOf(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                            "'FORWARDED'")),
                 kPayNos);
        // A row claimed when the gateway died was not forwarded again before its claim ran out.
        QVERIFY2(refused > 0 || !atKill.values().contains(QStringLiteral("FORWARDING")),
                 "a dead gateway's claim did not hold");
    }

    // https to the upstream: verified against --upstream-ca; a certificate the system's store
    // does not vouch for is refused, and nothing is forwarded.
    void httpsUpstream()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString cert = dir.filePath(QStringLiteral("cert.pem"));
        const QString key = dir.filePath(QStringLiteral("key.pem"));
        QProcess openssl;
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                       QStringLiteral("rsa:2048"), QStringLiteral("-nodes"),
                       QStringLiteral("-keyout"), key, QStringLiteral("-out"), cert,
                       QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-subj"),
                       QStringLiteral("/CN=127.0.0.1"), QStringLiteral("-addext"),
                       QStringLiteral("subjectAltName=IP:127.0.0.1")});
        QVERIFY(openssl.waitForFinished(30000));
        QCOMPARE(openssl.exitCode(), 0);

        QProcess server;
        server.start(QStringLiteral("python3"),
                     {QStringLiteral("-c"), QString::fromLatin1(kHttpsUpstream), cert, key});
        QVERIFY(server.waitForReadyRead(10000));
        const int port = server.readLine().trimmed().toInt();
        QVERIFY(port > 0);
        const QString url = QStringLiteral("https://127.0.0.1:%1/notify").arg(port);

        test::ScratchDatabase scratch(QStringLiteral("gwtls"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        db::Connection root(scratch.dsn(), QStringLiteral("root"));
        const QSqlDatabase db = root.database();
        {
            const auto verified = gateway(scratch, url, QStringLiteral("GT"),
                                          {QStringLiteral("--upstream-ca"), cert});
            const test::HttpResult answer =
                test::postCallback(verified->port(), bodyOf("GW-TLS-1", 0));
            QCOMPARE(answer.status, 200);
            QCOMPARE(answer.body, QByteArray(R"({"code":"SUCCESS","tls":true})"));
        }
        const auto unverified = gateway(scratch, url, QStringLiteral("GU"));
        QCOMPARE(test::postCallback(unverified->port(), bodyOf("GW-TLS-2", 1)).status, 502);
        QCOMPARE(statusOf(db, "GW-TLS-2"), QStringLiteral("FORWARDING"));
        const QString why =
            db::scalar(db, QStringLiteral("SELECT upstream_error FROM pay_callback_log WHERE "
                                          "pay_no = 'GW-TLS-2'"))
                .toString();
        QVERIFY2(why.contains(QStringLiteral("certificate")), qPrintable(why));
        server.kill();
        server.waitForFinished();
        QCOMPARE(statusOf(db, "GW-TLS-1"), QStringLiteral("FORWARDED"));
    }

private:
    std::unique_ptr<test::CallbackdProcess> gateway(const test::ScratchDatabase &scratch,
                                                    const QString &url, const QString &instance,
                                                    const QStringList &extra = {})
    {
        return std::make_unique<test::CallbackdProcess>(
            m_endpoint->dsnFor(scratch.name()), QString(), instance,
            QStringList{QStringLiteral("--upstream"), url} + extra);
    }

    test::CliRun drainAs(const QStringList &arguments, const test::ScratchDatabase &scratch)
    {
        return test::runCli(QStringList{QStringLiteral("drain"), QStringLiteral("--db"),
                                        m_operator->dsnFor(scratch.name()).toString()} +
                                arguments,
                            {{QStringLiteral("PAYOPS_DB_PASSWORD"), m_operator->password()}});
    }

    // A one-file https upstream: prints its port, answers every POST with a fixed success.
    static constexpr const char *kHttpsUpstream = R"(
import http.server, ssl, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length', 0)))
        body = b'{"code":"SUCCESS","tls":true}'
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
)";

    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<test::ScratchAccount> m_operator;
};

PAYOPS_TEST_MAIN_CORE(TestGateway)
#include "tst_gateway.moc"
