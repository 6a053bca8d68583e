#pragma once

#include "notification.h"
#include "platformkey.h"

#include <QByteArray>
#include <QHash>
#include <QList>

namespace payops {

// WeChat Pay API v3's payment notification (POST /callbacks/wechatpay), docs/callback-contract.md,
// "WeChat Pay".
struct WechatPayKeys
{
    QByteArray mchid; // the merchant's id: a notification for another merchant is refused
    // The merchant's apps the payments are for (an app, a mini program, an official account's
    // page: each has its own appid under the one mchid); a payment for another is refused.
    QList<QByteArray> appids;
    QByteArray apiV3Key; // 32 bytes: decrypts each notification's resource
    // The platform's public keys by serial (Wechatpay-Serial): several while one is rotated out.
    QHash<QByteArray, RsaPublicKey> platformKeys;

    // All of them given: the path answers 404 otherwise.
    bool configured() const;
};

// Verifies and decrypts a notification: the signature by the platform key its serial names,
// within kSignatureToleranceSeconds of now; the resource opened with the APIv3 key; the
// transaction taken as the pipeline's callback (channel "wechat"), the raw body kept encrypted.
Admission admitWechatPay(const WechatPayKeys &keys, const HeaderLookup &header,
                         const QByteArray &body, qint64 nowSeconds);

} // namespace payops
