#include "countingupstream.h"

#include "domain/callback/callbacktrace.h"

#include <httplib.h>

#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <stdexcept>

namespace payops::test {

QByteArray CountingUpstream::Request::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

CountingUpstream::CountingUpstream(int port, CannedAnswer answer, int delayMs, Answerer answerer,
                                   int threads)
    : m_server(std::make_unique<httplib::Server>())
    , m_answer(std::move(answer))
    , m_answerer(std::move(answerer))
    , m_delayMs(delayMs)
{
    // Each kept-alive connection holds one of the server's threads: a gateway keeps one per
    // forward in flight, and two gateways' workers outnumber httplib's default pool.
    m_server->new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    // As a handler behind a load balancer would: without it, Nagle's algorithm holds back the
    // answer's last segment until the client's delayed ACK, about 40 ms a request.
    m_server->set_tcp_nodelay(true);
    // httplib listens with a backlog of 5: 32 clients (or a gateway's workers) connecting at
    // once overflow it, and each connection refused costs a second's SYN retransmit. Once bound,
    // the socket is listened on again with room for them all.
    const auto listening = std::make_shared<int>(-1);
    m_server->set_socket_options([listening](socket_t sock) {
        httplib::default_socket_options(sock);
        *listening = sock;
    });
    m_server->Post(".*", [this](const httplib::Request &request, httplib::Response &response) {
        Request kept;
        kept.arrivedMicros = nowMicros();
        kept.path = QByteArray::fromStdString(request.path);
        kept.body = QByteArray::fromStdString(request.body);
        for (const auto &[name, value] : request.headers)
            kept.headers.append(
                {QByteArray::fromStdString(name), QByteArray::fromStdString(value)});
        {
            std::lock_guard lock(m_mutex);
            m_received.append(kept);
        }
        if (m_delayMs > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(m_delayMs));
        if (m_answerer) {
            const CannedAnswer decided = m_answerer(kept);
            response.status = decided.status;
            response.set_content(decided.body.toStdString(), decided.contentType.toStdString());
            return;
        }
        response.status = m_answer.status;
        response.set_content(answerBodyFor(kept.payNo()).toStdString(),
                             m_answer.contentType.toStdString());
    });
    m_port = port == 0 ? m_server->bind_to_any_port("127.0.0.1")
                       : (m_server->bind_to_port("127.0.0.1", port) ? port : -1);
    if (m_port <= 0 || ::listen(*listening, 256) != 0)
        throw std::runtime_error("the counting upstream could not bind its port");
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    // stop() does nothing to a server that is not running yet: the destructor would wait for
    // a loop that never ends.
    while (!m_server->is_running())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

CountingUpstream::~CountingUpstream()
{
    m_server->stop();
    m_thread.join();
}

QString CountingUpstream::url() const
{
    return QStringLiteral("http://127.0.0.1:%1/notify").arg(m_port);
}

QString CountingUpstream::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

QByteArray CountingUpstream::answerBodyFor(const QByteArray &payNo) const
{
    return QByteArray(m_answer.body).replace("%PAY_NO%", payNo);
}

QList<CountingUpstream::Request> CountingUpstream::received() const
{
    std::lock_guard lock(m_mutex);
    return m_received;
}

int CountingUpstream::count() const
{
    std::lock_guard lock(m_mutex);
    return int(m_received.size());
}

QHash<QByteArray, int> CountingUpstream::countByPayNo() const
{
    std::lock_guard lock(m_mutex);
    QHash<QByteArray, int> counts;
    for (const Request &request : m_received)
        ++counts[request.payNo()];
    return counts;
}

} // namespace payops::test
