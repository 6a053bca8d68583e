#include "capturereceiver.h"

#include <httplib.h>

#include <chrono>

namespace payops::test {

QByteArray CaptureReceiver::Request::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers)
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    return {};
}

CaptureReceiver::CaptureReceiver(Answerer answerer)
    : m_answer(std::move(answerer))
    , m_server(std::make_unique<httplib::Server>())
{
    m_server->Post(".*", [this](const httplib::Request &in, httplib::Response &out) {
        Request request;
        request.path = QByteArray::fromStdString(in.path);
        for (const auto &[name, value] : in.headers)
            request.headers.append(
                {QByteArray::fromStdString(name), QByteArray::fromStdString(value)});
        request.body = QByteArray::fromStdString(in.body);
        const Answer answer = m_answer ? m_answer(request) : Answer{};
        {
            const QMutexLocker lock(&m_mutex);
            m_requests.append(request);
        }
        out.status = answer.status;
        out.set_content(answer.body.toStdString(), "text/plain");
    });
    m_port = m_server->bind_to_any_port("127.0.0.1");
    if (m_port <= 0)
        return; // port() says so
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    while (!m_server->is_running())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

CaptureReceiver::~CaptureReceiver()
{
    m_server->stop();
    if (m_thread.joinable())
        m_thread.join();
}

QByteArray CaptureReceiver::url() const
{
    return "http://127.0.0.1:" + QByteArray::number(m_port);
}

QList<CaptureReceiver::Request> CaptureReceiver::requests() const
{
    const QMutexLocker lock(&m_mutex);
    return m_requests;
}

} // namespace payops::test
