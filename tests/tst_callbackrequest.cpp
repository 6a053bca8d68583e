#include "domain/callback/callbackrequest.h"
#include "domain/callback/signature.h"
#include "domain/callback/strictjson.h"
#include "testmain.h"

#include <QMessageAuthenticationCode>
#include <QRandomGenerator>

#include <limits>

using namespace payops;

namespace {

// A valid body whose members are the contract's fields with `changed` JSON in place of the
// defaults (an empty value leaves the member out), then `extra` members.
QByteArray body(const QHash<QByteArray, QByteArray> &changed = {}, const QByteArray &extra = {})
{
    const QList<QPair<QByteArray, QByteArray>> defaults{{"pay_no", "\"p\""},
                                                        {"order_id", "1"},
                                                        {"amount_fen", "1"},
                                                        {"currency", "\"CNY\""},
                                                        {"trade_status", "\"SUCCESS\""}};
    QByteArrayList members;
    for (const auto &[name, json] : defaults) {
        const QByteArray value = changed.value(name, json);
        if (!value.isEmpty())
            members << "\"" + name + "\":" + value;
    }
    if (!extra.isEmpty())
        members << extra;
    return "{" + members.join(',') + "}";
}

QByteArray nested(int depth)
{
    return "\"deep\":" + QByteArray(depth, '[') + QByteArray(depth, ']');
}

} // namespace

