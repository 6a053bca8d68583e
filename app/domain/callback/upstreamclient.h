#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace payops {

struct UpstreamTransfer; // one forward in flight (upstreamclient.cpp)

// Where a gateway forwards callbacks: the team's own handler.
struct UpstreamOptions
{
    QString url;    // http:// or https://
    QString caFile; // https: verify against this file instead of the system's CA store
    // When the platform is answered 504 if the handler has not answered: a platform waits about
    // that long. The forward itself goes on.
    int timeoutSeconds = 5;
    // The gateway's own bound on one forward, from before it is sent: the connection to the
    // handler is closed then, and only then may the pay_no be forwarded again.
    int boundSeconds = 30;
    int connections = 256; // forwards in flight at most, each on a connection of its own
};

// The upstream's answer to one forward, or why there was none.
struct UpstreamAnswer
{
    int status = 0; // 0: no answer (refused, reset, cut, timed out, certificate refused)
    QByteArray body;
    QByteArray contentType;
    QString error;         // why there was no answer; empty when there was one
    bool timedOut = false; // no whole answer within the bound
    qint64 sentMicros = 0; // nowMicros() when the request went out
    qint64 answeredMicros = 0;

    bool answered() const { return status > 0; }
    double seconds() const { return double(answeredMicros - sentMicros) / 1e6; }
};

struct UpstreamRequest
{
    QByteArray body;
    QList<std::pair<QByteArray, QByteArray>> headers; // sent as they are, plus Host, Content-Length
};

// The gateway's HTTP client: every forward in flight runs on one thread of its own (libcurl's
// multi interface), so a slow handler costs a connection and a few kilobytes per forward, never
// a thread or a database connection. Connections are kept alive between forwards.
//
// A POST is sent once. libcurl would send it again on a fresh connection when a kept-alive one
// turns out closed before any answer; the handler may have read it by then, so the forward ends
// there without an answer instead.
class UpstreamClient final
{
public:
    explicit UpstreamClient(UpstreamOptions options);
    // Waits for the forwards in flight: each ends by its bound.
    ~UpstreamClient();
    UpstreamClient(const UpstreamClient &) = delete;
    UpstreamClient &operator=(const UpstreamClient &) = delete;

    const UpstreamOptions &options() const { return m_options; }

    // Takes a place for one forward; false when `connections` are taken. A place is given back
    // by post's end, or by unreserve() when the forward is not sent after all.
    bool reserve();
    void unreserve();

    // Sends on a reserved place. onLate runs once if no answer came within timeoutSeconds;
    // onDone runs once at the end, with the answer or why there was none. Both run on the
    // client's thread and must not block.
    void post(UpstreamRequest request, std::function<void()> onLate,
              std::function<void(const UpstreamAnswer &)> onDone);
    // Reserves, sends and waits for the end (the drain, which has no platform waiting).
    UpstreamAnswer postAndWait(UpstreamRequest request);

    int inFlight() const;

private:
    void run();

    const UpstreamOptions m_options;
    const QByteArray m_url;
    const QByteArray m_caFile;
    void *m_multi; // CURLM*, kept out of this header
    mutable std::mutex m_mutex;
    std::deque<std::unique_ptr<UpstreamTransfer>> m_incoming;
    int m_taken = 0; // places reserved or in flight
    bool m_stopping = false;
    std::thread m_thread; // last: starts once the above is made
};

// Checks and takes --upstream, --upstream-ca and --upstream-timeout as given on a command line
// (payops-callbackd's and payops drain's): an http or https URL with a host, a readable CA
// file, 1-60 seconds. Returns the first fault in one sentence, or an empty text; `option` is
// how the sentence names the URL's option.
QString checkUpstreamOptions(const QString &url, const QString &caFile, const QString &timeout,
                             UpstreamOptions *options,
                             const QString &option = QStringLiteral("--upstream"));

// The URL as logs and callback_instance may show it: without user and password.
QString upstreamWithoutCredentials(const QString &url);

} // namespace payops
