#pragma once

#include <vector>

namespace payops {

// What one client may cost the endpoint. Each is a payops-callbackd flag; the defaults are
// safe on the open internet (README, "Limits").
struct HttpLimits
{
    int ioThreads = 2;                  // event loops (epoll); an idle connection costs none of them
    int maxConnections = 4000;          // all clients together
    int maxConnectionsPerIp = 1000;     // behind a proxy every client has the proxy's address
    int maxHeaderBytes = 16 * 1024;     // request line and headers
    int maxBodyBytes = 64 * 1024;       // after chunked decoding; reading stops here
    int requestTimeoutSeconds = 10;     // to receive one request's headers and body
    int keepAliveIdleSeconds = 5;       // a connection with nothing to read or write
    int maxRequestsPerConnection = 1000;
    int queueDepth = 256;               // requests waiting for a database worker
    int queueWaitMs = 2000;             // longer in the queue: 503 without touching the database
};

// One command-line flag per limit: its name, help, field and bounds, written once.
struct HttpLimitOption
{
    const char *name;
    const char *description;
    int HttpLimits::*field;
    int minimum;
    int maximum;
};
const std::vector<HttpLimitOption> &httpLimitOptions();

} // namespace payops
