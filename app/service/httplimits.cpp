#include "httplimits.h"

#include <QtGlobal>

namespace payops {

const std::vector<HttpLimitOption> &httpLimitOptions()
{
    // The descriptions are marked for translation here and translated where --help is built.
    static const std::vector<HttpLimitOption> options{
        {"io-threads", QT_TRANSLATE_NOOP("payops::ServiceCommandLine", "HTTP event loops."),
         &HttpLimits::ioThreads, 1, 64},
        {"max-connections",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine", "Open connections, all clients together."),
         &HttpLimits::maxConnections, 16, 1000000},
        {"max-connections-per-ip",
         QT_TRANSLATE_NOOP(
             "payops::ServiceCommandLine",
             "Open connections from one address (default: a sixteenth of --max-connections; "
             "0: no limit, as behind a proxy, where all share one)."),
         &HttpLimits::maxConnectionsPerIp, 0, 1000000},
        {"max-header-bytes",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine", "Bytes of request line and headers."),
         &HttpLimits::maxHeaderBytes, 1024, 1 << 20},
        {"max-body-bytes",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Bytes of body, as its Content-Length declares it (413 past it)."),
         &HttpLimits::maxBodyBytes, 1024, 16 << 20},
        {"request-timeout",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Seconds to receive one request's headers and body."),
         &HttpLimits::requestTimeoutSeconds, 1, 3600},
        {"keep-alive-idle",
         QT_TRANSLATE_NOOP(
             "payops::ServiceCommandLine",
             "Seconds a connection may go without a callback; other requests do not count."),
         &HttpLimits::keepAliveIdleSeconds, 1, 3600},
        {"max-connection-age",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Seconds a connection may live; then it is closed between requests."),
         &HttpLimits::maxConnectionAgeSeconds, 1, 86400},
        {"max-requests-per-connection",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Requests on one connection before it is closed."),
         &HttpLimits::maxRequestsPerConnection, 1, 1000000},
        {"queue-depth",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Callbacks waiting for a database worker (503 past it)."),
         &HttpLimits::queueDepth, 1, 1000000},
        {"queue-wait-ms",
         QT_TRANSLATE_NOOP("payops::ServiceCommandLine",
                           "Milliseconds a callback may wait for a worker (503 past it)."),
         &HttpLimits::queueWaitMs, 1, 600000},
    };
    return options;
}

} // namespace payops
