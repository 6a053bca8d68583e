#include "httpserver.h"

#include <microhttpd.h>
#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace payops {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const QString &message)
{
    throw std::runtime_error(message.toStdString());
}

// One per TCP connection, as libmicrohttpd's socket context.
struct Connection
{
    int fd = -1;
    // When the connection became ready for its next request; a request must have arrived
    // whole within the request timeout of it, however slowly its bytes drip in.
    std::atomic<Clock::rep> readySince{0};
    // A request arrived whole and is being answered: no receive deadline runs.
    std::atomic<bool> answering{false};
    int requests = 0;
};

// One per request, shared with whoever answers it on another thread.
struct Exchange
{
    std::mutex mutex;
    MHD_Connection *connection = nullptr;
    Connection *owner = nullptr;
    QByteArray body;
    bool handed = false;    // given to the handler; counted as pending until completed
    bool suspended = false; // parked while another thread prepares the answer
    std::optional<HttpResponse> response;
};
using ExchangeHandle = std::shared_ptr<Exchange>;

QByteArray reasonJson(const char *reason)
{
    return QByteArray(R"({"status":"error","reason":")") + reason + "\"}";
}

MHD_Result queue(MHD_Connection *connection, const HttpResponse &response, bool close)
{
    MHD_Response *reply = MHD_create_response_from_buffer(size_t(response.body.size()),
                                                          const_cast<char *>(response.body.constData()),
                                                          MHD_RESPMEM_MUST_COPY);
    if (!reply)
        return MHD_NO;
    MHD_add_response_header(reply, MHD_HTTP_HEADER_CONTENT_TYPE, response.contentType.constData());
    if (close)
        MHD_add_response_header(reply, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result result = MHD_queue_response(connection, unsigned(response.status), reply);
    MHD_destroy_response(reply);
    return result;
}

// libmicrohttpd lets an application queue a response only before it reads the body or
// after the whole body arrived. A chunked body has no length to refuse up front, and reading
// all of it to answer 413 is what an attacker wants, so the answer is written straight to the
// socket (nothing else is being written on it while the body is read) and the connection is
// then closed by returning MHD_NO.
void writeTooLargeAndClose(int fd)
{
    const QByteArray body = reasonJson("body over the limit");
    const QByteArray answer = "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: "
                              + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    if (::send(fd, answer.constData(), size_t(answer.size()), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        spdlog::debug("413 not written: {}", std::strerror(errno));
}

void logFromLibrary(void *, const char *format, va_list arguments)
{
    char line[512];
    std::vsnprintf(line, sizeof line, format, arguments);
    std::string text(line);
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    spdlog::debug("http: {}", text);
}

MHD_Result collectHeader(void *target, MHD_ValueKind, const char *key, const char *value)
{
    auto &headers = *static_cast<std::vector<std::pair<QByteArray, QByteArray>> *>(target);
    headers.emplace_back(QByteArray(key), QByteArray(value ? value : ""));
    return MHD_YES;
}

} // namespace

struct HttpServer::Impl
{
    HttpLimits limits;
    HttpHandler handler;
    std::function<void()> onTooLarge;
    int listenFd = -1;
    bool ipv6 = false;
    MHD_Daemon *daemon = nullptr;

    std::mutex connectionsMutex;
    std::set<Connection *> connections;
    std::atomic<qint64> timeouts{0};

    std::thread sweeper;
    std::mutex sweepMutex;
    std::condition_variable sweepWake;
    bool sweeping = true;

    std::mutex pendingMutex;
    std::condition_variable pendingDone;
    int pending = 0;
    bool stopping = false;

    static MHD_Result onRequest(void *self, MHD_Connection *connection, const char *url, const char *method,
                                const char *, const char *data, size_t *size, void **context);
    static void onCompleted(void *self, MHD_Connection *, void **context, MHD_RequestTerminationCode);
    static void onConnection(void *self, MHD_Connection *connection, void **socketContext,
                             MHD_ConnectionNotificationCode code);

    MHD_Result begin(MHD_Connection *connection, Exchange &exchange);
    MHD_Result hand(MHD_Connection *connection, const ExchangeHandle &exchange, const char *url, const char *method);
    void sweep();
    void refuseTooLarge()
    {
        if (onTooLarge)
            onTooLarge();
    }
};

MHD_Result HttpServer::Impl::onRequest(void *self, MHD_Connection *connection, const char *url, const char *method,
                                       const char *, const char *data, size_t *size, void **context)
{
    Impl &server = *static_cast<Impl *>(self);
    auto *handle = static_cast<ExchangeHandle *>(*context);
    if (!handle) { // the headers are in
        handle = new ExchangeHandle(std::make_shared<Exchange>());
        *context = handle;
        return server.begin(connection, **handle);
    }
    Exchange &exchange = **handle;
    if (*size > 0) {
        if (exchange.body.size() + qsizetype(*size) > server.limits.maxBodyBytes) {
            server.refuseTooLarge();
            writeTooLargeAndClose(exchange.owner->fd);
            return MHD_NO;
        }
        exchange.body.append(data, qsizetype(*size));
        *size = 0;
        return MHD_YES;
    }
    std::unique_lock lock(exchange.mutex);
    if (exchange.response) // answered by another thread, which resumed the connection
        return queue(connection, *exchange.response,
                     exchange.owner->requests >= server.limits.maxRequestsPerConnection);
    if (exchange.handed)
        return MHD_YES;
    lock.unlock();
    return server.hand(connection, *handle, url, method);
}

MHD_Result HttpServer::Impl::begin(MHD_Connection *connection, Exchange &exchange)
{
    exchange.connection = connection;
    exchange.owner = static_cast<Connection *>(
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context);
    ++exchange.owner->requests;
    const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length) {
        bool ok = false;
        const qint64 bytes = QByteArray(length).toLongLong(&ok);
        if (!ok || bytes > limits.maxBodyBytes) { // refused before a byte of the body is read
            refuseTooLarge();
            return queue(connection, {413, reasonJson("body over the limit")}, true);
        }
        exchange.body.reserve(qsizetype(bytes));
    }
    return MHD_YES;
}

MHD_Result HttpServer::Impl::hand(MHD_Connection *connection, const ExchangeHandle &exchange, const char *url,
                                  const char *method)
{
    exchange->owner->answering.store(true);
    {
        std::lock_guard lock(pendingMutex);
        if (stopping)
            return queue(connection, {503, reasonJson("shutting down; retry later")}, true);
        ++pending;
        exchange->handed = true;
    }
    std::vector<std::pair<QByteArray, QByteArray>> headers;
    MHD_get_connection_values(connection, MHD_HEADER_KIND, collectHeader, &headers);
    HttpRequest request{QByteArray(method), QByteArray(url), std::move(exchange->body),
                        [headers = std::move(headers)](const char *name) {
                            for (const auto &[key, value] : headers) {
                                if (key.compare(name, Qt::CaseInsensitive) == 0)
                                    return value;
                            }
                            return QByteArray();
                        }};
    handler(std::move(request), [exchange](HttpResponse response) {
        std::lock_guard lock(exchange->mutex);
        exchange->response = std::move(response);
        if (exchange->suspended) {
            exchange->suspended = false;
            MHD_resume_connection(exchange->connection);
        }
    });
    std::lock_guard lock(exchange->mutex);
    if (exchange->response)
        return queue(connection, *exchange->response, exchange->owner->requests >= limits.maxRequestsPerConnection);
    // Parked: no thread waits for the answer, and the connection's events are ignored.
    exchange->suspended = true;
    MHD_suspend_connection(connection);
    return MHD_YES;
}

void HttpServer::Impl::onCompleted(void *self, MHD_Connection *, void **context, MHD_RequestTerminationCode)
{
    Impl &server = *static_cast<Impl *>(self);
    auto *handle = static_cast<ExchangeHandle *>(*context);
    if (!handle)
        return;
    *context = nullptr;
    if (Connection *owner = (*handle)->owner) {
        owner->readySince.store(Clock::now().time_since_epoch().count());
        owner->answering.store(false);
    }
    if ((*handle)->handed) {
        std::lock_guard lock(server.pendingMutex);
        if (--server.pending == 0)
            server.pendingDone.notify_all();
    }
    delete handle;
}

void HttpServer::Impl::onConnection(void *self, MHD_Connection *connection, void **socketContext,
                                    MHD_ConnectionNotificationCode code)
{
    Impl &server = *static_cast<Impl *>(self);
    std::lock_guard lock(server.connectionsMutex);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        auto *state = new Connection;
        state->fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
        state->readySince.store(Clock::now().time_since_epoch().count());
        server.connections.insert(state);
        *socketContext = state;
    } else if (auto *state = static_cast<Connection *>(*socketContext)) {
        // libmicrohttpd closes the descriptor only after this returns, so the sweeper,
        // which holds the same mutex, never shuts down a descriptor already reused.
        server.connections.erase(state);
        delete state;
        *socketContext = nullptr;
    }
}

