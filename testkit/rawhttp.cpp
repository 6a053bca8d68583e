#include "rawhttp.h"

#include "callbackfixture.h"
#include "domain/callback/signature.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFile>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace payops::test {

namespace {

// An attacker's many sockets need more descriptors than the default soft limit.
void raiseOpenFilesLimit()
{
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
}

} // namespace

int connectFrom(const char *sourceAddress, int port, int timeoutMs)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (timeoutMs > 0) {
        const timeval wait{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    }
    sockaddr_in source{};
    source.sin_family = AF_INET;
    ::inet_pton(AF_INET, sourceAddress, &source.sin_addr);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(quint16(port));
    ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&source), sizeof source) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr *>(&target), sizeof target) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void closeSocket(int fd)
{
    if (fd >= 0)
        ::close(fd);
}

bool sendAll(int fd, const QByteArray &bytes)
{
    qsizetype sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n =
            ::send(fd, bytes.constData() + sent, size_t(bytes.size() - sent), MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        sent += n;
    }
    return true;
}

QByteArray signedPost(const QByteArray &body)
{
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    return "POST /callbacks/pay HTTP/1.1\r\nHost: payops\r\nContent-Type: "
           "application/json\r\nX-Payops-Timestamp: " +
           QByteArray::number(now) +
           "\r\nX-Payops-Signature: " + signatureHeader(testSecret(), now, body) +
           "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

namespace {

// One response at the start of buffer, or nullopt while incomplete.
std::optional<std::pair<RawResponse, qsizetype>> takeResponse(const QByteArray &buffer)
{
    const qsizetype headersEnd = buffer.indexOf("\r\n\r\n");
    if (headersEnd < 0)
        return std::nullopt;
    const QByteArray head = buffer.left(headersEnd);
    RawResponse response;
    response.status = head.mid(9, 3).toInt();
    qsizetype length = 0;
    for (const QByteArray &line : head.split('\n')) {
        if (line.toLower().startsWith("content-length:"))
            length = line.mid(15).trimmed().toLongLong();
    }
    if (buffer.size() < headersEnd + 4 + length)
        return std::nullopt;
    response.body = buffer.mid(headersEnd + 4, length);
    return std::make_pair(response, headersEnd + 4 + length);
}

} // namespace

QList<RawResponse> readResponses(int fd, int count, int timeoutMs)
{
    QList<RawResponse> responses;
    QByteArray buffer;
    QDeadlineTimer deadline(timeoutMs);
    while (responses.size() < count && !deadline.hasExpired()) {
        while (const auto taken = takeResponse(buffer)) {
            responses.append(taken->first);
            buffer.remove(0, taken->second);
        }
        if (responses.size() == count)
            break;
        pollfd readable{fd, POLLIN, 0};
        if (::poll(&readable, 1, int(std::max<qint64>(1, deadline.remainingTime()))) <= 0)
            continue;
        char chunk[65536];
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0)
            break;
        buffer.append(chunk, n);
    }
    while (const auto taken = takeResponse(buffer)) {
        responses.append(taken->first);
        buffer.remove(0, taken->second);
    }
    return responses;
}

