#pragma once

#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/channel.h"
#include "httpserver.h"
#include "serviceoptions.h"

#include <QByteArray>

#include <optional>
#include <variant>

namespace payops {

// What the endpoint decides about a request before any database work, on the I/O thread:
// where it goes and, for a callback, whether it is signed and well-formed. Apart from
// CallbackService so that the HTTP fuzzer (tests/fuzz) drives this very path without a
// database behind it.
enum class Route { Pay, WechatPay, Alipay, Health, Metrics };

// The route of a request, or the 404 or 405 to answer.
std::variant<Route, HttpResponse> routeOf(const HttpRequest &request);
HttpResponse noSuchPath();

// The wire format a callback route takes; nullopt for the others.
std::optional<WireFormat> wireOf(Route route);
// Whether the options hold every key the format needs: a platform's path without them is 404.
bool isServed(WireFormat format, const ServiceOptions &options);

// The signature first, then the strict parse: the callback to process, or the 401 or 400
// answer to send.
std::variant<CallbackRequest, CallbackAnswer>
admitCallback(const QByteArray &secret, const HttpRequest &request, qint64 nowSeconds);

// A callback in any wire format, admitted by that format's own checks (admitCallback,
// admitWechatPay, admitAlipay) with the keys in the options.
std::variant<CallbackRequest, CallbackAnswer> admitAs(WireFormat format,
                                                      const ServiceOptions &options,
                                                      const HttpRequest &request,
                                                      qint64 nowSeconds);

} // namespace payops