void HttpServer::Impl::sweep()
{
    const auto limit = std::chrono::seconds(limits.requestTimeoutSeconds);
    std::unique_lock wait(sweepMutex);
    while (!sweepWake.wait_for(wait, std::chrono::milliseconds(200), [this] { return !sweeping; })) {
        const auto now = Clock::now();
        std::lock_guard lock(connectionsMutex);
        for (Connection *connection : connections) {
            const Clock::time_point since{Clock::duration(connection->readySince.load())};
            if (connection->answering.load() || now - since <= limit)
                continue;
            // The event loop sees the end of the stream and closes the connection itself.
            ::shutdown(connection->fd, SHUT_RDWR);
            connection->readySince.store(Clock::time_point::max().time_since_epoch().count());
            timeouts.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

HttpServer::HttpServer(HttpLimits limits, HttpHandler handler, std::function<void()> onTooLarge)
    : m_impl(std::make_unique<Impl>())
{
    m_impl->limits = limits;
    m_impl->handler = std::move(handler);
    m_impl->onTooLarge = std::move(onTooLarge);
}

HttpServer::~HttpServer()
{
    stop();
    if (m_impl->listenFd >= 0)
        ::close(m_impl->listenFd);
}

int HttpServer::listen(const QString &host, int port)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo *found = nullptr;
    const QByteArray hostName = host.toUtf8();
    const QByteArray service = QByteArray::number(port);
    if (const int error = ::getaddrinfo(hostName.constData(), service.constData(), &hints, &found); error != 0)
        fail(HttpServer::tr("cannot listen on %1:%2: %3")
            .arg(host).arg(port).arg(QString::fromUtf8(gai_strerror(error))));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);

    const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
    if (fd < 0)
        fail(HttpServer::tr("cannot listen on %1:%2: %3")
            .arg(host).arg(port).arg(QString::fromUtf8(std::strerror(errno))));
    // SO_REUSEADDR lets a restart bind past connections in TIME_WAIT; unlike SO_REUSEPORT it
    // never lets a second process bind a port that is being listened on.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
        const int error = errno;
        ::close(fd);
        fail(error == EADDRINUSE
                 ? HttpServer::tr("cannot listen on %1:%2: the address is already in use").arg(host).arg(port)
                 : HttpServer::tr("cannot listen on %1:%2: %3")
                     .arg(host).arg(port).arg(QString::fromUtf8(std::strerror(error))));
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &length);
    m_impl->listenFd = fd;
    m_impl->ipv6 = bound.ss_family == AF_INET6;
    return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
}

