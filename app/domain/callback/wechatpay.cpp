#include "wechatpay.h"

#include "signature.h"
#include "strictjson.h"

namespace payops {
namespace {

using strictjson::Kind;
using strictjson::Members;

// The member `name` of `members` (inside `where`, for the message) if it has `kind`; nullptr,
// with *error, when it is absent or another kind.
const strictjson::Value *member(const Members &members, const char *where, const char *name,
                                Kind kind, QString *error)
{
    const auto found = members.constFind(QByteArray(name));
    if (found != members.cend() && found->kind == kind)
        return &*found;
    const char *what = kind == Kind::String   ? "a string"
                       : kind == Kind::Number ? "a number"
                                              : "an object";
    *error = QStringLiteral("%1%2 must be %3")
                 .arg(QLatin1String(where), QLatin1String(name), QLatin1String(what));
    return nullptr;
}

// A notification opened: its event_type and its resource decrypted (JSON text).
struct OpenedNotification
{
    QByteArray eventType;
    QByteArray resource;
};

// The event types of a refund's outcome (退款结果通知): a later event of the trade.
bool isRefundEvent(const QByteArray &eventType)
{
    return eventType == "REFUND.SUCCESS" || eventType == "REFUND.ABNORMAL" ||
           eventType == "REFUND.CLOSED";
}

std::variant<OpenedNotification, CallbackAnswer> openResource(const WechatPayKeys &keys,
                                                              const QByteArray &body)
{
    QString error;
    const auto outer = strictjson::parseObject(body, &error);
    if (!outer)
        return invalid(error);
    // Absent in none of the platform's notifications; a body without one is read as a payment.
    QByteArray eventType;
    const auto type = outer->constFind("event_type");
    if (type != outer->cend()) {
        if (type->kind != Kind::String || !checkLength(type->text, "event_type", 32, &error))
            return invalid(
                type->kind != Kind::String ? QStringLiteral("event_type must be a string") : error);
        eventType = type->text;
    }
    const auto *resourceValue = member(*outer, "", "resource", Kind::Object, &error);
    if (!resourceValue)
        return invalid(error);
    const auto resource = strictjson::parseObject(resourceValue->text, &error);
    if (!resource)
        return invalid(error);
    const auto *algorithm = member(*resource, "resource.", "algorithm", Kind::String, &error);
    const auto *ciphertext =
        algorithm ? member(*resource, "resource.", "ciphertext", Kind::String, &error) : nullptr;
    const auto *nonce =
        ciphertext ? member(*resource, "resource.", "nonce", Kind::String, &error) : nullptr;
    if (!nonce)
        return invalid(error);
    if (algorithm->text != "AEAD_AES_256_GCM")
        return invalid(QStringLiteral("resource.algorithm must be AEAD_AES_256_GCM"));
    const auto associated = resource->constFind("associated_data");
    const QByteArray associatedData =
        associated == resource->cend() ? QByteArray() : associated->text;
    const auto sealed =
        QByteArray::fromBase64Encoding(ciphertext->text, QByteArray::AbortOnBase64DecodingErrors);
    if (!sealed)
        return invalid(QStringLiteral("resource.ciphertext is not base64"));
    // The platform's signature covered the body, so a resource that does not open was sealed
    // with another APIv3 key, or by someone else: not the platform's either way.
    const auto plain = openAes256Gcm(keys.apiV3Key, nonce->text, associatedData, *sealed);
    if (!plain)
        return unauthorized(QStringLiteral(
            "resource does not decrypt with the APIv3 key (AEAD_AES_256_GCM tag mismatch)"));
    return OpenedNotification{eventType, *plain};
}

// The amount in fen of `name` in the resource's amount object, or nullopt with *error.
std::optional<qint64> fenOf(const Members &amount, const char *name, QString *error)
{
    const auto *value = member(amount, "resource.amount.", name, Kind::Number, error);
    if (!value)
        return std::nullopt;
    const auto fen = strictjson::integerValue(value->text);
    if (!fen || *fen < 0) {
        *error = QStringLiteral("amount.%1 must be an integer number of fen, 0 or more")
                     .arg(QLatin1String(name));
        return std::nullopt;
    }
    return fen;
}

// A refund's outcome (resource original_type "refund") as a later event of its trade: the
// trade's transaction_id and out_trade_no, the refunded fen, and the event named by the event
// type and refund_id, so that each outcome of each refund is one event. It carries no appid.
std::variant<CallbackRequest, CallbackAnswer>
readRefund(const WechatPayKeys &keys, const QByteArray &eventType, const QByteArray &refund)
{
    QString error;
    const auto members = strictjson::parseObject(refund, &error);
    if (!members)
        return invalid(QStringLiteral("decrypted resource: ") + error);
    const char *where = "resource.";
    const auto *mchid = member(*members, where, "mchid", Kind::String, &error);
    const auto *transactionId =
        mchid ? member(*members, where, "transaction_id", Kind::String, &error) : nullptr;
    const auto *outTradeNo =
        transactionId ? member(*members, where, "out_trade_no", Kind::String, &error) : nullptr;
    const auto *refundId =
        outTradeNo ? member(*members, where, "refund_id", Kind::String, &error) : nullptr;
    const auto *amountValue =
        refundId ? member(*members, where, "amount", Kind::Object, &error) : nullptr;
    if (!amountValue)
        return invalid(error);
    if (mchid->text != keys.mchid)
        return invalid(QStringLiteral("mchid is not this merchant's (--wechatpay-mchid)"));
    if (!checkLength(transactionId->text, "transaction_id", 64, &error) ||
        !checkVisibleAscii(refundId->text, "refund_id", &error) ||
        !checkWechatPayOrderNo(outTradeNo->text, &error))
        return invalid(error);
    const auto amount = strictjson::parseObject(amountValue->text, &error);
    if (!amount)
        return invalid(error);
    const auto refunded = fenOf(*amount, "refund", &error);
    if (!refunded)
        return invalid(error);
    CallbackRequest request;
    request.payNo = transactionId->text;
    request.orderNo = outTradeNo->text;
    request.orderId = orderIdFrom(outTradeNo->text).value_or(0);
    request.amountFen = *refunded;
    request.currency = QStringLiteral("CNY"); // the refund notice names none: WeChat Pay's is CNY
    request.tradeStatus = QString::fromLatin1(eventType);
    request.event = eventType + '/' + refundId->text;
    return request;
}

// The decrypted transaction as the pipeline's callback.
std::variant<CallbackRequest, CallbackAnswer> readTransaction(const WechatPayKeys &keys,
                                                              const QByteArray &transaction)
{
    QString error;
    const auto members = strictjson::parseObject(transaction, &error);
    if (!members)
        return invalid(QStringLiteral("decrypted resource: ") + error);
    const char *where = "resource.";
    const auto *mchid = member(*members, where, "mchid", Kind::String, &error);
    const auto *appid = mchid ? member(*members, where, "appid", Kind::String, &error) : nullptr;
    const auto *transactionId =
        appid ? member(*members, where, "transaction_id", Kind::String, &error) : nullptr;
    const auto *outTradeNo =
        transactionId ? member(*members, where, "out_trade_no", Kind::String, &error) : nullptr;
    const auto *tradeState =
        outTradeNo ? member(*members, where, "trade_state", Kind::String, &error) : nullptr;
    const auto *amountValue =
        tradeState ? member(*members, where, "amount", Kind::Object, &error) : nullptr;
    if (!amountValue)
        return invalid(error);
    if (mchid->text != keys.mchid)
        return invalid(QStringLiteral("mchid is not this merchant's (--wechatpay-mchid)"));
    if (!keys.appids.contains(appid->text))
        return invalid(QStringLiteral("appid is none of this merchant's apps (--wechatpay-appid)"));

    CallbackRequest request;
    if (!checkLength(transactionId->text, "transaction_id", 64, &error) ||
        !checkLength(tradeState->text, "trade_state", 32, &error))
        return invalid(error);
    request.payNo = transactionId->text;
    request.tradeStatus = QString::fromUtf8(tradeState->text);
    if (!checkWechatPayOrderNo(outTradeNo->text, &error))
        return invalid(error);
    request.orderNo = outTradeNo->text;
    request.orderId = orderIdFrom(outTradeNo->text).value_or(0);

    const auto amount = strictjson::parseObject(amountValue->text, &error);
    if (!amount)
        return invalid(error);
    const auto fen = fenOf(*amount, "total", &error);
    const auto *currency =
        fen ? member(*amount, "resource.amount.", "currency", Kind::String, &error) : nullptr;
    if (!currency)
        return invalid(error);
    request.amountFen = *fen;
    const auto code = currencyCode(currency->text);
    if (!code)
        return invalid(QStringLiteral("amount.currency must be three letters"));
    request.currency = *code;

    const auto successTime = members->constFind("success_time");
    if (successTime != members->cend()) {
        const QString problem = paidAtProblem(successTime->text, "success_time");
        if (successTime->kind != Kind::String || !problem.isEmpty())
            return invalid(problem.isEmpty() ? QStringLiteral("success_time must be a string")
                                             : problem);
        request.paidAt = QString::fromUtf8(successTime->text);
    }
    return request;
}

} // namespace

bool WechatPayKeys::configured() const
{
    return !mchid.isEmpty() && !appids.isEmpty() && apiV3Key.size() == 32 &&
           !platformKeys.isEmpty();
}

Admission admitWechatPay(const WechatPayKeys &keys, const HeaderLookup &header,
                         const QByteArray &body, qint64 nowSeconds)
{
    const QByteArray serial = header("Wechatpay-Serial").trimmed();
    const QByteArray signature = header("Wechatpay-Signature").trimmed();
    const QByteArray timestamp = header("Wechatpay-Timestamp").trimmed();
    const QByteArray nonce = header("Wechatpay-Nonce").trimmed();
    if (serial.isEmpty() || signature.isEmpty() || timestamp.isEmpty() || nonce.isEmpty())
        return unauthorized(QStringLiteral("Wechatpay-Serial, Wechatpay-Signature, "
                                           "Wechatpay-Timestamp and Wechatpay-Nonce are required"));
    const QByteArray type = header("Wechatpay-Signature-Type").trimmed();
    if (!type.isEmpty() && type != "WECHATPAY2-SHA256-RSA2048")
        return unauthorized(
            QStringLiteral("Wechatpay-Signature-Type must be WECHATPAY2-SHA256-RSA2048"));
    const auto key = keys.platformKeys.constFind(serial);
    if (key == keys.platformKeys.cend())
        return unauthorized(QStringLiteral(
            "Wechatpay-Serial names no configured platform key (--wechatpay-platform-key)"));
    bool ok = false;
    const qint64 seconds = timestamp.toLongLong(&ok);
    if (!ok || seconds < nowSeconds - kSignatureToleranceSeconds ||
        seconds > nowSeconds + kSignatureToleranceSeconds)
        return unauthorized(QStringLiteral("Wechatpay-Timestamp outside the 300 s tolerance"));
    const auto decoded =
        QByteArray::fromBase64Encoding(signature, QByteArray::AbortOnBase64DecodingErrors);
    const QByteArray message = timestamp + '\n' + nonce + '\n' + body + '\n';
    if (!decoded || !key->verifySha256(message, *decoded))
        return unauthorized(QStringLiteral("Wechatpay-Signature does not match"));

    const auto opened = openResource(keys, body);
    if (const auto *refusal = std::get_if<CallbackAnswer>(&opened))
        return signedOver(*refusal, message);
    const auto &notification = std::get<OpenedNotification>(opened);
    auto read = isRefundEvent(notification.eventType)
                    ? readRefund(keys, notification.eventType, notification.resource)
                    : readTransaction(keys, notification.resource);
    if (auto *request = std::get_if<CallbackRequest>(&read)) {
        request->channel = QStringLiteral("wechat"); // the statement readers' name
        request->wire = WireFormat::WechatPay;
        request->rawBody = body;
        request->rawHeaders = capturedHeaders(WireFormat::WechatPay, header);
    }
    return signedOver(std::move(read), message);
}

} // namespace payops
