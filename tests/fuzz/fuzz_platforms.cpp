// The platforms' notifications past their signatures, as payops-callbackd admits them
// (domain/callback/wechatpay.h, alipay.h). A fuzzer cannot sign, so this target plays the
// platform with its own key, through OpenSSL directly, never through payops's code:
//
//   "w\n<transaction>"  the decrypted WeChat Pay resource, sealed under the APIv3 key, put in a
//                       notification and signed
//   "r\n<refund>"       the same for a refund's outcome (event_type REFUND.SUCCESS)
//   "o\n<body>"         a WeChat Pay notification body, signed as it is
//   "a\n<form>"         an Alipay form: its name=value pairs are signed as Alipay signs them
//                       (sorted by name, sign and sign_type and empty values left out)
#include "fuzzinput.h"

#include "domain/callback/alipay.h"
#include "domain/callback/strictjson.h"
#include "domain/callback/wechatpay.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <algorithm>

using namespace payops;

namespace {

constexpr qint64 kNow = 1796500000;
const QByteArray kApiV3Key = "k7Q2pX9mW4rT8vB1nC6yH3jL5sD0fG2a";
const QByteArray kNonce = "0123456789ab";
const QByteArray kSerial = "FUZZSERIAL";

EVP_PKEY *platformKey()
{
    static EVP_PKEY *key = EVP_RSA_gen(2048);
    return key;
}

RsaPublicKey publicKey()
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(bio, platformKey());
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    QString error;
    auto key = RsaPublicKey::fromPem(QByteArray(data, size), &error);
    BIO_free(bio);
    if (!key)
        fuzz::broken("the platform's own public key reads");
    return *key;
}

QByteArray sign(const QByteArray &message)
{
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    size_t size = 0;
    EVP_DigestSignInit(context, nullptr, EVP_sha256(), nullptr, platformKey());
    const auto *bytes = reinterpret_cast<const unsigned char *>(message.constData());
    EVP_DigestSign(context, nullptr, &size, bytes, size_t(message.size()));
    QByteArray signature(qsizetype(size), Qt::Uninitialized);
    EVP_DigestSign(context, reinterpret_cast<unsigned char *>(signature.data()), &size, bytes,
                   size_t(message.size()));
    EVP_MD_CTX_free(context);
    return signature.toBase64();
}

QByteArray seal(const QByteArray &plain)
{
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    QByteArray sealed(plain.size() + 16, Qt::Uninitialized);
    auto *out = reinterpret_cast<unsigned char *>(sealed.data());
    int written = 0;
    EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nullptr,
                       reinterpret_cast<const unsigned char *>(kApiV3Key.constData()),
                       reinterpret_cast<const unsigned char *>(kNonce.constData()));
    EVP_EncryptUpdate(context, nullptr, &written,
                      reinterpret_cast<const unsigned char *>("transaction"), 11);
    EVP_EncryptUpdate(context, out, &written,
                      reinterpret_cast<const unsigned char *>(plain.constData()),
                      int(plain.size()));
    int last = 0;
    EVP_EncryptFinal_ex(context, out + written, &last);
    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, out + plain.size());
    EVP_CIPHER_CTX_free(context);
    return sealed.toBase64();
}

void checkAdmitted(const Admission &admission, const QByteArray &body)
{
    if (const auto *refusal = std::get_if<CallbackAnswer>(&admission)) {
        if (refusal->httpStatus != 400 && refusal->httpStatus != 401)
            fuzz::broken("a notification is admitted or refused 400 or 401");
        return;
    }
    const auto &request = std::get<CallbackRequest>(admission);
    const qsizetype payNoLength = strictjson::codePointCount(request.payNo);
    if (payNoLength < 1 || payNoLength > 64 || request.amountFen < 0 ||
        request.currency.size() != 3 || request.tradeStatus.isEmpty())
        fuzz::broken("an admitted notification holds a callback the pipeline takes");
    // The order number is what pay_callback_log.out_trade_no holds, and the order id is it
    // when it is one: a handler (forMode) refuses the rest, a gateway passes them on.
    if (request.orderNo.isEmpty() || request.orderNo.size() > 64 ||
        request.orderId != orderIdFrom(request.orderNo).value_or(0) ||
        std::any_of(request.orderNo.cbegin(), request.orderNo.cend(),
                    [](char c) { return c <= ' ' || c > '~'; }))
        fuzz::broken("an admitted notification's order number is 1-64 visible ASCII characters");
    // A later event of the trade pays nothing, and its name goes to the handler in a header.
    if (!request.event.isEmpty() &&
        (request.isSuccess() || request.event.size() > 128 ||
         std::any_of(request.event.cbegin(), request.event.cend(),
                     [](char c) { return (c >= 0 && c < ' ') || c == 127; })))
        fuzz::broken("a later event is no success, and its name is a header's value");
    if (request.rawBody != body || !request.sameContentAs(request))
        fuzz::broken("the request keeps its body and equals itself");
}

