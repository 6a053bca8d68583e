#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"
#include "channel.h"

#include <QByteArray>

#include <functional>
#include <optional>
#include <variant>

namespace payops {

// What the platforms' notifications (wechatpay.h, alipay.h) share on their way in.

// A request header by name, case-insensitively; empty when absent.
using HeaderLookup = std::function<QByteArray(const char *name)>;

// A notification admitted as the pipeline's callback, or the refusal to answer: 401 when it is
// not the platform's (signature, key, time, decryption), 400 when its content is wrong.
using Admission = std::variant<CallbackRequest, CallbackAnswer>;

CallbackAnswer unauthorized(const QString &reason);
CallbackAnswer invalid(const QString &reason);

// `admission`, marked as coming after a signature that verified over `signedBytes`: the
// platform's own request, even when its content is then refused. The same content sent again
// (in another parameter order or escape, where the signature allows) has the same digest.
Admission signedOver(Admission admission, const QByteArray &signedBytes);

// The platform's headers of `format` present in the request, as pay_callback_log.raw_headers
// keeps them (joinHeaders): trimmed, and without a value holding a control character.
QByteArray capturedHeaders(WireFormat format, const HeaderLookup &header);

// A payops order id from the merchant's order number the platform sends back (out_trade_no):
// decimal digits only, 1 to the largest BIGINT; nullopt otherwise.
std::optional<qint64> orderIdFrom(const QByteArray &outTradeNo);

// *error when `outTradeNo` is not an order number the platform can have sent: WeChat Pay's are
// 1 to 32 of A-Z a-z 0-9 _ - | *, Alipay's 1 to 64 visible ASCII characters (no space).
bool checkWechatPayOrderNo(const QByteArray &outTradeNo, QString *error);
bool checkAlipayOrderNo(const QByteArray &outTradeNo, QString *error);
// *error, naming `field`, when `value` is not 1 to 64 visible ASCII characters: a refund's
// number (WeChat Pay's refund_id, Alipay's out_biz_no) or Alipay's trade_status, which name a
// later event in a header to the handler.
bool checkVisibleAscii(const QByteArray &value, const char *field, QString *error);

// `admission` as an instance in its mode takes it. A gateway takes any order number the
// platform sends and passes it on. A handler pays payops's own orders, by their ids: a request
// whose out_trade_no is no payops order id becomes a 400 (still the platform's signed request).
Admission forMode(Admission admission, bool handler);

// *error, naming `field`, when `value` is not 1 to maxLength characters of UTF-8.
bool checkLength(const QByteArray &value, const char *field, int maxLength, QString *error);

} // namespace payops
