#pragma once

#include "httplimits.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

#include <functional>
#include <memory>

namespace payops {

struct HttpRequest
{
    QByteArray method;
    QByteArray path;
    QByteArray body;
    std::function<QByteArray(const char *name)> header;
};

struct HttpResponse
{
    int status = 200;
    QByteArray body;
    QByteArray contentType = "application/json";
    // A signed callback was taken: only such answers renew the connection's keep-alive time,
    // so a client cannot hold a slot with cheap requests (health checks, unknown paths).
    bool useful = false;
};

// Answers one request; callable once, from any thread.
using HttpResponder = std::function<void(HttpResponse)>;
// Runs on an I/O thread and must not block: it answers at once, or hands the responder to
// another thread that answers later while the connection waits parked, costing no thread.
using HttpHandler = std::function<void(HttpRequest request, HttpResponder respond)>;

// The endpoint's HTTP/1.1 server, on libmicrohttpd's event loops: an idle or slow client
// costs a descriptor and a timer, never a thread. It enforces HttpLimits, including a
// deadline per request that a client dripping a byte at a time cannot stretch, and answers
// 413 for a body over the limit as soon as it is known (chunked bodies are counted as they
// are decoded, so reading stops at the limit).
//
// Slots are kept for the clients that use them: a connection over its address's share is
// closed as soon as it is accepted; one that has taken no callback for the keep-alive time,
// or has lived past its age, is closed between requests; and when every slot is taken, a new
// connection evicts the one that has been least useful (never a callback first, then the
// longest since its last). Every close is counted by its reason.
class HttpServer final
{
    Q_DECLARE_TR_FUNCTIONS(payops::HttpServer)

public:
    // onTooLarge runs on an I/O thread each time a body over the limit is refused.
    HttpServer(HttpLimits limits, HttpHandler handler, std::function<void()> onTooLarge = {});
    ~HttpServer();
    HttpServer(const HttpServer &) = delete;
    HttpServer &operator=(const HttpServer &) = delete;

    // Binds host:port (0: any free port) without SO_REUSEPORT, so a port in use is an error
    // rather than a silent share of the traffic. Returns the port; throws std::runtime_error.
    int listen(const QString &host, int port);
    // Starts serving on the bound socket. Throws std::runtime_error.
    void start();
    // Stops accepting connections and new requests (they get 503 and the connection is
    // closed), waits until every request already taken has been answered, then closes all.
    void stop();

    // Why the server closed a connection on its own.
    enum class CloseReason { RequestTimeout, Idle, Age, Evicted, AddressLimit, Count };
    static const char *label(CloseReason reason); // the metrics label: request_timeout, idle, ...

    // What the limits counted so far, for /metrics.
    struct Counters
    {
        qint64 closed[int(CloseReason::Count)] = {};
        qint64 openConnections = 0;
        qint64 closedFor(CloseReason reason) const { return closed[int(reason)]; }
    };
    Counters counters() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace payops
