#include "service/callbackrequest.h"
#include "service/signature.h"
#include "testmain.h"

#include <QMessageAuthenticationCode>

using namespace payops;

class TestCallbackRequest final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesTheContract()
    {
        QString error;
        const QByteArray body = "{\"pay_no\":\"微信-4200 x;--\",\"order_id\":1001,\"amount_fen\":9900,\"currency\":\"cny\","
                                "\"channel\":\"wechat\",\"trade_status\":\"SUCCESS\",\"paid_at\":\"2026-12-02T09:00:00.123Z\"}";
        const auto request = CallbackRequest::parse(body, &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo, QByteArray("微信-4200 x;--"));
        QCOMPARE(request->orderId, qint64(1001));
        QCOMPARE(request->amountFen, qint64(9900));
        QCOMPARE(request->currency, QStringLiteral("CNY"));
        QVERIFY(request->isSuccess());
        QCOMPARE(request->rawBody, body);
    }

    void refusesWhatTheContractDoesNot_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("mentions");
        const QByteArray ok = "\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"";
        QTest::newRow("not json") << QByteArray("pay_no=1") << QStringLiteral("not JSON");
        QTest::newRow("array") << QByteArray("[1]") << QStringLiteral("object");
        QTest::newRow("no pay_no") << QByteArray("{" + ok + "}") << QStringLiteral("pay_no is missing");
        QTest::newRow("empty pay_no") << QByteArray("{\"pay_no\":\"\"," + ok + "}") << QStringLiteral("pay_no");
        QTest::newRow("65 chars") << QByteArray("{\"pay_no\":\"" + QByteArray(65, 'p') + "\"," + ok + "}")
                                  << QStringLiteral("1 to 64");
        QTest::newRow("numeric pay_no") << QByteArray("{\"pay_no\":12," + ok + "}") << QStringLiteral("string");
        QTest::newRow("string order") << QByteArray("{\"pay_no\":\"p\",\"order_id\":\"1\",\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                      << QStringLiteral("order_id");
        QTest::newRow("zero order") << QByteArray("{\"pay_no\":\"p\",\"order_id\":0,\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                    << QStringLiteral("order_id");
        QTest::newRow("fraction") << QByteArray("{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1.5,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("amount_fen");
        QTest::newRow("negative") << QByteArray("{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":-1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("amount_fen");
        QTest::newRow("currency") << QByteArray("{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1,\"currency\":\"CN1\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("currency");
        QTest::newRow("no status") << QByteArray("{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\"}")
                                   << QStringLiteral("trade_status");
    }

    void refusesWhatTheContractDoesNot()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, mentions);
        QString error;
        QVERIFY(!CallbackRequest::parse(body, &error));
        QVERIFY2(error.contains(mentions), qPrintable(error));
    }

    void sixtyFourCharactersOfAnyScriptAreFine()
    {
        QString error;
        const QString payNo = QString(64, QChar(0x6B3E)); // 64 CJK characters, 192 UTF-8 bytes
        const QByteArray body = "{\"pay_no\":\"" + payNo.toUtf8()
                                + "\",\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}";
        const auto request = CallbackRequest::parse(body, &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo.size(), 192);
    }

    void signatures()
    {
        const QByteArray secret = "s3cret-s3cret-s3cret";
        const QByteArray body = "{\"a\":1}";
        const qint64 now = 1800000000;
        const QByteArray header = signatureHeader(secret, now, body);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), header, body, now), SignatureCheck::Valid);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), header, body + " ", now), SignatureCheck::Mismatch);
        QCOMPARE(verifySignature("other-secret-xxxxx", QByteArray::number(now), header, body, now), SignatureCheck::Mismatch);
        QCOMPARE(verifySignature(secret, QByteArray::number(now - 301), signatureHeader(secret, now - 301, body), body, now),
                 SignatureCheck::Stale);
        QCOMPARE(verifySignature(secret, QByteArray::number(now + 301), signatureHeader(secret, now + 301, body), body, now),
                 SignatureCheck::Stale);
        QCOMPARE(verifySignature(secret, QByteArray::number(now - 300), signatureHeader(secret, now - 300, body), body, now),
                 SignatureCheck::Valid);
        QCOMPARE(verifySignature(secret, QByteArray(), header, body, now), SignatureCheck::Missing);
        QCOMPARE(verifySignature(secret, "soon", header, body, now), SignatureCheck::Malformed);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), "v2=" + header.mid(3), body, now), SignatureCheck::Malformed);
        // The known answer, so that a platform can check its signer against ours.
        QCOMPARE(signatureHeader("key", 1, "body"),
                 QByteArray("v1=") + QMessageAuthenticationCode::hash("1.body", "key", QCryptographicHash::Sha256).toHex());
    }
};

PAYOPS_TEST_MAIN_CORE(TestCallbackRequest)
#include "tst_callbackrequest.moc"
