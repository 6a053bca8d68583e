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
#include <map>
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
using CloseReason = HttpServer::CloseReason;

[[noreturn]] void fail(const QString &message)
{
    throw std::runtime_error(message.toStdString());
}

// One per TCP connection, as libmicrohttpd's socket context. Its times are steady-clock ticks.
struct Connection
{
    int fd = -1;
    QByteArray address; // the client's address, or its /64 for IPv6: the per-address share's key
    Clock::rep openedAt = 0;
    // When the connection became ready for its next request; a request must have arrived
    // whole within the request timeout of it, however slowly its bytes drip in.
    std::atomic<Clock::rep> readySince{0};
    // When it last took a signed callback, or opened: the keep-alive time runs from here, so
    // that cheap requests do not keep a slot.
    std::atomic<Clock::rep> usefulSince{0};
    std::atomic<bool> everUseful{false};
    // A request's headers are in (its body is on the way): not idle, the request timeout runs.
    std::atomic<bool> receiving{false};
    // A request arrived whole and is being answered: no deadline runs.
    std::atomic<bool> answering{false};
    bool closing = false; // shut down by the server; guarded by the connections mutex
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
    MHD_Response *reply = MHD_create_response_from_buffer(
        size_t(response.body.size()), const_cast<char *>(response.body.constData()),
        MHD_RESPMEM_MUST_COPY);
    if (!reply)
        return MHD_NO;
    if (!response.contentType
             .isEmpty()) // WeChat Pay's success, or an upstream's answer without one
        MHD_add_response_header(reply, MHD_HTTP_HEADER_CONTENT_TYPE,
                                response.contentType.constData());
    if (close)
        MHD_add_response_header(reply, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result result = MHD_queue_response(connection, unsigned(response.status), reply);
    MHD_destroy_response(reply);
    return result;
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

// libmicrohttpd stops accepting at its own limit and leaves new connections waiting in the
// backlog. Its limit sits this far above ours, so that a newcomer is still accepted and evicts
// the least useful connection instead.
int evictionRoom(int maxConnections)
{
    return std::max(16, maxConnections / 8);
}

// IPv4 by address; IPv6 by its /64, which one subscriber holds whole.
QByteArray addressKey(const sockaddr *address)
{
    if (!address)
        return {};
    if (address->sa_family == AF_INET) {
        const auto *v4 = reinterpret_cast<const sockaddr_in *>(address);
        return QByteArray(reinterpret_cast<const char *>(&v4->sin_addr), sizeof v4->sin_addr);
    }
    if (address->sa_family == AF_INET6) {
        const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(address);
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr))
            return QByteArray(reinterpret_cast<const char *>(v6->sin6_addr.s6_addr) + 12, 4);
        return QByteArray(reinterpret_cast<const char *>(v6->sin6_addr.s6_addr), 8);
    }
    return {};
}

// A body must declare its length: every Transfer-Encoding is refused before a byte of the
// body is read. libmicrohttpd 0.9.75 answers a chunk-size line longer than its buffer (a huge
// chunk extension) with 500, and reads any list other than chunked alone as no framing at all,
// waiting for the request timeout. No platform sends its callbacks chunked, and nginx in front
// passes them on with a Content-Length.
std::optional<HttpResponse> refusedTransferEncoding(const char *value)
{
    if (!value)
        return std::nullopt;
    if (QByteArray(value).trimmed().compare("chunked", Qt::CaseInsensitive) == 0)
        return HttpResponse{
            400, reasonJson(
                     "a callback's body needs a Content-Length; chunked bodies are not accepted")};
    return HttpResponse{501,
                        reasonJson("Transfer-Encoding is not supported; send a Content-Length")};
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
    std::map<QByteArray, int> perAddress;
    size_t shutDown = 0; // connections shut down, not yet gone: they no longer take a slot
    std::atomic<qint64> closedFor[int(HttpServer::CloseReason::Count)] = {};

    std::thread sweeper;
    std::mutex sweepMutex;
    std::condition_variable sweepWake;
    bool sweeping = true;

    std::mutex pendingMutex;
    std::condition_variable pendingDone;
    int pending = 0;
    bool stopping = false;

    static MHD_Result onRequest(void *self, MHD_Connection *connection, const char *url,
                                const char *method, const char *, const char *data, size_t *size,
                                void **context);
    static void onCompleted(void *self, MHD_Connection *, void **context,
                            MHD_RequestTerminationCode);
    static void onConnection(void *self, MHD_Connection *connection, void **socketContext,
                             MHD_ConnectionNotificationCode code);

    MHD_Result begin(MHD_Connection *connection, Exchange &exchange);
    MHD_Result hand(MHD_Connection *connection, const ExchangeHandle &exchange, const char *url,
                    const char *method);
    void sweep();
    void opened(MHD_Connection *connection, void **socketContext);
    void forget(Connection *state);
    // With the connections mutex held: shuts the socket down (the event loop then sees the
    // end of the stream and closes it itself) and counts why, once per connection.
    void close(Connection *connection, HttpServer::CloseReason reason);
    void evictLeastUseful(const Connection *newcomer);
    void refuseTooLarge()
    {
        if (onTooLarge)
            onTooLarge();
    }
};

