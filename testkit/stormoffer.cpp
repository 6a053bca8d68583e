#include "loadrun.h"

#include "domain/callback/signature.h"

#include <QDateTime>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace payops::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One kept-alive connection of the storm and the request it carries, if any.
struct Connection
{
    int fd = -1;
    std::string out; // what is still to be written of the request
    std::string in;  // what has been read of the answer
    long request = -1;
    Clock::time_point sent;
};

int connectTo(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        throw std::runtime_error("socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(quint16(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

// The status of a complete answer at the start of `in`, and how many bytes it took; nothing
// while it is incomplete. The endpoint answers with a Content-Length, never chunked.
std::optional<std::pair<int, size_t>> completeAnswer(const std::string &in, bool &closes)
{
    const size_t headEnd = in.find("\r\n\r\n");
    if (headEnd == std::string::npos)
        return std::nullopt;
    std::string head = in.substr(0, headEnd);
    for (char &c : head)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t length = 0;
    if (const size_t at = head.find("\r\ncontent-length:"); at != std::string::npos)
        length = std::stoul(head.substr(at + 17));
    if (in.size() < headEnd + 4 + length)
        return std::nullopt;
    closes = head.find("\r\nconnection: close") != std::string::npos;
    const int status = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
    return std::make_pair(status, headEnd + 4 + length);
}

} // namespace

// One thread and `connections` non-blocking sockets under epoll: the sender of a storm must
// cost the two cores far less than what it storms, or it offers what it can instead of its
// schedule (a thread a connection, each signing and parsing through cpp-httplib, sent 1.7 times
// what the endpoint absorbs where the schedule asked for 3). Each request is signed as it is
// sent, with the time of sending.
OfferResult offer(const SignedPoster &poster, const std::vector<QByteArray> &bodies, double rate,
                  int connections)
{
    OfferResult result;
    result.rate = rate;
    result.statuses.assign(bodies.size(), 0);
    result.latencies.assign(bodies.size(), 0);
    const int epoll = ::epoll_create1(0);
    std::vector<Connection> pool(static_cast<size_t>(connections));
    std::vector<size_t> idle;
    const auto open = [&](size_t c) {
        pool[c] = Connection{};
        pool[c].fd = connectTo(poster.port);
        if (pool[c].fd < 0)
            return;
        epoll_event event{};
        event.events = EPOLLIN | EPOLLOUT | EPOLLET;
        event.data.u64 = c;
        ::epoll_ctl(epoll, EPOLL_CTL_ADD, pool[c].fd, &event);
        idle.push_back(c);
    };
    const auto drop = [&](size_t c) { // the connection went: its request got no answer
        if (pool[c].fd >= 0)
            ::close(pool[c].fd);
        idle.erase(std::remove(idle.begin(), idle.end(), c), idle.end());
        open(c);
    };
    const auto flush = [&](Connection &connection) {
        while (!connection.out.empty()) {
            const ssize_t n =
                ::send(connection.fd, connection.out.data(), connection.out.size(), MSG_NOSIGNAL);
            if (n <= 0)
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
            connection.out.erase(0, size_t(n));
        }
        return true;
    };
    for (size_t c = 0; c < pool.size(); ++c)
        open(c);

    const std::string head = "POST " + poster.path +
                             " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(poster.port) +
                             "\r\nContent-Type: application/json\r\nX-Payops-Timestamp: ";
    const auto timeout = std::chrono::seconds(poster.timeoutSeconds);
    const auto started = Clock::now();
    const auto dueAt = [&](size_t i) {
        return started +
               std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate));
    };
    size_t next = 0;
    size_t inFlight = 0;
    Clock::time_point lastSent = started;
    Clock::time_point lastSweep = started;
    std::vector<epoll_event> events(pool.size());
    while (next < bodies.size() || inFlight > 0) {
        auto now = Clock::now();
        while (next < bodies.size() && dueAt(next) <= now && !idle.empty()) {
            Connection &connection = pool[idle.back()];
            idle.pop_back();
            const qint64 stamp = QDateTime::currentSecsSinceEpoch();
            const QByteArray &body = bodies[next];
            connection.out = head + std::to_string(stamp) + "\r\nX-Payops-Signature: " +
                             signatureHeader(poster.secret, stamp, body).toStdString() +
                             "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                             body.toStdString();
            connection.request = long(next);
            connection.sent = now;
            if (now - dueAt(next) > std::chrono::milliseconds(100))
                ++result.late;
            lastSent = now;
            ++next;
            ++inFlight;
            if (!flush(connection)) {
                --inFlight;
                drop(size_t(&connection - pool.data()));
            }
        }
        // Until the next request falls due, or an answer comes; at most 10 ms, for the sweep.
        int waitMs = 10;
        if (next < bodies.size() && !idle.empty())
            waitMs = int(std::clamp<qint64>(
                std::chrono::duration_cast<std::chrono::milliseconds>(dueAt(next) - now).count(), 0,
                10));
        const int ready = ::epoll_wait(epoll, events.data(), int(events.size()), waitMs);
        now = Clock::now();
        for (int e = 0; e < ready; ++e) {
            const size_t c = events[size_t(e)].data.u64;
            Connection &connection = pool[c];
            if (connection.fd < 0 || !flush(connection)) {
                if (connection.request >= 0)
                    --inFlight;
                drop(c);
                continue;
            }
            bool gone = false;
            char buffer[16384];
            for (;;) {
                const ssize_t n = ::recv(connection.fd, buffer, sizeof buffer, 0);
                if (n > 0) {
                    connection.in.append(buffer, size_t(n));
                    continue;
                }
                gone = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
                break;
            }
            if (connection.request < 0)
                connection.in.clear(); // nothing asked: no answer to keep
            bool closes = false;
            if (const auto answer = completeAnswer(connection.in, closes);
                answer && connection.request >= 0) {
                result.statuses[size_t(connection.request)] = answer->first;
                result.latencies[size_t(connection.request)] =
                    std::chrono::duration<double>(now - connection.sent).count();
                connection.in.erase(0, answer->second);
                connection.request = -1;
                --inFlight;
                if (closes || gone)
                    drop(c);
                else
                    idle.push_back(c);
            } else if (gone) {
                if (connection.request >= 0)
                    --inFlight;
                drop(c);
            }
        }
        // An answer not received within the timeout is no answer (status 0).
        if (now - lastSweep > std::chrono::milliseconds(10)) {
            lastSweep = now;
            for (size_t c = 0; c < pool.size(); ++c)
                if (pool[c].request >= 0 && now - pool[c].sent > timeout) {
                    --inFlight;
                    drop(c);
                }
        }
        // No connection to be had: what is left is sent nowhere and counts as unanswered.
        if (idle.empty() && inFlight == 0)
            break;
    }
    for (Connection &connection : pool)
        if (connection.fd >= 0)
            ::close(connection.fd);
    ::close(epoll);
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    result.sendSeconds = std::chrono::duration<double>(lastSent - started).count();
    return result;
}

} // namespace payops::bench
