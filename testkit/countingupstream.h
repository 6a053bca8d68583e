#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>

#include <functional>

#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace httplib {
class Server;
}

namespace payops::test {

// What a CountingUpstream answers every request with.
struct CannedAnswer
{
    int status = 200;
    // "%PAY_NO%" is replaced by the request's X-Payops-Pay-No, so each answer is its own.
    QByteArray body = R"({"code":"SUCCESS","handled":"%PAY_NO%"})";
    QByteArray contentType = "application/json";
};

// A stand-in for a team's own handler behind a gateway, or for an endpoint in front of a client
// under test (the storm): an HTTP server on 127.0.0.1 that keeps every POST it gets, on any
// path (with the server time it arrived), and answers each with the answer it is told, after
// an optional delay.
class CountingUpstream final
{
public:
    struct Request
    {
        QByteArray path;
        QByteArray body;
        QList<std::pair<QByteArray, QByteArray>> headers;
        qint64 arrivedMicros = 0; // nowMicros() on arrival

        QByteArray header(const QByteArray &name) const;
        QByteArray payNo() const { return header("X-Payops-Pay-No"); }
    };

    // Decides each request's answer, for a test whose answers depend on the request.
    using Answerer = std::function<CannedAnswer(const Request &)>;

    // port 0: any free port; a port of an upstream stopped before brings it back there.
    // threads: requests it serves at once. Each kept-alive connection holds one, so a slow
    // upstream needs one for each client and each gateway connection that may be open at once.
    explicit CountingUpstream(int port = 0, CannedAnswer answer = {}, int delayMs = 0,
                              Answerer answerer = {}, int threads = 64);
    explicit CountingUpstream(Answerer answerer)
        : CountingUpstream(0, {}, 0, std::move(answerer))
    {
    }
    ~CountingUpstream();
    CountingUpstream(const CountingUpstream &) = delete;
    CountingUpstream &operator=(const CountingUpstream &) = delete;

    int port() const { return m_port; }
    QString url() const;     // http://127.0.0.1:PORT/notify
    QString baseUrl() const; // http://127.0.0.1:PORT
    // The answer it gives a request for this pay_no.
    QByteArray answerBodyFor(const QByteArray &payNo) const;

    QList<Request> received() const;
    int count() const;
    // Requests per pay_no.
    QHash<QByteArray, int> countByPayNo() const;

private:
    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
    int m_port = 0;
    CannedAnswer m_answer;
    Answerer m_answerer;
    int m_delayMs = 0;
    mutable std::mutex m_mutex;
    QList<Request> m_received;
};

} // namespace payops::test