MHD_Result HttpServer::Impl::onRequest(void *self, MHD_Connection *connection, const char *url,
                                       const char *method, const char *, const char *data,
                                       size_t *size, void **context)
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
        if (exchange.body.size() + qsizetype(*size) > server.limits.maxBodyBytes)
            return MHD_NO; // more than its Content-Length said: close without an answer
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
    exchange.owner->receiving.store(true);
    if (const auto refusal = refusedTransferEncoding(MHD_lookup_connection_value(
            connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING)))
        return queue(connection, *refusal, true);
    const char *length =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
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

MHD_Result HttpServer::Impl::hand(MHD_Connection *connection, const ExchangeHandle &exchange,
                                  const char *url, const char *method)
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
        return queue(connection, *exchange->response,
                     exchange->owner->requests >= limits.maxRequestsPerConnection);
    // Parked: no thread waits for the answer, and the connection's events are ignored.
    exchange->suspended = true;
    MHD_suspend_connection(connection);
    return MHD_YES;
}

void HttpServer::Impl::onCompleted(void *self, MHD_Connection *, void **context,
                                   MHD_RequestTerminationCode)
{
    Impl &server = *static_cast<Impl *>(self);
    auto *handle = static_cast<ExchangeHandle *>(*context);
    if (!handle)
        return;
    *context = nullptr;
    if (Connection *owner = (*handle)->owner) {
        const Clock::rep now = Clock::now().time_since_epoch().count();
        if ((*handle)->response && (*handle)->response->useful) {
            owner->usefulSince.store(now);
            owner->everUseful.store(true);
        }
        owner->readySince.store(now);
        owner->receiving.store(false);
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
        server.opened(connection, socketContext);
    } else if (auto *state = static_cast<Connection *>(*socketContext)) {
        // libmicrohttpd closes the descriptor only after this returns, so the sweeper,
        // which holds the same mutex, never shuts down a descriptor already reused.
        server.forget(state);
        *socketContext = nullptr;
    }
}

void HttpServer::Impl::opened(MHD_Connection *connection, void **socketContext)
{
    auto *state = new Connection;
    state->fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
    state->address = addressKey(
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS)->client_addr);
    state->openedAt = Clock::now().time_since_epoch().count();
    state->readySince.store(state->openedAt);
    state->usefulSince.store(state->openedAt);
    connections.insert(state);
    *socketContext = state;
    // Over its address's share, a connection is closed as soon as it is accepted, so one
    // address (or a few) can never take the slots others need.
    const int fromAddress = ++perAddress[state->address];
    if (limits.maxConnectionsPerIp > 0 && fromAddress > limits.maxConnectionsPerIp)
        close(state, CloseReason::AddressLimit);
    else if (connections.size() - shutDown > size_t(limits.maxConnections))
        evictLeastUseful(state);
}

void HttpServer::Impl::forget(Connection *state)
{
    const auto counted = perAddress.find(state->address);
    if (counted != perAddress.end() && --counted->second <= 0)
        perAddress.erase(counted);
    if (state->closing)
        --shutDown;
    connections.erase(state);
    delete state;
}

void HttpServer::Impl::close(Connection *connection, CloseReason reason)
{
    if (connection->closing)
        return;
    connection->closing = true;
    ++shutDown;
    ::shutdown(connection->fd, SHUT_RDWR);
    closedFor[int(reason)].fetch_add(1, std::memory_order_relaxed);
}

void HttpServer::Impl::evictLeastUseful(const Connection *newcomer)
{
    // Never one being answered (its callback may be committing). Among the rest, one that has
    // never taken a callback goes first, the oldest of those; else the longest since its last.
    Connection *victim = nullptr;
    const auto lessUseful = [](const Connection *a, const Connection *b) {
        const bool aUseful = a->everUseful.load(), bUseful = b->everUseful.load();
        if (aUseful != bUseful)
            return !aUseful;
        return a->usefulSince.load() < b->usefulSince.load();
    };
    for (Connection *candidate : connections) {
        if (candidate == newcomer || candidate->closing || candidate->answering.load())
            continue;
        if (!victim || lessUseful(candidate, victim))
            victim = candidate;
    }
    if (victim)
        close(victim, CloseReason::Evicted);
}

