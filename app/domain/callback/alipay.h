#pragma once

#include "notification.h"
#include "platformkey.h"

#include <QByteArray>
#include <QHash>

#include <optional>

namespace payops {

// Alipay's asynchronous payment notification (POST /callbacks/alipay, a form), docs/callback-
// contract.md, "Alipay".
struct AlipayKeys
{
    // Alipay's public key (not the app's own) for each app of the merchant the payments are
    // for, by app_id: an app, a mini program and a web page each have their own.
    QHash<QByteArray, RsaPublicKey> apps;

    // One app at least: the path answers 404 otherwise.
    bool configured() const;
};

// Verifies a notification: the form in the charset it names (utf-8, the default, or gbk),
// `sign` (RSA2) over the other parameters sorted by name, by Alipay's public key; app_id ours;
// the trade taken as the pipeline's callback (channel "alipay"), the raw body kept as received.
Admission admitAlipay(const AlipayKeys &keys, const HeaderLookup &header, const QByteArray &body);

// A yuan amount as Alipay writes it ("88.80", "88.8", "88") in fen, by its digits: nullopt for
// a third decimal, a sign, an exponent or anything else.
std::optional<qint64> yuanToFen(const QByteArray &yuan);

} // namespace payops
