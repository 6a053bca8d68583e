#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>

namespace payops {

// The wire format a callback arrived in. Each has its own path, its own signature and its own
// answers; once admitted, every format is one CallbackRequest and takes the same pipeline.
enum class WireFormat { Payops, WechatPay, Alipay };

// pay_callback_log.wire_format: "payops", "wechatpay", "alipay".
const char *wireFormatName(WireFormat format);
std::optional<WireFormat> wireFormatFromName(const QByteArray &name);

// The endpoint's path for the format: /callbacks/pay, /callbacks/wechatpay, /callbacks/alipay.
const char *wireFormatPath(WireFormat format);

// The request headers that belong to the callback as the platform sent it: kept with the raw
// body in pay_callback_log.raw_headers, and sent on unchanged by a gateway, so the team's
// handler can verify the platform's signature itself.
const QList<QByteArray> &platformHeaders(WireFormat format);

// raw_headers holds them as "Name: value" lines joined by "\r\n", in platformHeaders' order,
// absent headers left out.
QByteArray joinHeaders(const QList<std::pair<QByteArray, QByteArray>> &headers);
// Whether a header value may be stored and passed on: no control character but a tab. A bare
// CR that a client put in a User-Agent would end the line at a handler that reads CR as a
// line's end, and start a header of the client's choosing (an Idempotency-Key) there.
bool isPassableHeaderValue(const QByteArray &value);
QList<std::pair<QByteArray, QByteArray>> splitHeaders(const QByteArray &rawHeaders);

} // namespace payops