class TestCallbackRequest final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesTheContract()
    {
        QString error;
        const QByteArray body = "{\"pay_no\":\"微信-4200 "
                                "x;--\",\"order_id\":1001,\"amount_fen\":9900,\"currency\":\"cny\","
                                "\"channel\":\"wechat\",\"trade_status\":\"SUCCESS\",\"paid_at\":"
                                "\"2026-12-02T09:00:00.123Z\"}";
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
        const QByteArray ok =
            "\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"";
        QTest::newRow("not json") << QByteArray("pay_no=1") << QStringLiteral("not JSON");
        QTest::newRow("array") << QByteArray("[1]") << QStringLiteral("object");
        QTest::newRow("no pay_no")
            << QByteArray("{" + ok + "}") << QStringLiteral("pay_no is missing");
        QTest::newRow("empty pay_no")
            << QByteArray("{\"pay_no\":\"\"," + ok + "}") << QStringLiteral("pay_no");
        QTest::newRow("65 chars") << QByteArray("{\"pay_no\":\"" + QByteArray(65, 'p') + "\"," +
                                                ok + "}")
                                  << QStringLiteral("1 to 64");
        QTest::newRow("numeric pay_no")
            << QByteArray("{\"pay_no\":12," + ok + "}") << QStringLiteral("string");
        QTest::newRow("string order")
            << QByteArray("{\"pay_no\":\"p\",\"order_id\":\"1\",\"amount_fen\":1,\"currency\":"
                          "\"CNY\",\"trade_status\":\"SUCCESS\"}")
            << QStringLiteral("order_id");
        QTest::newRow("zero order")
            << QByteArray("{\"pay_no\":\"p\",\"order_id\":0,\"amount_fen\":1,\"currency\":\"CNY\","
                          "\"trade_status\":\"SUCCESS\"}")
            << QStringLiteral("order_id");
        QTest::newRow("fraction") << QByteArray(
                                         "{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1.5,"
                                         "\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("amount_fen");
        QTest::newRow("negative") << QByteArray(
                                         "{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":-1,"
                                         "\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("amount_fen");
        QTest::newRow("currency") << QByteArray(
                                         "{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1,"
                                         "\"currency\":\"CN1\",\"trade_status\":\"SUCCESS\"}")
                                  << QStringLiteral("currency");
        QTest::newRow("no status")
            << QByteArray("{\"pay_no\":\"p\",\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\"}")
            << QStringLiteral("trade_status");

        // A key given twice, compared once decoded, in any object.
        QTest::newRow("pay_no twice")
            << body({}, "\"pay_no\":\"q\"") << QStringLiteral("given twice");
        QTest::newRow("order_id twice, same value")
            << body({}, "\"order_id\":1") << QStringLiteral("given twice");
        QTest::newRow("twice through an escape")
            << body({}, "\"pay\\u005fno\":\"q\"") << QStringLiteral("given twice");
        QTest::newRow("unknown key twice")
            << body({}, "\"x\":1,\"x\":1") << QStringLiteral("given twice");
        QTest::newRow("twice in a nested object")
            << body({}, "\"meta\":[{\"a\":1,\"a\":2}]") << QStringLiteral("given twice");

        // Invalid UTF-8 anywhere in the raw body.
        QTest::newRow("0xff") << body({{"pay_no", "\"p\xff\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("overlong slash")
            << body({{"pay_no", "\"p\xc0\xaf\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("overlong 3 bytes")
            << body({{"pay_no", "\"p\xe0\x80\xaf\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("encoded surrogate")
            << body({{"pay_no", "\"p\xed\xa0\x80\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("above U+10FFFF")
            << body({{"pay_no", "\"p\xf4\x90\x80\x80\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("truncated sequence")
            << body({{"pay_no", "\"\xe4\xb8\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("lone continuation")
            << body({{"pay_no", "\"\x80\""}}) << QStringLiteral("UTF-8");
        QTest::newRow("in an ignored member")
            << body({}, "\"note\":\"\xfe\"") << QStringLiteral("UTF-8");
        QTest::newRow("cut at the end")
            << QByteArray("{\"pay_no\":\"\xe4") << QStringLiteral("UTF-8");

        // Surrogate escapes must pair: QJsonDocument made each of these U+FFFD.
        QTest::newRow("lone high")
            << body({{"pay_no", "\"p\\ud800\""}}) << QStringLiteral("surrogate");
        QTest::newRow("high then letter")
            << body({{"pay_no", "\"p\\ud800x\""}}) << QStringLiteral("surrogate");
        QTest::newRow("high then BMP escape")
            << body({{"pay_no", "\"p\\ud800\\u0041\""}}) << QStringLiteral("surrogate");
        QTest::newRow("two highs")
            << body({{"pay_no", "\"p\\ud800\\ud800\""}}) << QStringLiteral("surrogate");
        QTest::newRow("lone low") << body({{"pay_no", "\"p\\udc00\""}})
                                  << QStringLiteral("surrogate");
        QTest::newRow("low then high")
            << body({{"pay_no", "\"\\ude00\\ud83d\""}}) << QStringLiteral("surrogate");
        QTest::newRow("high at the end of the body")
            << QByteArray("{\"pay_no\":\"\\ud83d") << QStringLiteral("surrogate");
        QTest::newRow("in a key") << body({}, "\"\\udfff\":1") << QStringLiteral("surrogate");
        QTest::newRow("in an ignored value")
            << body({}, "\"meta\":{\"a\":[\"\\udbff\"]}") << QStringLiteral("surrogate");

        // Integers as written: no fraction, no exponent, within 64 bits.
        QTest::newRow("100.0") << body({{"order_id", "100.0"}})
                               << QStringLiteral("order_id must be a JSON integer");
        QTest::newRow("1e2") << body({{"order_id", "1e2"}})
                             << QStringLiteral("order_id must be a JSON integer");
        QTest::newRow("1E+2") << body({{"amount_fen", "1E+2"}})
                              << QStringLiteral("amount_fen must be a JSON integer");
        QTest::newRow("0.0") << body({{"amount_fen", "0.0"}})
                             << QStringLiteral("amount_fen must be a JSON integer");
        QTest::newRow("2^63") << body({{"order_id", "9223372036854775808"}})
                              << QStringLiteral("order_id");
        QTest::newRow("huge") << body({{"amount_fen", QByteArray(400, '9')}})
                              << QStringLiteral("amount_fen");
        QTest::newRow("-2^63") << body({{"order_id", "-9223372036854775808"}})
                               << QStringLiteral("order_id");
        QTest::newRow("negative order") << body({{"order_id", "-5"}}) << QStringLiteral("order_id");
        QTest::newRow("leading zero") << body({{"order_id", "01"}}) << QStringLiteral("not JSON");
        QTest::newRow("plus sign") << body({{"order_id", "+1"}}) << QStringLiteral("not JSON");
        QTest::newRow("bare fraction")
            << body({{"amount_fen", ".5"}}) << QStringLiteral("not JSON");
        QTest::newRow("hex") << body({{"amount_fen", "0x10"}}) << QStringLiteral("not JSON");
        QTest::newRow("boolean amount")
            << body({{"amount_fen", "true"}}) << QStringLiteral("amount_fen");
        QTest::newRow("null order") << body({{"order_id", "null"}}) << QStringLiteral("order_id");

        // paid_at, when present, is RFC 3339 with its ranges.
        const auto paidAt = [](const QByteArray &value) {
            return body({}, "\"paid_at\":" + value);
        };
        QTest::newRow("not-a-date") << paidAt("\"not-a-date\"") << QStringLiteral("RFC 3339");
        QTest::newRow("empty paid_at") << paidAt("\"\"") << QStringLiteral("RFC 3339");
        QTest::newRow("date only") << paidAt("\"2026-12-02\"") << QStringLiteral("RFC 3339");
        QTest::newRow("no offset")
            << paidAt("\"2026-12-02T09:00:00\"") << QStringLiteral("RFC 3339");
        QTest::newRow("space separator")
            << paidAt("\"2026-12-02 09:00:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("month 13") << paidAt("\"2026-13-02T09:00:00Z\"")
                                  << QStringLiteral("RFC 3339");
        QTest::newRow("month 00") << paidAt("\"2026-00-02T09:00:00Z\"")
                                  << QStringLiteral("RFC 3339");
        QTest::newRow("day 00") << paidAt("\"2026-12-00T09:00:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("April 31") << paidAt("\"2026-04-31T09:00:00Z\"")
                                  << QStringLiteral("RFC 3339");
        QTest::newRow("Feb 29, no leap year")
            << paidAt("\"2026-02-29T09:00:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("Feb 29, 1900")
            << paidAt("\"1900-02-29T09:00:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("hour 24") << paidAt("\"2026-12-02T24:00:00Z\"")
                                 << QStringLiteral("RFC 3339");
        QTest::newRow("minute 60")
            << paidAt("\"2026-12-02T09:60:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("second 61")
            << paidAt("\"2026-12-02T09:00:61Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("empty fraction")
            << paidAt("\"2026-12-02T09:00:00.Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("offset hour 24")
            << paidAt("\"2026-12-02T09:00:00+24:00\"") << QStringLiteral("RFC 3339");
        QTest::newRow("offset minute 60")
            << paidAt("\"2026-12-02T09:00:00+08:60\"") << QStringLiteral("RFC 3339");
        QTest::newRow("offset without colon")
            << paidAt("\"2026-12-02T09:00:00+0800\"") << QStringLiteral("RFC 3339");
        QTest::newRow("trailing newline")
            << paidAt("\"2026-12-02T09:00:00Z\\n\"") << QStringLiteral("RFC 3339");
        QTest::newRow("full-width digits")
            << paidAt("\"２０２６-12-02T09:00:00Z\"") << QStringLiteral("RFC 3339");
        QTest::newRow("unix seconds")
            << paidAt("1796202000") << QStringLiteral("paid_at must be a string");
        // RFC 3339, but no DATETIME holds it: it would be stored as NULL.
        QTest::newRow("leap second")
            << paidAt("\"2016-12-31T23:59:60Z\"") << QStringLiteral("leap second");
        QTest::newRow("year 0000")
            << paidAt("\"0000-01-01T00:00:00Z\"") << QStringLiteral("years 1000 to 9999");
        QTest::newRow("year 0999")
            << paidAt("\"0999-12-31T23:59:59Z\"") << QStringLiteral("years 1000 to 9999");
        QTest::newRow("9999 becoming 10000 in UTC")
            << paidAt("\"9999-12-31T23:00:00-05:00\"") << QStringLiteral("years 1000 to 9999");
        QTest::newRow("1000 becoming 999 in UTC")
            << paidAt("\"1000-01-01T00:30:00+08:00\"") << QStringLiteral("years 1000 to 9999");

        // Structure.
        QTest::newRow("33 levels") << body({}, nested(32)) << QStringLiteral("deeper than 32");
        QTest::newRow("100000 levels")
            << QByteArray(100000, '[') << QStringLiteral("deeper than 32");
        QTest::newRow("trailing data") << body() + "x" << QStringLiteral("not JSON");
        QTest::newRow("two objects") << body() + body() << QStringLiteral("not JSON");
        QTest::newRow("trailing comma") << body({}, "\"x\":1,") << QStringLiteral("not JSON");
        QTest::newRow("single quotes") << body({}, "'x':1") << QStringLiteral("not JSON");
        QTest::newRow("unquoted key") << body({}, "x:1") << QStringLiteral("not JSON");
        QTest::newRow("raw newline in a string")
            << body({{"pay_no", "\"a\nb\""}}) << QStringLiteral("control character");
        QTest::newRow("invalid escape")
            << body({{"pay_no", "\"a\\x41\""}}) << QStringLiteral("escape");
        QTest::newRow("short unicode escape")
            << body({{"pay_no", "\"\\u41\""}}) << QStringLiteral("escape");
        QTest::newRow("escape cut by the end")
            << QByteArray("{\"pay_no\":\"\\u00") << QStringLiteral("escape");
        QTest::newRow("byte order mark after a space")
            << " \xef\xbb\xbf" + body() << QStringLiteral("not JSON");
        QTest::newRow("byte order mark inside")
            << "{\xef\xbb\xbf" + body().mid(1) << QStringLiteral("not JSON");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("not JSON");
        QTest::newRow("only spaces") << QByteArray(" \n\t") << QStringLiteral("not JSON");
        QTest::newRow("unterminated object")
            << QByteArray("{\"pay_no\":\"p\"") << QStringLiteral("not JSON");
        QTest::newRow("tru") << body({}, "\"x\":tru") << QStringLiteral("not JSON");
        QTest::newRow("NaN") << body({}, "\"x\":NaN") << QStringLiteral("not JSON");
        QTest::newRow("string body") << QByteArray("\"p\"") << QStringLiteral("object");
        QTest::newRow("NUL outside strings")
            << body() + QByteArray(1, '\0') << QStringLiteral("not JSON");
        QTest::newRow("channel not a string")
            << body({}, "\"channel\":[]") << QStringLiteral("channel must be a string");
        QTest::newRow("status of 33") << body({{"trade_status", "\"" + QByteArray(33, 'S') + "\""}})
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

    // Currency codes are three ASCII letters by character, whichever platform sends them.
    void currencyCodesAreThreeLetters()
    {
        QCOMPARE(currencyCode("cny"), std::optional<QString>(QStringLiteral("CNY")));
        QCOMPARE(currencyCode("USD"), std::optional<QString>(QStringLiteral("USD")));
        for (const QByteArray &wrong :
             {QByteArray("156"), QByteArray("元"), QByteArray("CN"), QByteArray("CNYX"),
              QByteArray("CN1"), QByteArray("ÅÄÖ"), QByteArray(" CN"), QByteArray()})
            QVERIFY2(!currencyCode(wrong), wrong.constData());
    }

    void sixtyFourCharactersOfAnyScriptAreFine()
    {
        QString error;
        const QString payNo = QString(64, QChar(0x6B3E)); // 64 CJK characters, 192 UTF-8 bytes
        const QByteArray body =
            "{\"pay_no\":\"" + payNo.toUtf8() +
            "\",\"order_id\":1,\"amount_fen\":1,\"currency\":\"CNY\",\"trade_status\":\"SUCCESS\"}";
        const auto request = CallbackRequest::parse(body, &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo.size(), 192);
    }

    void escapesAreDecoded_data()
    {
        QTest::addColumn<QByteArray>("payNoJson");
        QTest::addColumn<QByteArray>("stored");
        QTest::newRow("BMP escapes") << QByteArray(R"("\u4e2d\u6587")") << QByteArray("中文");
        QTest::newRow("escaped and raw") << QByteArray(R"("微\u4fe1-42")") << QByteArray("微信-42");
        QTest::newRow("surrogate pair")
            << QByteArray(R"("\ud83d\ude00")") << QByteArray("\xf0\x9f\x98\x80");
        QTest::newRow("upper-case hex")
            << QByteArray(R"("\uD83D\uDE00")") << QByteArray("\xf0\x9f\x98\x80");
        QTest::newRow("raw emoji")
            << QByteArray("\"\xf0\x9f\x98\x80\"") << QByteArray("\xf0\x9f\x98\x80");
        QTest::newRow("last code point")
            << QByteArray(R"("\udbff\udfff")") << QByteArray("\xf4\x8f\xbf\xbf");
        QTest::newRow("short escapes")
            << QByteArray("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"") << QByteArray("\"\\/\b\f\n\r\t");
        QTest::newRow("NUL") << QByteArray(R"("a\u0000b")") << QByteArray("a\0b", 3);
    }

    void escapesAreDecoded()
    {
        QFETCH(QByteArray, payNoJson);
        QFETCH(QByteArray, stored);
        QString error;
        const auto request = CallbackRequest::parse(body({{"pay_no", payNoJson}}), &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo, stored);
    }

    void charactersAreCodePoints()
    {
        QByteArray pairs;
        for (int i = 0; i < 64; ++i)
            pairs += R"(\ud83d\ude00)";
        QString error;
        const auto request =
            CallbackRequest::parse(body({{"pay_no", "\"" + pairs + "\""}}), &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo.size(), 256);
        QVERIFY(!CallbackRequest::parse(body({{"pay_no", "\"" + pairs + "x\""}}), &error));
        QVERIFY2(error.contains(QStringLiteral("1 to 64")), qPrintable(error));
    }

    void chineseBodyIsAccepted()
    {
        QString error;
        const QByteArray json =
            R"({"pay_no":"支付宝-订单-2026","order_id":42,"amount_fen":0,"currency":"cny",)"
            R"("channel":"支付宝","trade_status":"SUCCESS","备注":"测试","paid_at":"2026-12-02T17:00:00+08:00"})";
        const auto request = CallbackRequest::parse(json, &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo, QByteArray("支付宝-订单-2026"));
        QCOMPARE(request->channel, QStringLiteral("支付宝"));
        QCOMPARE(request->amountFen, qint64(0));
        QCOMPARE(request->currency, QStringLiteral("CNY"));
        QCOMPARE(request->paidAt, QStringLiteral("2026-12-02T17:00:00+08:00"));
    }

    void unknownMembersAreIgnored()
    {
        // Nesting to 32 levels counts the body's own object; numbers of any form are fine
        // where nobody reads them. Keys differing in case are different keys.
        const QByteArray extra =
            R"("meta":{"a":[1,-2.5e-3,true,false,null,{},[],"x"],"b":{"c":{}}},)"
            R"("n":1E400,"PAY_NO":"other",)" +
            nested(31);
        QString error;
        const auto request = CallbackRequest::parse(" \n\t" + body({}, extra) + "\r\n", &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->payNo, QByteArray("p"));
        QVERIFY2(CallbackRequest::parse("\xef\xbb\xbf" + body(), &error),
                 "a leading byte order mark is skipped");
    }

    void integersAreExact()
    {
        QString error;
        // 2^53 + 1: a double reads it as 2^53.
        const auto request = CallbackRequest::parse(
            body({{"order_id", "9223372036854775807"}, {"amount_fen", "9007199254740993"}}),
            &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->orderId, std::numeric_limits<qint64>::max());
        QCOMPARE(request->amountFen, qint64(9007199254740993));
        QCOMPARE(strictjson::integerValue("-12"), std::optional<qint64>(-12));
        for (const char *text :
             {"", "-", "+1", " 1", "1 ", "01", "1.0", "1e2", "0x1", "9223372036854775808"})
            QVERIFY2(!strictjson::integerValue(text), text);
    }

    void rfc3339Forms_data()
    {
        QTest::addColumn<QString>("paidAt");
        QTest::newRow("milliseconds, Z") << QStringLiteral("2026-12-02T09:00:00.123Z");
        QTest::newRow("offset") << QStringLiteral("2026-12-02T17:00:00+08:00");
        QTest::newRow("negative offset") << QStringLiteral("2026-12-02T03:30:00-05:30");
        QTest::newRow("lower case t and z") << QStringLiteral("2026-12-02t09:00:00z");
        QTest::newRow("nanoseconds") << QStringLiteral("2000-02-29T00:00:00.123456789Z");
        QTest::newRow("first DATETIME") << QStringLiteral("1000-01-01T00:00:00Z");
        QTest::newRow("last DATETIME") << QStringLiteral("9999-12-31T23:59:59.999Z");
        QTest::newRow("9999 with a positive offset") << QStringLiteral("9999-12-31T23:59:59+08:00");
        QTest::newRow("largest offset") << QStringLiteral("2026-12-31T23:59:59+23:59");
    }

    void rfc3339Forms()
    {
        QFETCH(QString, paidAt);
        QString error;
        const auto request =
            CallbackRequest::parse(body({}, "\"paid_at\":\"" + paidAt.toUtf8() + "\""), &error);
        QVERIFY2(request, qPrintable(error));
        QCOMPARE(request->paidAt, paidAt);
    }

    void tradeStatusAndChannelAreExact()
    {
        QString error;
        const auto success = CallbackRequest::parse(body({}, R"("channel":"WeChat")"), &error);
        const auto lower = CallbackRequest::parse(
            body({{"trade_status", R"("success")"}}, R"("channel":"WeChat")"), &error);
        const auto channel = CallbackRequest::parse(body({}, R"("channel":"wechat")"), &error);
        const auto currency = CallbackRequest::parse(
            body({{"currency", R"("cny")"}}, R"("channel":"WeChat")"), &error);
        QVERIFY(success && lower && channel && currency);
        QVERIFY(success->isSuccess());
        QVERIFY(!lower->isSuccess());
        QCOMPARE(lower->tradeStatus, QStringLiteral("success"));
        QVERIFY(!lower->sameContentAs(*success));
        QVERIFY(!channel->sameContentAs(*success));
        QVERIFY(currency->sameContentAs(*success));
    }

    void everyCutIsRefused()
    {
        const QByteArray whole =
            R"({"pay_no":"微\ud83d\ude00","order_id":12,"amount_fen":3,"currency":"CNY",)"
            R"("trade_status":"SUCCESS","x":[1.5e3,{"y":null}]})";
        QString error;
        QVERIFY2(CallbackRequest::parse(whole, &error), qPrintable(error));
        for (qsizetype length = 0; length < whole.size(); ++length)
            QVERIFY2(!CallbackRequest::parse(whole.left(length), &error),
                     whole.left(length).constData());
    }

    // Seeded random edits of a valid body: every input gets an answer, never a crash.
    void arbitraryBytesAreAnswered()
    {
        QRandomGenerator random(20261202);
        const QByteArray seed = body({}, R"("x":[1,{"y":"\ud83d\ude00"}])");
        for (int round = 0; round < 20000; ++round) {
            QByteArray input = seed;
            for (int edit = random.bounded(1, 5); edit > 0; --edit) {
                const int at = random.bounded(int(input.size()));
                const char byte = char(random.bounded(256));
                switch (random.bounded(3)) {
                case 0:
                    input[at] = byte;
                    break;
                case 1:
                    input.insert(at, byte);
                    break;
                default:
                    input.remove(at, 1);
                    break;
                }
            }
            QString error;
            const auto request = CallbackRequest::parse(input, &error);
            QVERIFY(request || !error.isEmpty());
        }
    }

    void reasonsNeverQuoteTheBody()
    {
        for (const QByteArray &bad :
             {body({}, R"("zz-secret":1,"zz-secret":2)"),
              body({{"pay_no", R"("zz-secret\ud800")"}}), body({{"pay_no", "\"zz-secret\xff\""}}),
              body({}, R"("paid_at":"zz-secret")"),
              body({{"amount_fen", "1.0"}}, R"("zz-secret":1)")}) {
            QString error;
            QVERIFY(!CallbackRequest::parse(bad, &error));
            QVERIFY2(!error.isEmpty() && !error.contains(QStringLiteral("zz-secret")),
                     qPrintable(error));
        }
    }

    void signatures()
    {
        const QByteArray secret = "s3cret-s3cret-s3cret";
        const QByteArray body = "{\"a\":1}";
        const qint64 now = 1800000000;
        const QByteArray header = signatureHeader(secret, now, body);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), header, body, now),
                 SignatureCheck::Valid);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), header, body + " ", now),
                 SignatureCheck::Mismatch);
        QCOMPARE(verifySignature("other-secret-xxxxx", QByteArray::number(now), header, body, now),
                 SignatureCheck::Mismatch);
        QCOMPARE(verifySignature(secret, QByteArray::number(now - 301),
                                 signatureHeader(secret, now - 301, body), body, now),
                 SignatureCheck::Stale);
        QCOMPARE(verifySignature(secret, QByteArray::number(now + 301),
                                 signatureHeader(secret, now + 301, body), body, now),
                 SignatureCheck::Stale);
        QCOMPARE(verifySignature(secret, QByteArray::number(now - 300),
                                 signatureHeader(secret, now - 300, body), body, now),
                 SignatureCheck::Valid);
        QCOMPARE(verifySignature(secret, QByteArray(), header, body, now), SignatureCheck::Missing);
        QCOMPARE(verifySignature(secret, "soon", header, body, now), SignatureCheck::Malformed);
        QCOMPARE(verifySignature(secret, QByteArray::number(now), "v2=" + header.mid(3), body, now),
                 SignatureCheck::Malformed);
        // The known answer, so that a platform can check its signer against ours.
        QCOMPARE(signatureHeader("key", 1, "body"),
                 QByteArray("v1=") +
                     QMessageAuthenticationCode::hash("1.body", "key", QCryptographicHash::Sha256)
                         .toHex());
    }
};

PAYOPS_TEST_MAIN_CORE(TestCallbackRequest)
#include "tst_callbackrequest.moc"
