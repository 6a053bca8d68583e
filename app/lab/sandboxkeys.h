#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace payops {

// The sandbox's test keys for the platforms' formats, in <sandbox>/keys (0700, each file 0600):
// the platform's side, which the storm signs with, and the endpoint's side, which
// payops-callbackd verifies with. Made once; a start of the sandbox keeps them.
struct SandboxKeys
{
    QString directory;
    // WeChat Pay API v3: the platform key pair (its serial in its own file), the merchant's
    // APIv3 key (32 bytes) and the merchant's ids (in `ids`).
    QString wechatPlatformPrivateKey; // the storm signs with it
    QString wechatPlatformPublicKey;  // --wechatpay-platform-key SERIAL=FILE
    QString wechatPlatformSerial;
    QString wechatApiV3Key;
    // Alipay: the key pair of Alipay's notifications to the app.
    QString alipayPrivateKey; // the storm signs with it
    QString alipayPublicKey;  // --alipay-public-key FILE
    QString ids;              // wechatpay_mchid=, wechatpay_appid=, alipay_app_id=

    SandboxKeys() = default;
    explicit SandboxKeys(const QString &keysDirectory);
    // The files above, in the order they are listed.
    QStringList files() const;
};

// <sandboxDirectory>/keys
QString sandboxKeysDirectory(const QString &sandboxDirectory);

// Makes what is missing in <sandboxDirectory>/keys, keeping what is there; returns the paths.
// Throws std::runtime_error naming the file that could not be written.
SandboxKeys ensureSandboxKeys(const QString &sandboxDirectory);

// What the storm needs to speak as the platforms, read from a keys directory.
struct PlatformKeys
{
    QByteArray wechatMchId, wechatAppId, wechatSerial, wechatApiV3Key, wechatPrivateKeyPem;
    QByteArray alipayAppId, alipayPrivateKeyPem;

    // Reads what `directory` holds; a file that is missing leaves its fields empty.
    static PlatformKeys read(const QString &directory);
};

// The payops-callbackd flags that take the keys: the WeChat Pay and the Alipay channel, each
// flag and its value as separate arguments.
QStringList callbackdKeyFlags(const SandboxKeys &keys, const PlatformKeys &ids);

} // namespace payops
