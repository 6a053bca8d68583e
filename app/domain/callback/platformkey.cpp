#include "platformkey.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace payops {
namespace {

constexpr int kGcmTagBytes = 16;

template <typename T, void (*Free)(T *)> struct Deleter
{
    void operator()(T *pointer) const { Free(pointer); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Certificate = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using DigestContext = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, Deleter<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>>;

EVP_PKEY *readPublicKey(const QByteArray &pem)
{
    Bio bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    if (!bio)
        return nullptr;
    if (EVP_PKEY *key = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr))
        return key;
    bio.reset(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    X509Certificate certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    return certificate ? X509_get_pubkey(certificate.get()) : nullptr;
}

} // namespace

std::optional<RsaPublicKey> RsaPublicKey::fromPem(const QByteArray &pem, QString *error)
{
    std::shared_ptr<EVP_PKEY> key(readPublicKey(pem), EVP_PKEY_free);
    if (!key) {
        *error = tr("it holds no public key (-----BEGIN PUBLIC KEY----- or a certificate)");
        return std::nullopt;
    }
    if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) {
        *error = tr("its public key is not an RSA key");
        return std::nullopt;
    }
    RsaPublicKey result;
    result.m_key = std::move(key);
    return result;
}

bool RsaPublicKey::verifySha256(const QByteArray &message, const QByteArray &signature) const
{
    DigestContext context(EVP_MD_CTX_new());
    // EVP_DigestVerifyInit's default padding for an RSA key is PKCS#1 v1.5, as both platforms sign.
    return context &&
           EVP_DigestVerifyInit(context.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) == 1 &&
           EVP_DigestVerify(context.get(),
                            reinterpret_cast<const unsigned char *>(signature.constData()),
                            size_t(signature.size()),
                            reinterpret_cast<const unsigned char *>(message.constData()),
                            size_t(message.size())) == 1;
}

std::optional<QByteArray> openAes256Gcm(const QByteArray &key, const QByteArray &nonce,
                                        const QByteArray &associatedData, const QByteArray &sealed)
{
    if (key.size() != 32 || nonce.isEmpty() || sealed.size() < kGcmTagBytes)
        return std::nullopt;
    const QByteArray ciphertext = sealed.left(sealed.size() - kGcmTagBytes);
    QByteArray tag = sealed.right(kGcmTagBytes);
    CipherContext context(EVP_CIPHER_CTX_new());
    const auto bytes = [](const QByteArray &array) {
        return reinterpret_cast<const unsigned char *>(array.constData());
    };
    QByteArray plain(ciphertext.size(), Qt::Uninitialized);
    int written = 0;
    int finalWritten = 0;
    const bool opened =
        context &&
        EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, int(nonce.size()), nullptr) ==
            1 &&
        EVP_DecryptInit_ex(context.get(), nullptr, nullptr, bytes(key), bytes(nonce)) == 1 &&
        EVP_DecryptUpdate(context.get(), nullptr, &written, bytes(associatedData),
                          int(associatedData.size())) == 1 &&
        EVP_DecryptUpdate(context.get(), reinterpret_cast<unsigned char *>(plain.data()), &written,
                          bytes(ciphertext), int(ciphertext.size())) == 1 &&
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, kGcmTagBytes, tag.data()) == 1 &&
        EVP_DecryptFinal_ex(context.get(),
                            reinterpret_cast<unsigned char *>(plain.data()) + written,
                            &finalWritten) == 1;
    if (!opened)
        return std::nullopt;
    plain.truncate(written + finalWritten);
    return plain;
}

} // namespace payops
