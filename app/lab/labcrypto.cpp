#include "labcrypto.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <stdexcept>
#include <string>

namespace payops {
namespace {

[[noreturn]] void fail(const char *what)
{
    std::string message = std::string(what) + ": ";
    char reason[256] = {};
    ERR_error_string_n(ERR_get_error(), reason, sizeof reason);
    ERR_clear_error();
    throw std::runtime_error(message + reason);
}

struct BioDeleter
{
    void operator()(BIO *bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;

QByteArray contents(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return QByteArray(data, qsizetype(size));
}

struct MdContextDeleter
{
    void operator()(EVP_MD_CTX *context) const { EVP_MD_CTX_free(context); }
};

struct CipherContextDeleter
{
    void operator()(EVP_CIPHER_CTX *context) const { EVP_CIPHER_CTX_free(context); }
};

} // namespace

RsaPrivateKey::RsaPrivateKey(EVP_PKEY *key)
    : m_key(key, EVP_PKEY_free)
{
}

RsaPrivateKey RsaPrivateKey::generate()
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    if (!key)
        fail("cannot generate an RSA-2048 key");
    return RsaPrivateKey(key);
}

RsaPrivateKey RsaPrivateKey::fromPem(const QByteArray &pem)
{
    const Bio bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (!key)
        fail("not a PEM private key");
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
        EVP_PKEY_free(key);
        throw std::runtime_error("not an RSA private key");
    }
    return RsaPrivateKey(key);
}

QByteArray RsaPrivateKey::privatePem() const
{
    const Bio bio(BIO_new(BIO_s_mem()));
    if (!bio ||
        !PEM_write_bio_PrivateKey(bio.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr))
        fail("cannot write the private key");
    return contents(bio.get());
}

QByteArray RsaPrivateKey::publicPem() const
{
    const Bio bio(BIO_new(BIO_s_mem()));
    if (!bio || !PEM_write_bio_PUBKEY(bio.get(), m_key.get()))
        fail("cannot write the public key");
    return contents(bio.get());
}

QByteArray RsaPrivateKey::signSha256(const QByteArray &data) const
{
    const std::unique_ptr<EVP_MD_CTX, MdContextDeleter> context(EVP_MD_CTX_new());
    EVP_PKEY_CTX *keyContext = nullptr;
    size_t size = 0;
    if (!context ||
        EVP_DigestSignInit(context.get(), &keyContext, EVP_sha256(), nullptr, m_key.get()) != 1 ||
        EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) != 1 ||
        EVP_DigestSign(context.get(), nullptr, &size,
                       reinterpret_cast<const unsigned char *>(data.constData()),
                       size_t(data.size())) != 1)
        fail("cannot sign");
    QByteArray signature(qsizetype(size), '\0');
    if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char *>(signature.data()), &size,
                       reinterpret_cast<const unsigned char *>(data.constData()),
                       size_t(data.size())) != 1)
        fail("cannot sign");
    signature.truncate(qsizetype(size));
    return signature;
}

QByteArray aes256GcmSeal(const QByteArray &key, const QByteArray &nonce,
                         const QByteArray &associatedData, const QByteArray &plaintext)
{
    constexpr int kTagBytes = 16;
    if (key.size() != 32)
        throw std::runtime_error("an AES-256 key has 32 bytes");
    const std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter> context(EVP_CIPHER_CTX_new());
    const auto bytes = [](const QByteArray &array) {
        return reinterpret_cast<const unsigned char *>(array.constData());
    };
    QByteArray sealed(plaintext.size() + kTagBytes, '\0');
    auto *out = reinterpret_cast<unsigned char *>(sealed.data());
    int written = 0;
    int ignored = 0;
    if (!context ||
        EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, int(nonce.size()), nullptr) !=
            1 ||
        EVP_EncryptInit_ex(context.get(), nullptr, nullptr, bytes(key), bytes(nonce)) != 1 ||
        EVP_EncryptUpdate(context.get(), nullptr, &ignored, bytes(associatedData),
                          int(associatedData.size())) != 1 ||
        EVP_EncryptUpdate(context.get(), out, &written, bytes(plaintext), int(plaintext.size())) !=
            1 ||
        EVP_EncryptFinal_ex(context.get(), out + written, &ignored) != 1 ||
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                            out + plaintext.size()) != 1)
        fail("cannot encrypt with AES-256-GCM");
    return sealed;
}

} // namespace payops