Crowd::Crowd(int port, int idle, int drippers, int perAddress)
{
    raiseOpenFilesLimit();
    int opened = 0;
    const auto nextSource = [&opened, perAddress] {
        return QByteArray("127.0.0.") + QByteArray::number(2 + opened++ / perAddress);
    };
    for (int i = 0; i < idle; ++i) {
        if (const int fd = connectFrom(nextSource().constData(), port); fd >= 0)
            m_idle.push_back(fd);
    }
    for (int i = 0; i < drippers; ++i) {
        if (const int fd = connectFrom(nextSource().constData(), port); fd >= 0)
            m_drippers.push_back(fd);
    }
    m_dripper = std::thread([this] {
        const QByteArray line = "POST /callbacks/pay HTTP/1.1\r\nX-Padding: ";
        for (qsizetype at = 0; !m_stop.load(); ++at) {
            const char byte = at < line.size() ? line.at(at) : 'a';
            for (const int fd : m_drippers)
                ::send(fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            for (int tick = 0; tick < 10 && !m_stop.load(); ++tick)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
}

Crowd::~Crowd()
{
    m_stop.store(true);
    m_dripper.join();
    for (const int fd : m_idle)
        ::close(fd);
    for (const int fd : m_drippers)
        ::close(fd);
}

Occupier::Occupier(int port, int firstOctet, int addresses, int perAddress, int requestEveryMs,
                   const QByteArray &request, int reconnectAfterMs)
{
    raiseOpenFilesLimit();
    m_thread = std::thread([=, this] {
        run(port, firstOctet, addresses, perAddress, requestEveryMs, request, reconnectAfterMs);
    });
}

Occupier::~Occupier()
{
    m_stop.store(true);
    m_thread.join();
}

void Occupier::run(int port, int firstOctet, int addresses, int perAddress, int requestEveryMs,
                   const QByteArray &request, int reconnectAfterMs)
{
    using Clock = std::chrono::steady_clock;
    struct Slot
    {
        int fd = -1;
        QByteArray source;
        Clock::time_point next; // the next request, or the next connect
    };
    std::vector<Slot> slots(size_t(addresses * perAddress));
    for (size_t i = 0; i < slots.size(); ++i)
        slots[i].source =
            QByteArray("127.0.0.") + QByteArray::number(firstOctet + int(i) / perAddress);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(quint16(port));
    ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
    const auto drop = [this, reconnectAfterMs](Slot &slot, Clock::time_point now) {
        ::close(slot.fd);
        slot.fd = -1;
        slot.next = now + std::chrono::milliseconds(reconnectAfterMs);
        m_open.fetch_sub(1);
        m_closed.fetch_add(1);
    };
    while (!m_stop.load()) {
        const auto now = Clock::now();
        for (Slot &slot : slots) {
            if (slot.fd < 0) {
                if (now < slot.next)
                    continue;
                const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                sockaddr_in source{};
                source.sin_family = AF_INET;
                ::inet_pton(AF_INET, slot.source.constData(), &source.sin_addr);
                if (fd < 0 ||
                    ::bind(fd, reinterpret_cast<sockaddr *>(&source), sizeof source) != 0 ||
                    (::connect(fd, reinterpret_cast<sockaddr *>(&target), sizeof target) != 0 &&
                     errno != EINPROGRESS)) {
                    if (fd >= 0)
                        ::close(fd);
                    slot.next = now + std::chrono::seconds(1);
                    continue;
                }
                slot.fd = fd;
                slot.next = now; // its first request as soon as it is connected
                m_open.fetch_add(1);
            }
            char sink[4096];
            const ssize_t read = ::recv(slot.fd, sink, sizeof sink, MSG_DONTWAIT);
            if (read == 0 ||
                (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)) {
                drop(slot, now);
                continue;
            }
            if (now >= slot.next) {
                if (::send(slot.fd, request.constData(), size_t(request.size()),
                           MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
                    slot.next = now + std::chrono::milliseconds(requestEveryMs);
                else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)
                    drop(slot, now); // still connecting: sent on the next round
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (Slot &slot : slots) {
        if (slot.fd >= 0)
            ::close(slot.fd);
    }
}

qint64 CallbackRun::percentile(double p) const
{
    if (millis.isEmpty())
        return 0;
    return millis.at(std::min<qsizetype>(millis.size() - 1, qsizetype(p * double(millis.size()))));
}

CallbackRun sendCallbacksFrom(const char *sourceAddress, int port, const QByteArray &payNoPrefix,
                              qint64 firstOrderId, int count, int timeoutMs, int maxUnanswered)
{
    CallbackRun run;
    for (int i = 0; i < count && i - run.answered <= maxUnanswered; ++i) {
        QElapsedTimer timer;
        timer.start();
        const int fd = connectFrom(sourceAddress, port, timeoutMs);
        bool answered = false;
        if (fd >= 0) {
            const QByteArray body =
                callbackBody(payNoPrefix + QByteArray::number(i), firstOrderId + i, 9900);
            if (sendAll(fd, signedPost(body))) {
                const auto responses =
                    readResponses(fd, 1, int(std::max<qint64>(1, timeoutMs - timer.elapsed())));
                answered = responses.size() == 1 && responses.first().status / 100 == 2;
            }
            closeSocket(fd);
        }
        run.answered += answered ? 1 : 0;
        run.millis.append(answered ? timer.elapsed() : qint64(timeoutMs));
    }
    std::sort(run.millis.begin(), run.millis.end());
    return run;
}

QString shortOfTheBar(const CallbackRun &run, int count, qint64 limitMs)
{
    if (run.answered >= count - count / 100 && run.percentile(0.99) < limitMs)
        return {};
    return QStringLiteral("%1 of %2 answered, p99 %3 ms")
        .arg(QString::number(run.answered), QString::number(count),
             QString::number(run.percentile(0.99)));
}

namespace {

// One "Name:   123 kB" line of /proc/PID/status, in KiB; -1 when the process is gone.
qint64 statusKiB(qint64 pid, const QByteArray &field)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field + ':'))
            return line.mid(field.size() + 1).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

} // namespace

qint64 residentKiB(qint64 pid)
{
    return statusKiB(pid, "VmRSS");
}

qint64 peakResidentKiB(qint64 pid)
{
    return statusKiB(pid, "VmHWM");
}

} // namespace payops::test