void HttpServer::start()
{
    Impl &impl = *m_impl;
    // Every connection is a descriptor: raise the soft limit as far as the hard one allows,
    // and keep the connection limit under it with room for the database and log files.
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
    const int room = int(std::min<rlim_t>(files.rlim_cur, 1 << 20)) - 256;
    if (impl.limits.maxConnections > room) {
        spdlog::warn("--max-connections {} lowered to {}: the open-files limit is {}", impl.limits.maxConnections,
                     room, files.rlim_cur);
        impl.limits.maxConnections = std::max(room, 16);
    }

    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (impl.ipv6)
        flags |= MHD_USE_IPv6;
    std::vector<MHD_OptionItem> options{
        {MHD_OPTION_LISTEN_SOCKET, impl.listenFd, nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, impl.limits.maxConnections, nullptr},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, impl.limits.maxConnectionsPerIp, nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, impl.limits.keepAliveIdleSeconds, nullptr},
        // The request line and headers must fit in the connection's memory pool.
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, impl.limits.maxHeaderBytes + 4096, nullptr},
        {MHD_OPTION_STRICT_FOR_CLIENT, 1, nullptr},
        {MHD_OPTION_NOTIFY_COMPLETED, intptr_t(&Impl::onCompleted), &impl},
        {MHD_OPTION_NOTIFY_CONNECTION, intptr_t(&Impl::onConnection), &impl},
        {MHD_OPTION_EXTERNAL_LOGGER, intptr_t(&logFromLibrary), nullptr},
    };
    if (impl.limits.ioThreads > 1)
        options.push_back({MHD_OPTION_THREAD_POOL_SIZE, impl.limits.ioThreads, nullptr});
    options.push_back({MHD_OPTION_END, 0, nullptr});
    impl.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::onRequest, &impl, MHD_OPTION_ARRAY,
                                   options.data(), MHD_OPTION_END);
    if (!impl.daemon)
        fail(HttpServer::tr("the HTTP server did not start (see the log)"));
    impl.sweeper = std::thread([&impl] { impl.sweep(); });
}

void HttpServer::stop()
{
    Impl &impl = *m_impl;
    if (!impl.daemon)
        return;
    {
        std::unique_lock lock(impl.pendingMutex);
        impl.stopping = true;
    }
    // New connections are refused from here on. The socket is shut down, not closed: MHD's
    // event loop may still be taking it out of its epoll set, and its manual says the socket
    // must stay open until MHD_stop_daemon returns (the destructor closes it). On Linux,
    // shutting down a listening socket makes the kernel refuse connections to it at once.
    if (MHD_quiesce_daemon(impl.daemon) == impl.listenFd)
        ::shutdown(impl.listenFd, SHUT_RDWR);
    else
        impl.listenFd = -1; // not quiesced: MHD_stop_daemon closes the socket it was given
    {
        // Every request handed out is answered and its answer written before the event
        // loops go: a suspended connection cannot be torn down, and its callback may have
        // been committed already.
        std::unique_lock lock(impl.pendingMutex);
        impl.pendingDone.wait(lock, [&impl] { return impl.pending == 0; });
    }
    MHD_stop_daemon(impl.daemon);
    impl.daemon = nullptr;
    {
        std::lock_guard lock(impl.sweepMutex);
        impl.sweeping = false;
    }
    impl.sweepWake.notify_all();
    if (impl.sweeper.joinable())
        impl.sweeper.join();
}

HttpServer::Counters HttpServer::counters() const
{
    Counters counters;
    counters.requestTimeouts = m_impl->timeouts.load();
    std::lock_guard lock(m_impl->connectionsMutex);
    counters.openConnections = qint64(m_impl->connections.size());
    return counters;
}

} // namespace payops
