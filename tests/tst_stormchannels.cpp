// The storm as WeChat Pay and Alipay: what it sends is captured by a plain HTTP receiver and
// checked with implementations that are not payops's: the openssl command verifies the RSA
// signatures, Python's cryptography decrypts WeChat Pay's resource, Python's urllib reads
// Alipay's form and builds its string to sign.

#include "countingupstream.h"
#include "lab/sandboxkeys.h"
#include "lab/storm.h"
#include "testmain.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUrlQuery>

using namespace payops;

namespace {

constexpr int kOrders = 3;
constexpr int kCopies = 2;
const QList<qint64> kOrderIds{501, 502, 503};

struct Run
{
    int exitCode = -1;
    QByteArray out, err;
};

Run run(const QString &program, const QStringList &arguments, const QByteArray &input = {})
{
    QProcess process;
    process.start(program, arguments);
    process.write(input);
    process.closeWriteChannel();
    process.waitForFinished(30000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

void writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(content), content.size());
}

// `openssl dgst -sha256 -verify`: whether `signature` is the RSA-SHA256 of `data` by the
// holder of the private key of `publicKey`.
bool opensslVerifies(const QString &publicKey, const QByteArray &data, const QByteArray &signature,
                     const QTemporaryDir &scratch)
{
    const QString dataPath = scratch.filePath(QStringLiteral("data"));
    const QString signaturePath = scratch.filePath(QStringLiteral("signature"));
    writeFile(dataPath, data);
    writeFile(signaturePath, signature);
    const Run verify =
        run(QStringLiteral("openssl"),
            {QStringLiteral("dgst"), QStringLiteral("-sha256"), QStringLiteral("-verify"),
             publicKey, QStringLiteral("-signature"), signaturePath, dataPath});
    return verify.exitCode == 0 && verify.out.contains("Verified OK");
}

// The WeChat Pay notification on stdin, its resource decrypted with the APIv3 key in argv[1].
const QString kDecrypt = QStringLiteral(R"(
import base64, json, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
resource = json.load(sys.stdin)["resource"]
key = open(sys.argv[1], "rb").read().strip()
plain = AESGCM(key).decrypt(resource["nonce"].encode(), base64.b64decode(resource["ciphertext"]),
                            resource["associated_data"].encode())
sys.stdout.write(plain.decode())
)");

// Alipay's form on stdin: argv[1] gets the string to sign, argv[2] the decoded signature.
const QString kAlipaySigned = QStringLiteral(R"(
import base64, sys, urllib.parse
form = dict(urllib.parse.parse_qsl(sys.stdin.read(), keep_blank_values=True, strict_parsing=True))
signed = "&".join(k + "=" + v for k, v in sorted(form.items()) if k not in ("sign", "sign_type") and v)
open(sys.argv[1], "wb").write(signed.encode())
open(sys.argv[2], "wb").write(base64.b64decode(form["sign"]))
)");

// Reads Alipay's form with Python and verifies its sign with openssl; *signedText gets the
// string that was signed.
bool alipayFormVerifies(const QByteArray &body, const QString &publicKey,
                        const QTemporaryDir &scratch, QByteArray *signedText)
{
    const QString signedPath = scratch.filePath(QStringLiteral("signed"));
    const QString signaturePath = scratch.filePath(QStringLiteral("sign"));
    const Run parsed = run(QStringLiteral("python3"),
                           {QStringLiteral("-c"), kAlipaySigned, signedPath, signaturePath}, body);
    if (parsed.exitCode != 0) {
        qWarning("%s", parsed.err.constData());
        return false;
    }
    QFile signedFile(signedPath), signatureFile(signaturePath);
    if (!signedFile.open(QIODevice::ReadOnly) || !signatureFile.open(QIODevice::ReadOnly))
        return false;
    *signedText = signedFile.readAll();
    return opensslVerifies(publicKey, *signedText, signatureFile.readAll(), scratch);
}

StormPlan planFor(WireFormat channel, const QString &keysDir, const QString &target)
{
    StormPlan plan;
    plan.targets = {target};
    plan.channel = channel;
    plan.keys = PlatformKeys::read(keysDir);
    plan.orders = kOrders;
    plan.copies = kCopies;
    plan.pattern = StormPattern::Gap;
    plan.gapMs = 20;
    plan.forged = 1;
    for (const qint64 order : kOrderIds)
        plan.orderFacts.insert(order, StormOrderFacts{order * 100 + 1, QStringLiteral("CNY")});
    return plan;
}

} // namespace

