#include "callbackgate.h"

#include "domain/callback/alipay.h"
#include "domain/callback/notification.h"
#include "domain/callback/signature.h"
#include "domain/callback/wechatpay.h"

namespace payops {

HttpResponse noSuchPath()
{
    return HttpResponse{404, R"({"status":"error","reason":"no such path"})"};
}

std::variant<Route, HttpResponse> routeOf(const HttpRequest &request)
{
    const bool get = request.method == "GET" || request.method == "HEAD";
    const bool post = request.method == "POST";
    if (request.path == wireFormatPath(WireFormat::Payops)) {
        if (post)
            return Route::Pay;
    } else if (request.path == wireFormatPath(WireFormat::WechatPay)) {
        if (post)
            return Route::WechatPay;
    } else if (request.path == wireFormatPath(WireFormat::Alipay)) {
        if (post)
            return Route::Alipay;
    } else if (request.path == "/healthz") {
        if (get)
            return Route::Health;
    } else if (request.path == "/metrics") {
        if (get)
            return Route::Metrics;
    } else {
        return noSuchPath();
    }
    return HttpResponse{405, R"({"status":"error","reason":"method not allowed"})"};
}

std::variant<CallbackRequest, CallbackAnswer>
admitCallback(const QByteArray &secret, const HttpRequest &request, qint64 nowSeconds)
{
    const SignatureCheck signature =
        verifySignature(secret, request.header("X-Payops-Timestamp"),
                        request.header("X-Payops-Signature"), request.body, nowSeconds);
    if (signature != SignatureCheck::Valid)
        return CallbackAnswer::failure(401, Outcome::Unauthorized,
                                       QString::fromLatin1(describe(signature)));
    const QByteArray signedBytes =
        request.header("X-Payops-Timestamp").trimmed() + '.' + request.body;
    QString parseError;
    auto callback = CallbackRequest::parse(request.body, &parseError);
    if (!callback)
        return signedOver(CallbackAnswer::failure(400, Outcome::Invalid, parseError), signedBytes);
    // Kept with the raw body, so that a gateway forwards them and the team's handler can check
    // the signature itself.
    callback->wire = WireFormat::Payops;
    callback->rawHeaders = capturedHeaders(WireFormat::Payops, request.header);
    return signedOver(std::move(*callback), signedBytes);
}

std::optional<WireFormat> wireOf(Route route)
{
    switch (route) {
    case Route::Pay:
        return WireFormat::Payops;
    case Route::WechatPay:
        return WireFormat::WechatPay;
    case Route::Alipay:
        return WireFormat::Alipay;
    case Route::Health:
    case Route::Metrics:
        break;
    }
    return std::nullopt;
}

bool isServed(WireFormat format, const ServiceOptions &options)
{
    // A gateway serves payops's own format only with --upstream, its default handler.
    switch (format) {
    case WireFormat::Payops:
        return !options.gateway() || !options.upstream.url.isEmpty();
    case WireFormat::WechatPay:
        return options.wechatPay.configured();
    case WireFormat::Alipay:
        return options.alipay.configured();
    }
    return false;
}

std::variant<CallbackRequest, CallbackAnswer> admitAs(WireFormat format,
                                                      const ServiceOptions &options,
                                                      const HttpRequest &request, qint64 nowSeconds)
{
    switch (format) {
    case WireFormat::Payops:
        break;
    case WireFormat::WechatPay:
        return forMode(admitWechatPay(options.wechatPay, request.header, request.body, nowSeconds),
                       !options.gateway());
    case WireFormat::Alipay:
        return forMode(admitAlipay(options.alipay, request.header, request.body),
                       !options.gateway());
    }
    return admitCallback(options.secret, request, nowSeconds);
}

} // namespace payops
