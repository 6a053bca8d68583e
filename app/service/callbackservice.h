#pragma once

#include "db/dsn.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace payops {

class CallbackHandler;
class Heartbeat;
class ServiceMetrics;
struct SwitchObserver;

struct ServiceOptions
{
    Dsn dsn;
    QString host = QStringLiteral("127.0.0.1");
    int port = 8080;          // 0: any free port
    QByteArray secret;
    QString handler = QStringLiteral("safe"); // or unsafe-demo
    QString instance;         // default: <hostname>:<port>
    int threads = 8;
    int lockTimeoutSeconds = 5;
    int unsafeCommitDelayMs = 60;
    int readTimeoutSeconds = 5;
};

// payops-callbackd: POST /callbacks/pay, GET /healthz, GET /metrics, over cpp-httplib's
// thread pool. Each worker thread owns one database connection.
class CallbackService final
{
public:
    explicit CallbackService(ServiceOptions options);
    ~CallbackService();
    CallbackService(const CallbackService &) = delete;
    CallbackService &operator=(const CallbackService &) = delete;

    // Checks the database (schema present; a sandbox for unsafe-demo), binds the port and
    // registers the instance. Returns the port. Throws std::runtime_error naming the fault.
    int start();
    // Serves until stop(); then finishes the requests in flight and marks the instance stopped.
    void run();
    // Safe to call from any thread.
    void stop();

    const QString &instanceId() const { return m_options.instance; }

private:
    void handlePay(const httplib::Request &request, httplib::Response &response);
    void handleHealth(httplib::Response &response);

    ServiceOptions m_options;
    std::unique_ptr<httplib::Server> m_server;
    std::unique_ptr<SwitchObserver> m_switch;
    std::unique_ptr<ServiceMetrics> m_metrics;
    std::unique_ptr<CallbackHandler> m_handler;
    std::unique_ptr<Heartbeat> m_heartbeat;
};

} // namespace payops
