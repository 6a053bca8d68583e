#pragma once

#include <vector>

namespace payops {

// What one client may cost the endpoint. Each is a payops-callbackd flag; the defaults are
// safe on the open internet (docs/callback-contract.md, "Limits").
struct HttpLimits
{
    int ioThreads = 2;         // event loops (epoll); an idle connection costs none of them
    int maxConnections = 4000; // all clients together; when full, the least useful one goes
    // Unless set, a sixteenth of maxConnections (perIpFor): eight addresses hold at most half
    // of the slots. Behind a proxy every client has the proxy's address: 0 there.
    int maxConnectionsPerIp = 250;
    int maxHeaderBytes = 16 * 1024; // request line and headers
    int maxBodyBytes = 64 * 1024;   // after chunked decoding; reading stops here
    int requestTimeoutSeconds = 10; // to receive one request's headers and body
    int keepAliveIdleSeconds = 5;   // a connection without a callback (other requests do not count)
    int maxConnectionAgeSeconds = 300; // then closed between requests, whatever it does
    int maxRequestsPerConnection = 1000;
    int queueDepth = 256;   // requests waiting for a database worker
    int queueWaitMs = 2000; // longer in the queue: 503 without touching the database

    // The per-address default for a total: a sixteenth, at least one.
    static int perIpFor(int maxConnections)
    {
        return maxConnections / 16 > 1 ? maxConnections / 16 : 1;
    }
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
