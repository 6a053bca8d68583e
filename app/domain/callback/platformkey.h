#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

#include <memory>
#include <optional>

struct evp_pkey_st;

namespace payops {

// A payment platform's RSA public key, by which it signs its notifications (WeChat Pay's
// platform key, Alipay's public key). Read once at start; verifying is safe from any thread.
// OpenSSL's EVP does the cryptography: payops writes none of its own.
class RsaPublicKey final
{
    Q_DECLARE_TR_FUNCTIONS(payops::RsaPublicKey)

public:
    // From PEM text: a "PUBLIC KEY", or a "CERTIFICATE" whose key is taken. nullopt, with one
    // sentence in *error, when the text holds no RSA public key (a private key included).
    static std::optional<RsaPublicKey> fromPem(const QByteArray &pem, QString *error);

    // Whether `signature` is RSA-SHA256 (PKCS#1 v1.5) over `message` by this key.
    bool verifySha256(const QByteArray &message, const QByteArray &signature) const;

private:
    std::shared_ptr<evp_pkey_st> m_key;
};

// Decrypts and authenticates AES-256-GCM (WeChat Pay's AEAD_AES_256_GCM): `sealed` is the
// ciphertext followed by its 16-byte tag. nullopt when the key is not 32 bytes, or the tag does
// not match the key, nonce, associated data and ciphertext.
std::optional<QByteArray> openAes256Gcm(const QByteArray &key, const QByteArray &nonce,
                                        const QByteArray &associatedData, const QByteArray &sealed);

} // namespace payops
