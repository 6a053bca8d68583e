// What the gateway forwards, checked by code payops did not write: behind a gateway connected
// as an account holding only payops_endpoint runs a handler (tests/sdk/verifyinghandler.mjs)
// that verifies each forward with the platforms' own Node SDKs, alipay-sdk's
// checkNotifySignV2 and wechatpay-axios-plugin's Rsa.verify and AesGcm.decrypt, refusing a
// WeChat Pay signature older than 300 s as WeChat Pay asks. Notifications are made by openssl
// and Python (tests/support/platformnotify.py); each case reads the SDKs' verdicts, not only
// the answers' statuses.
#include "callbackfixture.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "platformkit.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>

using namespace payops;
using test::kAlipayPath;
using test::kForm;
using test::kWechatPath;
using test::PlatformKit;

namespace {

const QString kSdkDir = QStringLiteral(PAYOPS_TEST_SOURCE_DIR "/sdk");

// A WeChat Pay notification's options: signed at `timestamp` (0: now), of `eventType`.
PlatformKit::WechatOptions wechatOptions(qint64 timestamp, const QString &eventType)
{
    return {QStringLiteral("wechat"), QString::fromLatin1(PlatformKit::kSerial), timestamp,
            QString(), eventType};
}

} // namespace

class TestSdkHandlers final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const QString node = QStandardPaths::findExecutable(QStringLiteral("node"));
        QVERIFY2(!node.isEmpty(), "node is missing: script/bootstrap installs nodejs");
        QVERIFY2(QFileInfo::exists(kSdkDir + QStringLiteral("/node_modules/alipay-sdk")),
                 "tests/sdk/node_modules is missing: script/bootstrap installs the SDKs");
        m_endpoint = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_endpoint"));
        m_operator = std::make_unique<test::ScratchAccount>(QStringLiteral("payops_operator"));
        m_kit = std::make_unique<PlatformKit>();

        m_handler.setProgram(node);
        m_handler.setWorkingDirectory(kSdkDir);
        m_handler.setArguments(
            {kSdkDir + QStringLiteral("/verifyinghandler.mjs"), QStringLiteral("--port"),
             QStringLiteral("0"), QStringLiteral("--alipay-public-key"),
             m_kit->publicKey(QStringLiteral("alipay")), QStringLiteral("--alipay-app-id"),
             QString::fromLatin1(PlatformKit::kAlipayAppId), QStringLiteral("--wechat-public-key"),
             m_kit->publicKey(QStringLiteral("wechat")), QStringLiteral("--wechat-serial"),
             QString::fromLatin1(PlatformKit::kSerial), QStringLiteral("--apiv3-key-file"),
             m_kit->apiV3KeyFile(), QStringLiteral("--max-age"), QStringLiteral("300")});
        m_handler.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_handler.start();
        QVERIFY2(m_handler.waitForStarted(10000), qPrintable(m_handler.errorString()));
        while (!m_handler.canReadLine())
            QVERIFY2(m_handler.waitForReadyRead(15000), "the SDK handler printed no port");
        const QByteArray first = m_handler.readLine().trimmed();
        QVERIFY2(first.startsWith("listening "), first.constData());
        m_port = first.mid(10).toInt();
        QVERIFY(m_port > 0);
    }

    void cleanupTestCase()
    {
        m_handler.terminate();
        QVERIFY(m_handler.waitForFinished(10000));
    }

    // The platforms' published samples, string order numbers: each forwarded once, verified by
    // its SDK, and the platform answered as its SDK's handler answered.
    void thePublishedSamplesAreVerifiedBySdks()
    {
        test::ScratchDatabase scratch(QStringLiteral("sdksamples"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CallbackdProcess gateway = startGateway(scratch, QStringLiteral("G-SDK-SAMPLES"));
        const qsizetype before = verdicts().size();

        const QByteArray alipay = m_kit->alipay(test::alipayTrade(
            QStringLiteral("2026120522001"), QStringLiteral("N202404181780861744366403007"),
            QStringLiteral("99.00")));
        const PlatformKit::Notification wechat = m_kit->wechat(
            test::wechatTransaction(QStringLiteral("4200000001202612050001"),
                                    QStringLiteral("1217752501201407033233368018"), 9900));
        for (int copy = 0; copy < 2; ++copy) { // the second of each is answered from its row
            QCOMPARE(postAlipay(gateway, alipay), QByteArray("200 success"));
            QCOMPARE(postWechat(gateway, wechat), QByteArray("200 {\"code\":\"SUCCESS\"}"));
        }

        const QList<QJsonObject> seen = verdicts().mid(before);
        QCOMPARE(seen.size(), 2);
        const QJsonObject alipayVerdict = seen.at(0);
        QCOMPARE(alipayVerdict.value(QStringLiteral("platform")).toString(),
                 QStringLiteral("alipay"));
        QCOMPARE(verdictOf(alipayVerdict), QStringLiteral("verified"));
        QCOMPARE(alipayVerdict.value(QStringLiteral("out_trade_no")).toString(),
                 QStringLiteral("N202404181780861744366403007"));
        QCOMPARE(alipayVerdict.value(QStringLiteral("payNo")).toString(),
                 QStringLiteral("2026120522001"));
        const QJsonObject wechatVerdict = seen.at(1);
        QCOMPARE(wechatVerdict.value(QStringLiteral("platform")).toString(),
                 QStringLiteral("wechatpay"));
        QCOMPARE(verdictOf(wechatVerdict), QStringLiteral("verified"));
        QCOMPARE(resourceOf(wechatVerdict).value(QStringLiteral("out_trade_no")).toString(),
                 QStringLiteral("1217752501201407033233368018"));
        QCOMPARE(wechatVerdict.value(QStringLiteral("idempotencyKey")).toString(),
                 QStringLiteral("4200000001202612050001"));
        QCOMPARE(gateway.terminate(), 0);
    }

    // A trade's later events: a WeChat Pay REFUND.SUCCESS, an Alipay partial refund's notice,
    // and another in GBK with a Chinese reason, each forwarded once and read by its SDK.
    void laterEventsAreVerifiedBySdks()
    {
        test::ScratchDatabase scratch(QStringLiteral("sdkevents"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 1);
        test::CallbackdProcess gateway = startGateway(scratch, QStringLiteral("G-SDK-EVENTS"));
        const QString trade = QStringLiteral("2026120522101");
        const QString order = QStringLiteral("N202404181780861744366403007");
        const QString transaction = QStringLiteral("4200000001202612050101");
        const QString wechatOrder = QStringLiteral("1217752501201407033233368018");
        const qsizetype before = verdicts().size();

        const PlatformKit::Notification refunded = m_kit->wechat(
            test::wechatRefund(transaction, wechatOrder, QStringLiteral("50300101"), 1000, 9900),
            wechatOptions(0, QStringLiteral("REFUND.SUCCESS")));
        const QByteArray partial =
            m_kit->alipay(test::alipayRefund(trade, order, QStringLiteral("TRADE_SUCCESS"),
                                             QStringLiteral("R-1"), QStringLiteral("10.00")));
        QStringList gbkForm = test::alipayRefund(trade, order, QStringLiteral("TRADE_SUCCESS"),
                                                 QStringLiteral("R-2"), QStringLiteral("30.50"));
        gbkForm << QStringLiteral("refund_reason=商品已售完");
        const QByteArray gbk = m_kit->alipay(gbkForm, QStringLiteral("gbk"));
        for (int copy = 0; copy < 2; ++copy) {
            QCOMPARE(postWechat(gateway, refunded), QByteArray("200 {\"code\":\"SUCCESS\"}"));
            QCOMPARE(postAlipay(gateway, partial), QByteArray("200 success"));
        }
        const QByteArray gbkAnswer = postAlipay(gateway, gbk);

        const QList<QJsonObject> seen = verdicts().mid(before);
        QCOMPARE(seen.size(), 3);
        const QJsonObject refund = seen.at(0);
        QCOMPARE(verdictOf(refund), QStringLiteral("verified"));
        QCOMPARE(refund.value(QStringLiteral("eventType")).toString(),
                 QStringLiteral("REFUND.SUCCESS"));
        QCOMPARE(refund.value(QStringLiteral("event")).toString(),
                 QStringLiteral("REFUND.SUCCESS/50300101"));
        QCOMPARE(resourceOf(refund).value(QStringLiteral("refund_status")).toString(),
                 QStringLiteral("SUCCESS"));
        const QJsonObject first = seen.at(1);
        QCOMPARE(verdictOf(first), QStringLiteral("verified"));
        QCOMPARE(first.value(QStringLiteral("event")).toString(),
                 QStringLiteral("TRADE_SUCCESS/R-1"));
        QCOMPARE(first.value(QStringLiteral("refund_fee")).toString(), QStringLiteral("10.00"));

        // The GBK form reaches the handler as Alipay sent it: its charset read, its Chinese
        // reason decoded. alipay-sdk 4.14.0 hashes the parameters as UTF-8 whatever the form's
        // charset (rsaCheck: verifier.update(content, 'utf-8')), so it cannot verify a GBK
        // notification whose values are not ASCII, and its refusal is passed on to Alipay,
        // which retries. Expected to fail until the SDK reads the charset.
        const QJsonObject second = seen.at(2);
        QCOMPARE(second.value(QStringLiteral("event")).toString(),
                 QStringLiteral("TRADE_SUCCESS/R-2"));
        QCOMPARE(second.value(QStringLiteral("charset")).toString(), QStringLiteral("gbk"));
        QCOMPARE(second.value(QStringLiteral("refund_reason")).toString(),
                 QStringLiteral("商品已售完"));
        QEXPECT_FAIL("", "alipay-sdk 4.14.0 verifies notifications over UTF-8 only", Continue);
        QCOMPARE(verdictOf(second), QStringLiteral("verified"));
        QEXPECT_FAIL("", "alipay-sdk 4.14.0 verifies notifications over UTF-8 only", Continue);
        QCOMPARE(gbkAnswer, QByteArray("200 success"));
        // The proof that it is the SDK's charset: the same form signed over its UTF-8 bytes,
        // which Alipay never sends and payops refuses, is what the SDK verifies.
        const QByteArray utf8Signed =
            m_kit->alipay(gbkForm, QStringLiteral("gbk"), QStringLiteral("utf-8"));
        QCOMPARE(postAlipay(gateway, utf8Signed), QByteArray("401 fail"));
        QCOMPARE(test::postTo(m_port, "/notify", utf8Signed, {}, kForm).status, 200);
        const QJsonObject resigned = verdicts().last();
        QCOMPARE(verdictOf(resigned), QStringLiteral("verified"));
        QCOMPARE(resigned.value(QStringLiteral("refund_reason")).toString(),
                 QStringLiteral("商品已售完"));
        QCOMPARE(gateway.terminate(), 0);
    }

    // A hold longer than the SDK's 300 s of signed time, without waiting 300 s: the held
    // delivery was signed 295 s ago. Held by the platform's retries, its retry after the hold
    // is forwarded with a fresh signature and verified. Held without the option, the recorded
    // delivery drained after its signature aged past 300 s is refused by the SDK, and its row
    // waits for another drain.
    void aHoldOutlastingTheSignatureNeedsThePlatformsRetry()
    {
        test::ScratchDatabase byRetries(QStringLiteral("sdkholdretries"));
        test::ScratchDatabase recorded(QStringLiteral("sdkholdrecorded"));
        test::prepareCallbackDatabase(byRetries.dsn(), QStringLiteral("current"), 1);
        test::prepareCallbackDatabase(recorded.dsn(), QStringLiteral("current"), 1);
        test::CallbackdProcess holding =
            startGateway(byRetries, QStringLiteral("G-SDK-HOLD"),
                         {QStringLiteral("--hold-by-retries"), QStringLiteral("wechatpay")});
        test::CallbackdProcess recording = startGateway(recorded, QStringLiteral("G-SDK-REC"));
        db::Connection holdingOperator(m_operator->dsnFor(byRetries.name()), QStringLiteral("op1"));
        db::Connection recordingOperator(m_operator->dsnFor(recorded.name()),
                                         QStringLiteral("op2"));
        for (const QSqlDatabase &db : {holdingOperator.database(), recordingOperator.database()})
            QVERIFY(flipAndWait(db, CallbackMode::RecordOnly));
        const qint64 signedAt = QDateTime::currentSecsSinceEpoch() - 295;
        const QJsonObject paid =
            test::wechatTransaction(QStringLiteral("4200000001202612050201"),
                                    QStringLiteral("1217752501201407033233368018"), 9900);
        const QJsonObject recordedPaid =
            test::wechatTransaction(QStringLiteral("4200000001202612050202"),
                                    QStringLiteral("1217752501201407033233368019"), 9900);
        const qsizetype before = verdicts().size();

        const PlatformKit::Notification held =
            m_kit->wechat(paid, wechatOptions(signedAt, QStringLiteral("TRANSACTION.SUCCESS")));
        QCOMPARE(postWechat(holding, held).left(4), QByteArray("503 "));
        const PlatformKit::Notification kept = m_kit->wechat(
            recordedPaid, wechatOptions(signedAt, QStringLiteral("TRANSACTION.SUCCESS")));
        QCOMPARE(postWechat(recording, kept).left(4), QByteArray("200 "));
        QCOMPARE(verdicts().size(), before);
        for (const QSqlDatabase &db : {holdingOperator.database(), recordingOperator.database()})
            QVERIFY(flipAndWait(db, CallbackMode::Normal));
        // Both held signatures are now older than the SDK takes.
        while (QDateTime::currentSecsSinceEpoch() <= signedAt + 301)
            QThread::msleep(200);

        // The platform's retry, signed now, is what reaches the handler.
        const PlatformKit::Notification retry = m_kit->wechat(paid);
        QCOMPARE(postWechat(holding, retry), QByteArray("200 {\"code\":\"SUCCESS\"}"));
        QCOMPARE(verdicts().size(), before + 1);
        const QJsonObject retried = verdicts().last();
        QCOMPARE(verdictOf(retried), QStringLiteral("verified"));
        QCOMPARE(retried.value(QStringLiteral("payNo")).toString(),
                 QStringLiteral("4200000001202612050201"));
        QVERIFY(retried.value(QStringLiteral("timestamp")).toInteger() > signedAt + 300);
        QCOMPARE(statusOf(byRetries, "4200000001202612050201"), QStringLiteral("FORWARDED"));

        // Without the option the platform was answered success and sent nothing since: the
        // drain forwards the recorded delivery, whose signature the SDK refuses as too old.
        const test::CliRun drain =
            test::runCli({QStringLiteral("drain"), QStringLiteral("--db"),
                          m_operator->dsnFor(recorded.name()).toString(),
                          QStringLiteral("--upstream"), upstreamUrl()},
                         {{QStringLiteral("PAYOPS_DB_PASSWORD"), m_operator->password()}});
        QVERIFY2(drain.exitCode == 1, qPrintable(drain.err + drain.out)); // a row left
        QCOMPARE(verdicts().size(), before + 2);
        const QJsonObject refused = verdicts().last();
        QCOMPARE(refused.value(QStringLiteral("payNo")).toString(),
                 QStringLiteral("4200000001202612050202"));
        QVERIFY2(verdictOf(refused).startsWith(QStringLiteral("refused: Wechatpay-Timestamp is ")),
                 qPrintable(verdictOf(refused)));
        QCOMPARE(refused.value(QStringLiteral("timestamp")).toInteger(), signedAt);
        QVERIFY(statusOf(recorded, "4200000001202612050202") != QStringLiteral("FORWARDED"));
        QCOMPARE(holding.terminate(), 0);
        QCOMPARE(recording.terminate(), 0);
    }

private:
    QString upstreamUrl() const { return QStringLiteral("http://127.0.0.1:%1/notify").arg(m_port); }

    test::CallbackdProcess startGateway(const test::ScratchDatabase &scratch,
                                        const QString &instance,
                                        const QStringList &options = {}) const
    {
        return test::CallbackdProcess(m_endpoint->dsnFor(scratch.name()), QString(), instance,
                                      m_kit->callbackdArguments() + options +
                                          QStringList{QStringLiteral("--upstream"), upstreamUrl()});
    }

    // Every verdict of the SDK handler so far, in order.
    QList<QJsonObject> verdicts() const
    {
        const test::HttpResult answer = test::get(m_port, QStringLiteral("/verdicts"));
        QList<QJsonObject> all;
        for (const QJsonValue &verdict : QJsonDocument::fromJson(answer.body).array())
            all << verdict.toObject();
        return all;
    }

    // "verified", or "refused: " and the SDK handler's reason.
    static QString verdictOf(const QJsonObject &verdict)
    {
        return verdict.value(QStringLiteral("verified")).toBool()
                   ? QStringLiteral("verified")
                   : QStringLiteral("refused: ") +
                         verdict.value(QStringLiteral("reason")).toString();
    }

    static QJsonObject resourceOf(const QJsonObject &verdict)
    {
        return verdict.value(QStringLiteral("resource")).toObject();
    }

    // Flips the switch as an operator; true once the gateway acknowledged it.
    static bool flipAndWait(const QSqlDatabase &db, CallbackMode mode)
    {
        const FlipResult flip = flipSwitch(db, mode, QStringLiteral("sdk test"));
        const QList<InstanceAck> acks = waitForAcknowledgement(db, flip.after.version, 5000);
        return !acks.isEmpty() && acks.first().acknowledged;
    }

    static QString statusOf(const test::ScratchDatabase &scratch, const char *payNo)
    {
        db::Connection root(scratch.dsn(), QStringLiteral("status"));
        return db::scalar(root.database(),
                          QStringLiteral("SELECT status FROM pay_callback_log WHERE pay_no = ?"),
                          {QByteArray(payNo)})
            .toString();
    }

    // "STATUS body" of the gateway's answer.
    static QByteArray postAlipay(const test::CallbackdProcess &gateway, const QByteArray &form)
    {
        const test::HttpResult answer = test::postTo(gateway.port(), kAlipayPath, form, {}, kForm);
        return QByteArray::number(answer.status) + ' ' + answer.body;
    }

    static QByteArray postWechat(const test::CallbackdProcess &gateway,
                                 const PlatformKit::Notification &notification)
    {
        const test::HttpResult answer =
            test::postTo(gateway.port(), kWechatPath, notification.body, notification.headers);
        return QByteArray::number(answer.status) + ' ' + answer.body;
    }

    std::unique_ptr<test::ScratchAccount> m_endpoint;
    std::unique_ptr<test::ScratchAccount> m_operator;
    std::unique_ptr<PlatformKit> m_kit;
    QProcess m_handler;
    int m_port = 0;
};

PAYOPS_TEST_MAIN_CORE(TestSdkHandlers)
#include "tst_sdkhandlers.moc"
