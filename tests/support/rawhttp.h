#pragma once

#include <QByteArray>
#include <QList>

#include <atomic>
#include <thread>
#include <vector>

namespace payops::test {

// HTTP over plain sockets, for what a well-behaved client library will not do: hold
// connections idle, drip bytes, pipeline requests, send endless chunked bodies.

// A connected TCP socket from sourceAddress (any 127.x.y.z) to 127.0.0.1:port, or -1.
int connectFrom(const char *sourceAddress, int port);
void closeSocket(int fd);
bool sendAll(int fd, const QByteArray &bytes);

// A signed POST /callbacks/pay with a Content-Length.
QByteArray signedPost(const QByteArray &body);

struct RawResponse
{
    int status = 0;
    QByteArray body;
};
// Reads up to `count` responses (Content-Length framed) within timeoutMs; fewer when the
// peer closes or time runs out.
QList<RawResponse> readResponses(int fd, int count, int timeoutMs);

// Connections an attacker holds open: `idle` that send nothing, and `drippers` that send
// one byte of a never-ending request line every second, spread over source addresses
// 127.0.0.2 and up, `perAddress` to each.
class Crowd final
{
public:
    Crowd(int port, int idle, int drippers, int perAddress = 50);
    ~Crowd();
    Crowd(const Crowd &) = delete;
    Crowd &operator=(const Crowd &) = delete;
    int connected() const { return int(m_idle.size() + m_drippers.size()); }

private:
    std::vector<int> m_idle;
    std::vector<int> m_drippers;
    std::atomic<bool> m_stop{false};
    std::thread m_dripper;
};

// Resident memory of a process in KiB, from /proc.
qint64 residentKiB(qint64 pid);

} // namespace payops::test
