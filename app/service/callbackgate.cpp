#include "callbackgate.h"

#include "domain/callback/signature.h"

namespace payops {

std::variant<Route, HttpResponse> routeOf(const HttpRequest &request)
{
    const bool get = request.method == "GET" || request.method == "HEAD";
    if (request.path == "/callbacks/pay") {
        if (request.method == "POST")
            return Route::Pay;
    } else if (request.path == "/healthz") {
        if (get)
            return Route::Health;
    } else if (request.path == "/metrics") {
        if (get)
            return Route::Metrics;
    } else {
        return HttpResponse{404, R"({"status":"error","reason":"no such path"})"};
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
    QString parseError;
    auto callback = CallbackRequest::parse(request.body, &parseError);
    if (!callback)
        return CallbackAnswer::failure(400, Outcome::Invalid, parseError);
    // Kept with the raw body, so that a gateway forwards them and the team's handler can check
    // the signature itself.
    QList<std::pair<QByteArray, QByteArray>> headers;
    for (const QByteArray &name : platformHeaders(WireFormat::Payops)) {
        const QByteArray value = request.header(name.constData());
        if (!value.isEmpty())
            headers.append({name, value});
    }
    callback->wire = WireFormat::Payops;
    callback->rawHeaders = joinHeaders(headers);
    return std::move(*callback);
}

} // namespace payops
