#include "channel.h"

#include <algorithm>

namespace payops {

const char *wireFormatName(WireFormat format)
{
    switch (format) {
    case WireFormat::Payops:
        return "payops";
    case WireFormat::WechatPay:
        return "wechatpay";
    case WireFormat::Alipay:
        return "alipay";
    }
    return "payops";
}

std::optional<WireFormat> wireFormatFromName(const QByteArray &name)
{
    for (const WireFormat format : {WireFormat::Payops, WireFormat::WechatPay, WireFormat::Alipay})
        if (name == wireFormatName(format))
            return format;
    return std::nullopt;
}

const char *wireFormatPath(WireFormat format)
{
    switch (format) {
    case WireFormat::Payops:
        return "/callbacks/pay";
    case WireFormat::WechatPay:
        return "/callbacks/wechatpay";
    case WireFormat::Alipay:
        return "/callbacks/alipay";
    }
    return "/callbacks/pay";
}

const QList<QByteArray> &platformHeaders(WireFormat format)
{
    static const QList<QByteArray> payops{"Content-Type", "X-Payops-Timestamp",
                                          "X-Payops-Signature"};
    static const QList<QByteArray> wechatPay{
        "Content-Type",     "Wechatpay-Timestamp",      "Wechatpay-Nonce", "Wechatpay-Signature",
        "Wechatpay-Serial", "Wechatpay-Signature-Type", "Request-ID",      "User-Agent"};
    static const QList<QByteArray> alipay{"Content-Type", "User-Agent"};
    switch (format) {
    case WireFormat::Payops:
        return payops;
    case WireFormat::WechatPay:
        return wechatPay;
    case WireFormat::Alipay:
        return alipay;
    }
    return payops;
}

QByteArray joinHeaders(const QList<std::pair<QByteArray, QByteArray>> &headers)
{
    QByteArray joined;
    for (const auto &[name, value] : headers) {
        if (!joined.isEmpty())
            joined += "\r\n";
        joined += name + ": " + value;
    }
    return joined;
}

bool isPassableHeaderValue(const QByteArray &value)
{
    return std::none_of(value.cbegin(), value.cend(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return (byte < 0x20 && c != '\t') || byte == 0x7f;
    });
}

QList<std::pair<QByteArray, QByteArray>> splitHeaders(const QByteArray &rawHeaders)
{
    QList<std::pair<QByteArray, QByteArray>> headers;
    for (const QByteArray &line : rawHeaders.split('\n')) {
        const QByteArray trimmed = line.endsWith('\r') ? line.chopped(1) : line;
        const qsizetype colon = trimmed.indexOf(':');
        if (colon <= 0)
            continue;
        headers.append({trimmed.left(colon), trimmed.mid(colon + 1).trimmed()});
    }
    return headers;
}

} // namespace payops
