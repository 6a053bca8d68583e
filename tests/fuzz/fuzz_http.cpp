// The endpoint's request path up to where payops-callbackd hands a callback to a database
// worker: a real HttpServer (libmicrohttpd, the limits) on loopback, the real routing and the
// signature and syntax checks (service/callbackgate.h). Each input is sent as raw bytes on a
// new TCP connection, the write side is closed, and the answer is read until the server closes
// or falls quiet: a keep-alive connection stays open until its idle timeout, which would cost
// seconds per input.
//
// A fuzzer cannot compute an HMAC, so two placeholders are filled in before the bytes go out:
// "{{ts}}" becomes the current unix time and "{{sig}}" the v1= signature of everything after
// the first blank line, so that mutated bodies reach the parser signed.
#include "fuzzinput.h"

#include "domain/callback/signature.h"
#include "service/callbackgate.h"
#include "service/httpserver.h"

#include <QDateTime>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <variant>

using namespace payops;

namespace {

const QByteArray kSecret = "fuzz-secret";
constexpr int kAnswerTimeoutMs = 500; // for the first byte: answers take milliseconds
constexpr int kQuietMs = 30;          // then for each next one: pipelined answers come together

void handle(HttpRequest request, HttpResponder respond)
{
    const auto route = routeOf(request);
    if (const auto *refusal = std::get_if<HttpResponse>(&route))
        return respond(*refusal);
    // /healthz and /metrics report the database and the workers, which this process has not.
    if (std::get<Route>(route) != Route::Pay)
        return respond({200, R"({"status":"ok"})"});
    const auto admitted = admitCallback(kSecret, request, QDateTime::currentSecsSinceEpoch());
    if (const auto *refusal = std::get_if<CallbackAnswer>(&admitted))
        return respond({refusal->httpStatus, refusal->body});
    // Here payops-callbackd queues the callback for a database worker.
    respond({200, R"({"status":"accepted"})"});
}

int serverPort()
{
    static const int port = [] {
        HttpLimits limits;
        limits.maxConnectionsPerIp = 0;
        limits.requestTimeoutSeconds = 2; // an input that stops mid-request must not pile up
        limits.keepAliveIdleSeconds = 2;
        static HttpServer server(limits, handle);
        const int bound = server.listen(QStringLiteral("127.0.0.1"), 0);
        server.start();
        return bound;
    }();
    return port;
}

QByteArray withSignature(QByteArray request)
{
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    request.replace("{{ts}}", QByteArray::number(now));
    const qsizetype blank = request.indexOf("\r\n\r\n");
    const QByteArray body = blank < 0 ? QByteArray() : request.mid(blank + 4);
    request.replace("{{sig}}", signatureHeader(kSecret, now, body));
    return request;
}

// Sends the request and reads until the server closes or falls quiet.
QByteArray exchange(const QByteArray &request)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fuzz::broken("a socket is available");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(serverPort()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
        fuzz::broken("the server accepts a connection");
    // The server may answer and close before everything is written (413): a failed send is fine.
    for (qsizetype sent = 0; sent < request.size();) {
        const ssize_t written =
            ::send(fd, request.constData() + sent, size_t(request.size() - sent), MSG_NOSIGNAL);
        if (written <= 0)
            break;
        sent += written;
    }
    ::shutdown(fd, SHUT_WR);

    QByteArray answer;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kAnswerTimeoutMs);
    char buffer[4096];
    for (;;) {
        using std::chrono::milliseconds;
        const auto left =
            std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        const int wait = answer.isEmpty() ? int(left.count()) : kQuietMs;
        pollfd readable{fd, POLLIN, 0};
        if (wait <= 0 || ::poll(&readable, 1, wait) <= 0)
            break;
        const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
        if (got <= 0)
            break;
        answer.append(buffer, qsizetype(got));
    }
    // Closed by reset: no TIME_WAIT left behind for each of millions of inputs.
    const linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
    return answer;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::quietLogs();
    serverPort();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray answer = exchange(withSignature(fuzz::bytes(data, size)));
    if (!answer.isEmpty() && !answer.startsWith("HTTP/1."))
        fuzz::broken("whatever the server writes is an HTTP answer");
    return 0;
}
