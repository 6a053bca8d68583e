#pragma once

#include <QByteArray>

namespace payops {

// X-Payops-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>, with
// X-Payops-Timestamp in unix seconds, accepted within kSignatureToleranceSeconds either way.
constexpr qint64 kSignatureToleranceSeconds = 300;

enum class SignatureCheck { Valid, Missing, Malformed, Stale, Mismatch };

QByteArray signatureHeader(const QByteArray &secret, qint64 timestamp, const QByteArray &body);

SignatureCheck verifySignature(const QByteArray &secret, const QByteArray &timestampHeader,
                               const QByteArray &signatureHeader, const QByteArray &body,
                               qint64 nowSeconds);

const char *describe(SignatureCheck check);

// Reads the signing secret from the file a --secret-file flag names, trimmed of surrounding
// white space. Returns an empty string, or one sentence naming the file when the flag is
// missing, the file cannot be read, other users may use it (any group or other permission, as
// ssh refuses for a private key), or it is larger than a secret can be (64 KiB).
QString readSecretFile(const QString &path, QByteArray *secret);

// Reads a file only its owner may use, untrimmed: the secret's and the platforms' keys. Returns
// an empty string, or one sentence naming the file as `kind` ("the secret file") when it cannot
// be read, other users may use it, or it is larger than 64 KiB.
QString readPrivateFile(const QString &path, const QString &kind, QByteArray *content);

} // namespace payops