void wechat(const QByteArray &body)
{
    static const WechatPayKeys keys = [] {
        WechatPayKeys made;
        made.mchid = "1900000109";
        made.appids = {"wxd678efh567hg6787"};
        made.apiV3Key = kApiV3Key;
        made.platformKeys.insert(kSerial, publicKey());
        return made;
    }();
    const QByteArray timestamp = QByteArray::number(kNow);
    const QByteArray signature = sign(timestamp + "\nNONCE\n" + body + '\n');
    const HeaderLookup header = [&](const char *name) -> QByteArray {
        const QByteArray lower = QByteArray(name).toLower();
        if (lower == "wechatpay-serial")
            return kSerial;
        if (lower == "wechatpay-timestamp")
            return timestamp;
        if (lower == "wechatpay-nonce")
            return "NONCE";
        if (lower == "wechatpay-signature")
            return signature;
        return {};
    };
    checkAdmitted(admitWechatPay(keys, header, body, kNow), body);
}

void alipay(const QByteArray &form)
{
    static const AlipayKeys keys = [] {
        AlipayKeys made;
        made.apps.insert("2021000000000001", publicKey());
        return made;
    }();
    // The pairs as Alipay signs them, each name and value in the form's own bytes.
    QList<std::pair<QByteArray, QByteArray>> pairs;
    for (const QByteArray &pair : form.split('&')) {
        const qsizetype equals = pair.indexOf('=');
        if (equals > 0)
            pairs.append(
                {QByteArray::fromPercentEncoding(QByteArray(pair.left(equals)).replace('+', ' ')),
                 QByteArray::fromPercentEncoding(
                     QByteArray(pair.mid(equals + 1)).replace('+', ' '))});
    }
    std::sort(pairs.begin(), pairs.end());
    QByteArrayList content;
    for (const auto &[name, value] : std::as_const(pairs))
        if (name != "sign" && name != "sign_type" && !value.isEmpty())
            content << name + '=' + value;
    const QByteArray body =
        form + "&sign_type=RSA2&sign=" + sign(content.join('&')).toPercentEncoding();
    checkAdmitted(admitAlipay(
                      keys, [](const char *) { return QByteArray(); }, body),
                  body);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::quietLogs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto [mode, rest] = fuzz::splitFirstLine(fuzz::bytes(data, size));
    if (mode == "w")
        wechat(R"({"id":"EV","resource":{"algorithm":"AEAD_AES_256_GCM","ciphertext":")" +
               seal(rest) + R"(","associated_data":"transaction","nonce":")" + kNonce + R"("}})");
    else if (mode == "r")
        wechat(R"({"id":"EV","event_type":"REFUND.SUCCESS","resource":{"algorithm":)"
               R"("AEAD_AES_256_GCM","ciphertext":")" +
               seal(rest) + R"(","associated_data":"transaction","nonce":")" + kNonce + R"("}})");
    else if (mode == "o")
        wechat(rest);
    else if (mode == "a")
        alipay(rest);
    // Yuan as Alipay writes them: what reads as fen writes back as the same yuan.
    if (const auto fen = yuanToFen(rest)) {
        const QByteArray yuan = QByteArray::number(*fen / 100) + '.' +
                                QByteArray::number(*fen % 100).rightJustified(2, '0');
        if (yuanToFen(yuan) != fen || !(rest == yuan || rest + "0" == yuan || rest + ".00" == yuan))
            fuzz::broken("yuan read as fen write back as the same yuan");
    }
    return 0;
}
