#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <QtGlobal>

#include <atomic>
#include <thread>
#include <vector>

namespace payops::test {

// HTTP over plain sockets, for what a well-behaved client library will not do: hold
// connections idle, drip bytes, pipeline requests, send endless chunked bodies.

// A connected TCP socket from sourceAddress (any 127.x.y.z) to 127.0.0.1:port, or -1. With a
// timeout, connecting and each send give up after it (a full backlog drops the handshake).
int connectFrom(const char *sourceAddress, int port, int timeoutMs = 0);
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

// An attacker that holds every slot it can get: from each of `addresses` source addresses
// (127.0.0.<firstOctet> and up) it keeps `perAddress` connections open, each sending `request`
// (a cheap `GET /x` unless given) as soon as it is connected and every `requestEveryMs` after,
// and opens a connection again `reconnectAfterMs` after the endpoint closes it. Connects never
// block, so a full backlog slows nobody but the endpoint.
class Occupier final
{
public:
    Occupier(int port, int firstOctet, int addresses, int perAddress, int requestEveryMs,
             const QByteArray &request = "GET /x HTTP/1.1\r\nHost: payops\r\n\r\n",
             int reconnectAfterMs = 1000);
    ~Occupier();
    Occupier(const Occupier &) = delete;
    Occupier &operator=(const Occupier &) = delete;
    // Connections open now (as the attacker sees them), and how many the endpoint ended.
    int open() const { return m_open.load(); }
    qint64 closedByPeer() const { return m_closed.load(); }

private:
    void run(int port, int firstOctet, int addresses, int perAddress, int requestEveryMs,
             const QByteArray &request, int reconnectAfterMs);

    std::atomic<bool> m_stop{false};
    std::atomic<int> m_open{0};
    std::atomic<qint64> m_closed{0};
    std::thread m_thread;
};

// A client's signed callbacks, each on a new connection from sourceAddress, answered or not
// within timeoutMs: how many got a 2xx, and the slowest answers. It stops early once more
// than maxUnanswered went unanswered.
struct CallbackRun
{
    int answered = 0;
    QList<qint64> millis; // each answer's time, sorted; an unanswered one counts timeoutMs
    qint64 percentile(double p) const;
};
CallbackRun sendCallbacksFrom(const char *sourceAddress, int port, const QByteArray &payNoPrefix,
                              qint64 firstOrderId, int count, int timeoutMs, int maxUnanswered);
// What a legitimate client under attack needs of a run of `count` callbacks: at least 99 %
// answered, the 99th percentile under limitMs. Empty when the run has it; else its figures.
QString shortOfTheBar(const CallbackRun &run, int count, qint64 limitMs);

// Resident memory of a process in KiB, from /proc: now (VmRSS), and the most it has held
// since it started (VmHWM).
qint64 residentKiB(qint64 pid);
qint64 peakResidentKiB(qint64 pid);

} // namespace payops::test
