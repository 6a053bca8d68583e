#pragma once

#include <QByteArray>

#include <memory>

using EVP_PKEY = struct evp_pkey_st;

namespace payops {

// What the test lab needs of OpenSSL to speak as a payment platform: RSA-2048 key pairs,
// RSA-SHA256 (PKCS#1 v1.5) signatures and AES-256-GCM, as WeChat Pay and Alipay use them. Each
// throws std::runtime_error with OpenSSL's reason when OpenSSL refuses.

// A private key, read once and then used by any number of threads at a time.
class RsaPrivateKey final
{
public:
    // A new RSA-2048 key.
    static RsaPrivateKey generate();
    // A PKCS#8 or traditional PEM private key.
    static RsaPrivateKey fromPem(const QByteArray &pem);

    QByteArray privatePem() const; // PKCS#8
    QByteArray publicPem() const;  // SubjectPublicKeyInfo, what `openssl dgst -verify` reads
    // The raw signature over SHA-256(data), PKCS#1 v1.5 padding.
    QByteArray signSha256(const QByteArray &data) const;

private:
    explicit RsaPrivateKey(EVP_PKEY *key);
    std::shared_ptr<EVP_PKEY> m_key;
};

// ciphertext || 16-byte tag, as WeChat Pay's "ciphertext" carries them (before base64).
QByteArray aes256GcmSeal(const QByteArray &key, const QByteArray &nonce,
                         const QByteArray &associatedData, const QByteArray &plaintext);

} // namespace payops
