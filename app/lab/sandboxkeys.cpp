#include "sandboxkeys.h"

#include "labcrypto.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QRandomGenerator>

#include <functional>
#include <stdexcept>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct SandboxKeysText
{
    Q_DECLARE_TR_FUNCTIONS(payops::SandboxKeysText)
};

// Created 0600 in one step, never readable by others for a moment.
void writePrivate(const QString &path, const QByteArray &content)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly,
                   QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(content) != content.size() || !file.flush())
        throw std::runtime_error(
            SandboxKeysText::tr("cannot write %1: %2").arg(path, file.errorString()).toStdString());
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QByteArray randomText(int length, const char *alphabet)
{
    const int size = int(qstrlen(alphabet));
    QByteArray text;
    for (int i = 0; i < length; ++i)
        text += alphabet[QRandomGenerator::system()->bounded(size)];
    return text;
}

// A key pair's files come and go together: a half-written pair is made again whole.
void ensurePair(const QString &privatePath, const QString &publicPath,
                const QString &companionPath = {},
                const std::function<QByteArray()> &companion = {})
{
    const bool whole = QFile::exists(privatePath) && QFile::exists(publicPath) &&
                       (companionPath.isEmpty() || QFile::exists(companionPath));
    if (whole)
        return;
    for (const QString &path : {privatePath, publicPath, companionPath})
        if (!path.isEmpty())
            QFile::remove(path);
    const RsaPrivateKey key = RsaPrivateKey::generate();
    writePrivate(privatePath, key.privatePem());
    writePrivate(publicPath, key.publicPem());
    if (!companionPath.isEmpty())
        writePrivate(companionPath, companion());
}

} // namespace

SandboxKeys::SandboxKeys(const QString &keysDirectory)
    : directory(keysDirectory)
    , wechatPlatformPrivateKey(keysDirectory + QStringLiteral("/wechatpay-platform-private.pem"))
    , wechatPlatformPublicKey(keysDirectory + QStringLiteral("/wechatpay-platform-public.pem"))
    , wechatPlatformSerial(keysDirectory + QStringLiteral("/wechatpay-platform-serial"))
    , wechatApiV3Key(keysDirectory + QStringLiteral("/wechatpay-apiv3-key"))
    , alipayPrivateKey(keysDirectory + QStringLiteral("/alipay-private.pem"))
    , alipayPublicKey(keysDirectory + QStringLiteral("/alipay-public.pem"))
    , ids(keysDirectory + QStringLiteral("/ids"))
{
}

QStringList SandboxKeys::files() const
{
    return {wechatPlatformPrivateKey,
            wechatPlatformPublicKey,
            wechatPlatformSerial,
            wechatApiV3Key,
            alipayPrivateKey,
            alipayPublicKey,
            ids};
}

QString sandboxKeysDirectory(const QString &sandboxDirectory)
{
    return sandboxDirectory + QStringLiteral("/keys");
}

SandboxKeys ensureSandboxKeys(const QString &sandboxDirectory)
{
    const SandboxKeys keys(sandboxKeysDirectory(sandboxDirectory));
    if (!QDir().mkpath(keys.directory) ||
        !QFile::setPermissions(keys.directory, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                   QFileDevice::ExeOwner))
        throw std::runtime_error(
            SandboxKeysText::tr("cannot make %1 private to its owner (mode 0700)")
                .arg(keys.directory)
                .toStdString());
    // A platform certificate's serial: 40 hex digits, upper case.
    ensurePair(keys.wechatPlatformPrivateKey, keys.wechatPlatformPublicKey,
               keys.wechatPlatformSerial, [] { return randomText(40, "0123456789ABCDEF") + '\n'; });
    ensurePair(keys.alipayPrivateKey, keys.alipayPublicKey);
    // The APIv3 key a merchant sets: 32 characters, used as the 32 bytes of the AES-256 key.
    if (!QFile::exists(keys.wechatApiV3Key))
        writePrivate(
            keys.wechatApiV3Key,
            randomText(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"));
    // Fixed demo ids: a sandbox signs with keys of its own, never with a real merchant's.
    if (!QFile::exists(keys.ids))
        writePrivate(keys.ids, QByteArrayLiteral("wechatpay_mchid=1900000109\n"
                                                 "wechatpay_appid=wxd678efh567hg6787\n"
                                                 "alipay_app_id=2021000000000001\n"));
    return keys;
}

PlatformKeys PlatformKeys::read(const QString &directory)
{
    const SandboxKeys paths(directory);
    PlatformKeys keys;
    for (const QByteArray &line : readFile(paths.ids).split('\n')) {
        const qsizetype at = line.indexOf('=');
        const QByteArray name = line.left(at).trimmed();
        const QByteArray value = line.mid(at + 1).trimmed();
        if (name == "wechatpay_mchid")
            keys.wechatMchId = value;
        else if (name == "wechatpay_appid")
            keys.wechatAppId = value;
        else if (name == "alipay_app_id")
            keys.alipayAppId = value;
    }
    keys.wechatSerial = readFile(paths.wechatPlatformSerial).trimmed();
    keys.wechatApiV3Key = readFile(paths.wechatApiV3Key).trimmed();
    keys.wechatPrivateKeyPem = readFile(paths.wechatPlatformPrivateKey);
    keys.alipayPrivateKeyPem = readFile(paths.alipayPrivateKey);
    return keys;
}

QStringList callbackdKeyFlags(const SandboxKeys &keys, const PlatformKeys &ids)
{
    return {QStringLiteral("--wechatpay-mchid"),
            QString::fromLatin1(ids.wechatMchId),
            QStringLiteral("--wechatpay-appid"),
            QString::fromLatin1(ids.wechatAppId),
            QStringLiteral("--wechatpay-apiv3-key-file"),
            keys.wechatApiV3Key,
            QStringLiteral("--wechatpay-platform-key"),
            QString::fromLatin1(ids.wechatSerial) + QLatin1Char('=') + keys.wechatPlatformPublicKey,
            QStringLiteral("--alipay-app-id"),
            QString::fromLatin1(ids.alipayAppId),
            QStringLiteral("--alipay-public-key"),
            keys.alipayPublicKey};
}

} // namespace payops
