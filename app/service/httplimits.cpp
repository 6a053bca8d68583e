#include "httplimits.h"

namespace payops {

const std::vector<HttpLimitOption> &httpLimitOptions()
{
    static const std::vector<HttpLimitOption> options{
        {"io-threads", "HTTP event loops.", &HttpLimits::ioThreads, 1, 64},
        {"max-connections", "Open connections, all clients together.", &HttpLimits::maxConnections, 16, 1000000},
        {"max-connections-per-ip", "Open connections from one address (0: no limit; behind a proxy all share one).",
         &HttpLimits::maxConnectionsPerIp, 0, 1000000},
        {"max-header-bytes", "Bytes of request line and headers.", &HttpLimits::maxHeaderBytes, 1024, 1 << 20},
        {"max-body-bytes", "Bytes of body, counted after chunked decoding (413 past it).", &HttpLimits::maxBodyBytes,
         1024, 16 << 20},
        {"request-timeout", "Seconds to receive one request's headers and body.", &HttpLimits::requestTimeoutSeconds,
         1, 3600},
        {"keep-alive-idle", "Seconds a connection may sit with nothing to read or write.",
         &HttpLimits::keepAliveIdleSeconds, 1, 3600},
        {"max-requests-per-connection", "Requests on one connection before it is closed.",
         &HttpLimits::maxRequestsPerConnection, 1, 1000000},
        {"queue-depth", "Callbacks waiting for a database worker (503 past it).", &HttpLimits::queueDepth, 1, 1000000},
        {"queue-wait-ms", "Milliseconds a callback may wait for a worker (503 past it).", &HttpLimits::queueWaitMs, 1,
         600000},
    };
    return options;
}

} // namespace payops