class TestStormChannels final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_sandbox.isValid());
        QVERIFY(m_scratch.isValid());
        if (QStandardPaths::findExecutable(QStringLiteral("openssl")).isEmpty())
            QFAIL("the openssl command is needed to verify the signatures");
        m_keys = ensureSandboxKeys(m_sandbox.path());
    }

    void wechatPayNotificationsVerifyAndDecrypt()
    {
        test::CountingUpstream receiver( // 200, empty: WeChat Pay's success
            [](const test::CountingUpstream::Request &) {
                return test::CannedAnswer{200, {}, {}};
            });
        QVERIFY(receiver.port() > 0);
        const std::atomic<bool> stop{false};
        const StormCounts counts =
            runStorm(planFor(WireFormat::WechatPay, m_keys.directory, receiver.baseUrl()),
                     kOrderIds, {}, stop);
        QCOMPARE(counts.planned, qint64(kOrders * kCopies + 1));
        QCOMPARE(counts.forged, qint64(1));
        QCOMPARE(counts.gaveUp, qint64(0));

        const PlatformKeys keys = PlatformKeys::read(m_keys.directory);
        const QList<test::CountingUpstream::Request> requests = receiver.received();
        QCOMPARE(requests.size(), kOrders * kCopies + 1);
        int forged = 0;
        QHash<QString, QSet<QByteArray>> idsByOrder, noncesByOrder;
        for (const auto &request : requests) {
            QCOMPARE(request.path, QByteArray("/callbacks/wechatpay"));
            QCOMPARE(request.header("Content-Type"), QByteArray("application/json"));
            QCOMPARE(request.header("Wechatpay-Serial"), keys.wechatSerial);
            QCOMPARE(request.header("Wechatpay-Signature-Type"),
                     QByteArray("WECHATPAY2-SHA256-RSA2048"));
            const QByteArray timestamp = request.header("Wechatpay-Timestamp");
            QVERIFY(qAbs(timestamp.toLongLong() - QDateTime::currentSecsSinceEpoch()) < 60);
            const QByteArray signed_ =
                timestamp + '\n' + request.header("Wechatpay-Nonce") + '\n' + request.body + '\n';
            const bool verifies = opensslVerifies(
                m_keys.wechatPlatformPublicKey, signed_,
                QByteArray::fromBase64(request.header("Wechatpay-Signature")), m_scratch);
            if (!verifies) {
                ++forged;
                continue;
            }

            const QJsonObject notification = QJsonDocument::fromJson(request.body).object();
            QCOMPARE(notification.value(QStringLiteral("event_type")).toString(),
                     QStringLiteral("TRANSACTION.SUCCESS"));
            QCOMPARE(notification.value(QStringLiteral("resource_type")).toString(),
                     QStringLiteral("encrypt-resource"));
            const QJsonObject resource = notification.value(QStringLiteral("resource")).toObject();
            QCOMPARE(resource.value(QStringLiteral("algorithm")).toString(),
                     QStringLiteral("AEAD_AES_256_GCM"));
            QCOMPARE(resource.value(QStringLiteral("nonce")).toString().size(), 12);
            const Run decrypted =
                run(QStringLiteral("python3"),
                    {QStringLiteral("-c"), kDecrypt, m_keys.wechatApiV3Key}, request.body);
            QVERIFY2(decrypted.exitCode == 0, decrypted.err.constData());
            const QJsonObject transaction = QJsonDocument::fromJson(decrypted.out).object();
            const QString order = transaction.value(QStringLiteral("out_trade_no")).toString();
            QVERIFY2(kOrderIds.contains(order.toLongLong()), decrypted.out.constData());
            QCOMPARE(transaction.value(QStringLiteral("trade_state")).toString(),
                     QStringLiteral("SUCCESS"));
            QCOMPARE(transaction.value(QStringLiteral("mchid")).toString().toLatin1(),
                     keys.wechatMchId);
            QCOMPARE(transaction.value(QStringLiteral("appid")).toString().toLatin1(),
                     keys.wechatAppId);
            const QJsonObject amount = transaction.value(QStringLiteral("amount")).toObject();
            QCOMPARE(amount.value(QStringLiteral("total")).toInteger(),
                     order.toLongLong() * 100 + 1);
            QCOMPARE(amount.value(QStringLiteral("currency")).toString(), QStringLiteral("CNY"));
            QVERIFY(transaction.value(QStringLiteral("success_time"))
                        .toString()
                        .endsWith(QStringLiteral("+08:00")));
            QVERIFY(!transaction.value(QStringLiteral("transaction_id")).toString().isEmpty());
            idsByOrder[order] << notification.value(QStringLiteral("id")).toString().toLatin1();
            noncesByOrder[order] << resource.value(QStringLiteral("nonce")).toString().toLatin1();
        }
        // Only the forged one fails, and each order's copies are one event, encrypted afresh.
        QCOMPARE(forged, 1);
        QCOMPARE(idsByOrder.size(), kOrders);
        for (auto it = idsByOrder.cbegin(); it != idsByOrder.cend(); ++it) {
            QCOMPARE(it->size(), 1);
            QCOMPARE(noncesByOrder.value(it.key()).size(), kCopies);
        }
    }

    void alipayFormsVerify()
    {
        // Alipay takes only "success" as success: the first answer to each order is "fail",
        // and the storm retries it as Alipay does.
        QSet<QByteArray> answered;
        QMutex mutex;
        test::CountingUpstream receiver([&](const test::CountingUpstream::Request &request) {
            const QByteArray notifyId =
                QUrlQuery(QString::fromLatin1(request.body))
                    .queryItemValue(QStringLiteral("notify_id"), QUrl::FullyDecoded)
                    .toLatin1();
            const QMutexLocker lock(&mutex);
            const bool first = !answered.contains(notifyId);
            answered << notifyId;
            return test::CannedAnswer{200, first ? "fail" : "success", "text/plain"};
        });
        QVERIFY(receiver.port() > 0);
        StormPlan plan = planFor(WireFormat::Alipay, m_keys.directory, receiver.baseUrl());
        plan.forged = 0;
        plan.copies = 1;
        plan.retryNon2xx = true;
        const std::atomic<bool> stop{false};
        const StormCounts counts = runStorm(plan, kOrderIds, {}, stop);
        QCOMPARE(counts.gaveUp, qint64(0));
        QCOMPARE(counts.retries, qint64(kOrders));

        const PlatformKeys keys = PlatformKeys::read(m_keys.directory);
        const QList<test::CountingUpstream::Request> requests = receiver.received();
        QCOMPARE(requests.size(), 2 * kOrders);
        for (const auto &request : requests) {
            QCOMPARE(request.path, QByteArray("/callbacks/alipay"));
            QCOMPARE(request.header("Content-Type"),
                     QByteArray("application/x-www-form-urlencoded; charset=utf-8"));
            QByteArray signed_;
            QVERIFY(alipayFormVerifies(request.body, m_keys.alipayPublicKey, m_scratch, &signed_));

            QUrlQuery form;
            form.setQuery(QString::fromUtf8(signed_)); // unencoded k=v&...: what was signed
            const qint64 order = form.queryItemValue(QStringLiteral("out_trade_no")).toLongLong();
            QVERIFY(kOrderIds.contains(order));
            QCOMPARE(form.queryItemValue(QStringLiteral("total_amount")),
                     QStringLiteral("%1.%2").arg(order).arg(1, 2, 10, QLatin1Char('0')));
            QCOMPARE(form.queryItemValue(QStringLiteral("trade_status")),
                     QStringLiteral("TRADE_SUCCESS"));
            QCOMPARE(form.queryItemValue(QStringLiteral("app_id")).toLatin1(), keys.alipayAppId);
            QVERIFY(
                QRegularExpression(QStringLiteral("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$"))
                    .match(form.queryItemValue(QStringLiteral("gmt_payment")))
                    .hasMatch());
            QVERIFY(!signed_.contains("sign_type="));
            QVERIFY(request.body.contains("sign_type=RSA2"));
        }
    }

    void alipayForgedFormFails()
    {
        test::CountingUpstream receiver([](const test::CountingUpstream::Request &) {
            return test::CannedAnswer{200, "success", "text/plain"};
        });
        StormPlan plan = planFor(WireFormat::Alipay, m_keys.directory, receiver.baseUrl());
        plan.copies = 1;
        const std::atomic<bool> stop{false};
        const StormCounts counts = runStorm(plan, kOrderIds, {}, stop);
        // The receiver believes anything: the storm says a forged one was taken.
        QCOMPARE(counts.forged, qint64(1));
        QCOMPARE(counts.forgedAccepted, qint64(1));
        int failing = 0;
        for (const auto &request : receiver.received()) {
            QByteArray signed_;
            if (!alipayFormVerifies(request.body, m_keys.alipayPublicKey, m_scratch, &signed_))
                ++failing;
        }
        QCOMPARE(receiver.received().size(), kOrders + 1);
        QCOMPARE(failing, 1);
    }

    void missingKeysAreNamed()
    {
        QTemporaryDir empty;
        StormPlan plan =
            planFor(WireFormat::WechatPay, empty.path(), QStringLiteral("http://127.0.0.1:9"));
        const QString invalid = validateStormPlan(plan);
        QVERIFY2(invalid.contains(QStringLiteral("wechatpay-platform-private.pem")),
                 qPrintable(invalid));
        plan.channel = WireFormat::Alipay;
        QVERIFY(validateStormPlan(plan).contains(QStringLiteral("alipay-private.pem")));
    }

private:
    QTemporaryDir m_sandbox;
    QTemporaryDir m_scratch;
    SandboxKeys m_keys;
};

PAYOPS_TEST_MAIN_CORE(TestStormChannels)
#include "tst_stormchannels.moc"
