#pragma once

#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbackrequest.h"
#include "httpserver.h"

#include <QByteArray>

#include <variant>

namespace payops {

// What the endpoint decides about a request before any database work, on the I/O thread:
// where it goes and, for a callback, whether it is signed and well-formed. Apart from
// CallbackService so that the HTTP fuzzer (tests/fuzz) drives this very path without a
// database behind it.
enum class Route { Pay, Health, Metrics };

// The route of a request, or the 404 or 405 to answer.
std::variant<Route, HttpResponse> routeOf(const HttpRequest &request);

// The signature first, then the strict parse: the callback to process, or the 401 or 400
// answer to send.
std::variant<CallbackRequest, CallbackAnswer>
admitCallback(const QByteArray &secret, const HttpRequest &request, qint64 nowSeconds);

} // namespace payops
