#pragma once

#include <QByteArray>
#include <QList>
#include <QMutex>

#include <functional>
#include <memory>
#include <thread>
#include <utility>

namespace httplib {
class Server;
}

namespace payops::test {

// A small HTTP server on 127.0.0.1 that keeps every POST it receives, as it came, and answers
// each as `answer` says: what a test puts where an endpoint would be, to look at what a client
// (the storm) sends.
class CaptureReceiver final
{
public:
    struct Request
    {
        QByteArray path;
        QList<std::pair<QByteArray, QByteArray>> headers; // names as sent
        QByteArray body;

        QByteArray header(const QByteArray &name) const; // case-insensitive; empty if absent
    };
    struct Answer
    {
        int status = 200;
        QByteArray body;
    };
    using Answerer = std::function<Answer(const Request &)>;

    explicit CaptureReceiver(Answerer answerer = {});
    ~CaptureReceiver();
    CaptureReceiver(const CaptureReceiver &) = delete;
    CaptureReceiver &operator=(const CaptureReceiver &) = delete;

    int port() const { return m_port; }
    QByteArray url() const; // http://127.0.0.1:PORT
    QList<Request> requests() const;

private:
    Answerer m_answer;
    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
    int m_port = 0;
    mutable QMutex m_mutex;
    QList<Request> m_requests;
};

} // namespace payops::test
