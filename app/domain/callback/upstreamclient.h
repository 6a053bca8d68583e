#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <utility>

namespace payops {

// Where a gateway forwards callbacks: the team's own handler.
struct UpstreamOptions
{
    QString url;            // http:// or https://
    QString caFile;         // https: verify against this file instead of the system's CA store
    int timeoutSeconds = 5; // a platform waits about that long for its answer
};

// The upstream's answer to one forward, or why there was none.
struct UpstreamAnswer
{
    int status = 0; // 0: no answer (refused, reset, timed out, certificate refused)
    QByteArray body;
    QByteArray contentType;
    QString error;         // why there was no answer; empty when there was one
    bool timedOut = false; // no whole answer within the timeout
    qint64 sentMicros = 0; // nowMicros() when the request went out
    qint64 answeredMicros = 0;

    bool answered() const { return status > 0; }
    double seconds() const { return double(answeredMicros - sentMicros) / 1e6; }
};

// An HTTP client for one thread: one libcurl easy handle, whose connection is kept alive
// between forwards (a platform's storm would otherwise pay a TCP and TLS handshake each).
class UpstreamClient final
{
public:
    explicit UpstreamClient(UpstreamOptions options);
    const UpstreamOptions &options() const { return m_options; }
    ~UpstreamClient();
    UpstreamClient(const UpstreamClient &) = delete;
    UpstreamClient &operator=(const UpstreamClient &) = delete;

    // POSTs `body` with exactly `headers` (plus Host and Content-Length), and waits at most
    // the timeout for the whole answer.
    UpstreamAnswer post(const QByteArray &body,
                        const QList<std::pair<QByteArray, QByteArray>> &headers);

private:
    UpstreamOptions m_options;
    void *m_curl; // CURL*, kept out of this header
};

// Checks and takes --upstream, --upstream-ca and --upstream-timeout as given on a command line
// (payops-callbackd's and payops drain's): an http or https URL with a host, a readable CA
// file, 1-60 seconds. Returns the first fault in one sentence, or an empty text.
QString checkUpstreamOptions(const QString &url, const QString &caFile, const QString &timeout,
                             UpstreamOptions *options);

// The URL as logs and callback_instance may show it: without user and password.
QString upstreamWithoutCredentials(const QString &url);

} // namespace payops