void HttpServer::Impl::sweep()
{
    const auto requestTimeout = std::chrono::seconds(limits.requestTimeoutSeconds);
    const auto idleLimit = std::chrono::seconds(limits.keepAliveIdleSeconds);
    const auto ageLimit = std::chrono::seconds(limits.maxConnectionAgeSeconds);
    const auto since = [](Clock::rep ticks) { return Clock::time_point{Clock::duration(ticks)}; };
    std::unique_lock wait(sweepMutex);
    while (
        !sweepWake.wait_for(wait, std::chrono::milliseconds(200), [this] { return !sweeping; })) {
        const auto now = Clock::now();
        std::lock_guard lock(connectionsMutex);
        for (Connection *connection : connections) {
            if (connection->closing || connection->answering.load())
                continue;
            if (now - since(connection->readySince.load()) > requestTimeout)
                close(connection, CloseReason::RequestTimeout);
            else if (connection->receiving.load())
                continue; // a body on its way is bounded by the request timeout alone
            else if (now - since(connection->usefulSince.load()) > idleLimit)
                close(connection, CloseReason::Idle);
            else if (now - since(connection->openedAt) > ageLimit)
                close(connection, CloseReason::Age);
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
    if (const int error = ::getaddrinfo(hostName.constData(), service.constData(), &hints, &found);
        error != 0)
        fail(HttpServer::tr("cannot listen on %1:%2: %3")
                 .arg(host, QString::number(port), QString::fromUtf8(gai_strerror(error))));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);

    const int fd =
        ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
    if (fd < 0)
        fail(HttpServer::tr("cannot listen on %1:%2: %3")
                 .arg(host, QString::number(port), QString::fromUtf8(std::strerror(errno))));
    // SO_REUSEADDR lets a restart bind past connections in TIME_WAIT; unlike SO_REUSEPORT it
    // never lets a second process bind a port that is being listened on.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
        const int error = errno;
        ::close(fd);
        fail(error == EADDRINUSE
                 ? HttpServer::tr("cannot listen on %1:%2: the address is already in use")
                       .arg(host, QString::number(port))
                 : HttpServer::tr("cannot listen on %1:%2: %3")
                       .arg(host, QString::number(port), QString::fromUtf8(std::strerror(error))));
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
    // and keep the connection limit and the eviction room above it under it, with room for
    // the database and log files.
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
    const int room = int(std::min<rlim_t>(files.rlim_cur, 1 << 20)) - 256;
    if (impl.limits.maxConnections + evictionRoom(impl.limits.maxConnections) > room) {
        const int fits = std::max((room - 16) * 8 / 9, 16);
        spdlog::warn("--max-connections {} lowered to {}: the open-files limit is {}",
                     impl.limits.maxConnections, fits, files.rlim_cur);
        impl.limits.maxConnections = fits;
    }

    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (impl.ipv6)
        flags |= MHD_USE_IPv6;
    // Its own timeout, which any byte renews, only backs up the sweeper's.
    std::vector<MHD_OptionItem> options{
        {MHD_OPTION_LISTEN_SOCKET, impl.listenFd, nullptr},
        {MHD_OPTION_CONNECTION_LIMIT,
         impl.limits.maxConnections + evictionRoom(impl.limits.maxConnections), nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT,
         impl.limits.requestTimeoutSeconds + impl.limits.keepAliveIdleSeconds, nullptr},
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
    impl.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::onRequest, &impl,
                                   MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
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

const char *HttpServer::label(CloseReason reason)
{
    switch (reason) {
    case CloseReason::RequestTimeout:
        return "request_timeout";
    case CloseReason::Idle:
        return "idle";
    case CloseReason::Age:
        return "age";
    case CloseReason::Evicted:
        return "evicted";
    case CloseReason::AddressLimit:
        return "address_limit";
    case CloseReason::Count:
        break;
    }
    return "unknown";
}

HttpServer::Counters HttpServer::counters() const
{
    Counters counters;
    for (int reason = 0; reason < int(CloseReason::Count); ++reason)
        counters.closed[reason] = m_impl->closedFor[reason].load();
    std::lock_guard lock(m_impl->connectionsMutex);
    counters.openConnections = qint64(m_impl->connections.size());
    return counters;
}

} // namespace payops
