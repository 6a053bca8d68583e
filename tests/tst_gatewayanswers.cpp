// What a gateway takes as final from the team's handler, and what it answers a platform from a
// stored row: pure logic, no server.
#include "domain/callback/gatewayforward.h"
#include "domain/callback/platformreply.h"
#include "testmain.h"

#include <QTest>

using namespace payops;

namespace {

CallbackRequest paymentOf(const QByteArray &payNo, qint64 amountFen, WireFormat wire)
{
    CallbackRequest request;
    request.payNo = payNo;
    request.orderId = 1001;
    request.amountFen = amountFen;
    request.currency = QStringLiteral("CNY");
    request.channel = QStringLiteral("alipay");
    request.tradeStatus = QStringLiteral("SUCCESS");
    request.wire = wire;
    return request;
}

StoredCallback rowOf(const CallbackRequest &request, const QString &status, int responseCode,
                     const QByteArray &responseBody)
{
    StoredCallback stored;
    stored.id = 7;
    stored.status = status;
    stored.content = request;
    stored.responseCode = responseCode;
    stored.responseBody = responseBody;
    return stored;
}

} // namespace

class TestGatewayAnswers final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void platformSuccess_data()
    {
        QTest::addColumn<WireFormat>("wire");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("final");
        // Alipay retries unless the body is "success": a handler that says "fail" says it with
        // a 200, and the gateway must forward the platform's retry.
        QTest::newRow("alipay 200 fail")
            << WireFormat::Alipay << 200 << QByteArray("fail") << false;
        QTest::newRow("alipay 200 success")
            << WireFormat::Alipay << 200 << QByteArray("success") << true;
        QTest::newRow("alipay 200 success, newline")
            << WireFormat::Alipay << 200 << QByteArray("success\n") << true;
        QTest::newRow("alipay 200 empty") << WireFormat::Alipay << 200 << QByteArray() << false;
        QTest::newRow("alipay 500 success")
            << WireFormat::Alipay << 500 << QByteArray("success") << false;
        QTest::newRow("wechatpay 204") << WireFormat::WechatPay << 204 << QByteArray() << true;
        QTest::newRow("wechatpay 200 FAIL json")
            << WireFormat::WechatPay << 200 << QByteArray(R"({"code":"FAIL"})") << true;
        QTest::newRow("wechatpay 500")
            << WireFormat::WechatPay << 500 << QByteArray(R"({"code":"FAIL"})") << false;
        QTest::newRow("payops 200") << WireFormat::Payops << 200 << QByteArray("{}") << true;
        QTest::newRow("payops 302") << WireFormat::Payops << 302 << QByteArray() << false;
        QTest::newRow("payops 409") << WireFormat::Payops << 409 << QByteArray() << false;
    }
    void platformSuccess()
    {
        QFETCH(WireFormat, wire);
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(bool, final);
        QCOMPARE(isPlatformSuccess(wire, status, body), final);
    }

    // A row with the upstream's final answer gives it back as the upstream gave it.
    void aFinalRowIsReplayedVerbatim()
    {
        const CallbackRequest request = paymentOf("GW-1", 9900, WireFormat::Alipay);
        const auto answer =
            answerFromRow(rowOf(request, QStringLiteral("FORWARDED"), 200, "success"), request);
        QVERIFY(answer);
        QVERIFY(answer->verbatim);
        QCOMPARE(answer->httpStatus, 200);
        QCOMPARE(answer->body, QByteArray("success"));
        QCOMPARE(answer->contentType, QByteArray("text/plain; charset=utf-8"));
        QCOMPARE(answer->outcome, Outcome::Replayed);
        QCOMPARE(answer->suppressedBy, Defence::Replay);
    }

    // The HTTP layer renders every answer through platformReply: a verbatim one passes as it is,
    // in every format (WeChat Pay's own success would otherwise lose the upstream's body).
    void aVerbatimAnswerPassesUnchanged()
    {
        const CallbackAnswer upstream =
            platformAnswer(201, "handled", "text/plain", Outcome::Processed);
        for (const WireFormat wire :
             {WireFormat::Payops, WireFormat::WechatPay, WireFormat::Alipay}) {
            const PlatformReply reply = platformReply(wire, upstream);
            QCOMPARE(reply.status, 201);
            QCOMPARE(reply.body, QByteArray("handled"));
            QCOMPARE(reply.contentType, QByteArray("text/plain"));
        }
    }

    // No final answer yet: the delivery is forwarded (nullopt), whether recorded or failed.
    void anOpenRowIsForwardedAgain()
    {
        const CallbackRequest request = paymentOf("GW-2", 9900, WireFormat::WechatPay);
        for (const QString &status : {QStringLiteral("RECORDED"), QStringLiteral("FORWARDING")})
            QVERIFY2(!answerFromRow(rowOf(request, status, 200, {}), request), qPrintable(status));
        QVERIFY(!holdsFinalAnswer(rowOf(request, QStringLiteral("FORWARDING"), 200, {})));
        QVERIFY(holdsFinalAnswer(rowOf(request, QStringLiteral("FORWARDED"), 200, {})));
    }

    // Another amount under a pay_no already taken is a 409 in the platform's own format, final
    // or not.
    void differentContentIsAConflict_data()
    {
        QTest::addColumn<QString>("status");
        QTest::newRow("forwarded") << QStringLiteral("FORWARDED");
        QTest::newRow("forwarding") << QStringLiteral("FORWARDING");
    }
    void differentContentIsAConflict()
    {
        QFETCH(QString, status);
        const CallbackRequest first = paymentOf("GW-3", 9900, WireFormat::Alipay);
        const auto alipay = answerFromRow(rowOf(first, status, 200, "success"),
                                          paymentOf("GW-3", 1, WireFormat::Alipay));
        QVERIFY(alipay);
        QCOMPARE(alipay->httpStatus, 409);
        QCOMPARE(alipay->body, QByteArray("fail"));
        QCOMPARE(alipay->outcome, Outcome::Conflict);
        const auto wechat = answerFromRow(rowOf(first, status, 200, {}),
                                          paymentOf("GW-3", 1, WireFormat::WechatPay));
        QVERIFY(wechat);
        QCOMPARE(wechat->httpStatus, 409);
        QVERIFY(wechat->body.contains("\"code\":\"FAIL\""));
    }
};

PAYOPS_TEST_MAIN_CORE(TestGatewayAnswers)
#include "tst_gatewayanswers.moc"
