#pragma once

#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbacktrace.h"
#include "httpserver.h"
#include "serviceoptions.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QSqlDatabase>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace payops {

class CallbackHandler;
namespace db {
class Error;
}
class Gateway;
class Heartbeat;
class JobQueue;
class RecordBatcher;
class ReplayWindow;
class ServiceMetrics;
struct SwitchObserver;

// payops-callbackd: POST /callbacks/pay, GET /healthz, GET /metrics. HTTP runs on the
// event loops of HttpServer; the database work of a callback runs on a bounded pool of
// workers, each owning one connection.
class CallbackService final
{
    Q_DECLARE_TR_FUNCTIONS(payops::CallbackService)

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
    void route(HttpRequest request, HttpResponder respond);
    void handlePay(WireFormat wire, HttpRequest request, HttpResponder respond);
    CallbackAnswer processPay(const CallbackRequest &request, CallbackTrace &trace);
    CallbackAnswer handleOnThreadConnection(const CallbackRequest &request, CallbackTrace &trace);
    void loseCommitReplyOnce(const QSqlDatabase &db, const QByteArray &payNo);
    CallbackAnswer answerAfterFailure(const db::Error &error, const CallbackRequest &request,
                                      CallbackTrace &trace);
    void traceAt(const CallbackRequest &request, CallbackTrace &trace) const;
    QString handlerName() const;
    HttpResponse health() const;
    HttpResponse metrics() const;
    void checkInstanceName();
    bool gateway() const { return m_options.gateway(); }

    ServiceOptions m_options;
    std::unique_ptr<HttpServer> m_server;
    std::unique_ptr<Gateway> m_gateway; // gateway mode; outlives the workers that hand it forwards
    std::unique_ptr<JobQueue> m_jobs;
    std::unique_ptr<RecordBatcher> m_batcher; // RECORD_ONLY's group commit; safe handler only
    std::unique_ptr<SwitchObserver> m_switch;
    std::unique_ptr<ServiceMetrics> m_metrics;
    std::unique_ptr<ReplayWindow> m_replays;    // which signed requests may keep their connection
    std::unique_ptr<CallbackHandler> m_handler; // handler mode
    std::unique_ptr<Heartbeat> m_heartbeat;
    std::mutex m_stopMutex;
    std::condition_variable m_stopWake;
    bool m_stopRequested = false;
    QByteArray
        m_loseCommitReplyOf; // a test's pay_no whose COMMIT reply is made to go missing, once
    std::atomic<bool> m_commitReplyLost{false};
};

} // namespace payops
