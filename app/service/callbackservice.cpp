#include "callbackservice.h"

#include "callbackhandler.h"
#include "callbackrequest.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "heartbeat.h"
#include "paymentapplier.h"
#include "safehandler.h"
#include "servicemetrics.h"
#include "signature.h"
#include "unsafehandler.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSysInfo>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>
#include <unistd.h>

namespace payops {
namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;

// Qt allows a connection only on the thread that opened it: each HTTP worker thread keeps
// its own, made on first use and dropped after a connection failure.
thread_local std::unique_ptr<db::Connection> t_connection;

db::Connection &threadConnection(const Dsn &dsn)
{
    if (!t_connection)
        t_connection = std::make_unique<db::Connection>(dsn, QStringLiteral("http"));
    return *t_connection;
}

void answer(httplib::Response &response, const CallbackAnswer &callbackAnswer)
{
    response.status = callbackAnswer.httpStatus;
    response.set_content(callbackAnswer.body.toStdString(), "application/json");
}

[[noreturn]] void fail(const QString &message)
{
    throw std::runtime_error(message.toStdString());
}

} // namespace

CallbackService::CallbackService(ServiceOptions options)
    : m_options(std::move(options))
    , m_server(std::make_unique<httplib::Server>())
    , m_switch(std::make_unique<SwitchObserver>())
    , m_metrics(std::make_unique<ServiceMetrics>())
{
}

CallbackService::~CallbackService() = default;

int CallbackService::start()
{
    if (m_options.secret.isEmpty())
        fail(QStringLiteral("the signing secret is empty"));
    QString fromState;
    try {
        db::Connection connection(m_options.dsn, QStringLiteral("startup"));
        const QSqlDatabase db = connection.database();
        if (!db::Migrator(connection).currentLevel())
            fail(QStringLiteral("database '%1' has no payops schema; run payops migrate --db DSN").arg(m_options.dsn.database));
        if (m_options.handler == QLatin1String("unsafe-demo") && !db::isSandboxDatabase(db))
            fail(QStringLiteral("refusing --handler unsafe-demo: database '%1' is not marked as a sandbox. The unsafe "
                                "handler pays out twice on purpose; run it only on a sandbox (payops sandbox start, "
                                "or payops migrate --sandbox on a throwaway database)").arg(m_options.dsn.database));
        fromState = paymentFromState(db);
    } catch (const db::Error &error) {
        fail(error.message());
    }

    m_server->new_task_queue = [threads = m_options.threads] { return new httplib::ThreadPool(size_t(threads)); };
    m_server->set_payload_max_length(kMaxBodyBytes);
    m_server->set_read_timeout(m_options.readTimeoutSeconds, 0);
    m_server->set_write_timeout(m_options.readTimeoutSeconds, 0);
    // Without TCP_NODELAY a keep-alive answer waits out the peer's delayed ACK (~40 ms).
    m_server->set_tcp_nodelay(true);
    m_server->set_keep_alive_timeout(5);
    m_server->set_keep_alive_max_count(1000);
    m_server->Post("/callbacks/pay", [this](const httplib::Request &request, httplib::Response &response) {
        handlePay(request, response);
    });
    m_server->Get("/healthz", [this](const httplib::Request &, httplib::Response &response) { handleHealth(response); });
    m_server->Get("/metrics", [this](const httplib::Request &, httplib::Response &response) {
        response.set_content(m_metrics->render(*m_switch, m_handler->name()), "text/plain; version=0.0.4");
    });
    m_server->set_error_handler([this](const httplib::Request &, httplib::Response &response) {
        if (response.status == 413) {
            const auto tooLarge = CallbackAnswer::failure(413, Outcome::TooLarge, QStringLiteral("body over 64 KiB"));
            m_metrics->record(tooLarge, 0);
            answer(response, tooLarge);
        }
    });

    int port = m_options.port;
    if (port == 0)
        port = m_server->bind_to_any_port(m_options.host.toStdString());
    else if (!m_server->bind_to_port(m_options.host.toStdString(), port))
        port = -1;
    if (port <= 0)
        fail(QStringLiteral("cannot listen on %1:%2 (address in use or not local?)").arg(m_options.host).arg(m_options.port));
    m_options.port = port;
    if (m_options.instance.isEmpty())
        m_options.instance = QStringLiteral("%1:%2").arg(QSysInfo::machineHostName()).arg(port);

    if (m_options.handler == QLatin1String("unsafe-demo"))
        m_handler = std::make_unique<UnsafeHandler>(m_options.instance, m_options.unsafeCommitDelayMs,
                                                    m_options.lockTimeoutSeconds);
    else
        m_handler = std::make_unique<SafeHandler>(m_options.instance, fromState, *m_switch,
                                                  m_options.lockTimeoutSeconds);

    InstanceInfo info{m_options.instance, QSysInfo::machineHostName(), qint64(::getpid()),
                      QStringLiteral("%1:%2").arg(m_options.host).arg(port), QString::fromLatin1(m_handler->name())};
    m_heartbeat = std::make_unique<Heartbeat>(m_options.dsn, info, *m_switch, *m_metrics);
    try {
        m_heartbeat->start();
    } catch (const db::Error &error) {
        fail(error.message());
    }
    return port;
}

void CallbackService::run()
{
    m_server->listen_after_bind();
    // listen_after_bind returns once stop() closed the socket and the worker threads have
    // finished every request already accepted.
    m_heartbeat->stop();
}

void CallbackService::stop()
{
    m_server->stop();
}

void CallbackService::handlePay(const httplib::Request &httpRequest, httplib::Response &response)
{
    const auto started = std::chrono::steady_clock::now();
    CallbackTrace trace;
    trace.received = nowMicros();
    const QByteArray body(httpRequest.body.data(), qsizetype(httpRequest.body.size()));

    const auto finish = [&](const CallbackAnswer &callbackAnswer) {
        answer(response, callbackAnswer);
        m_metrics->record(callbackAnswer,
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    };

    const SignatureCheck signature = verifySignature(
        m_options.secret, QByteArray::fromStdString(httpRequest.get_header_value("X-Payops-Timestamp")),
        QByteArray::fromStdString(httpRequest.get_header_value("X-Payops-Signature")), body,
        QDateTime::currentSecsSinceEpoch());
    if (signature != SignatureCheck::Valid)
        return finish(CallbackAnswer::failure(401, Outcome::Unauthorized, QString::fromLatin1(describe(signature))));

    QString parseError;
    const auto request = CallbackRequest::parse(body, &parseError);
    if (!request)
        return finish(CallbackAnswer::failure(400, Outcome::Invalid, parseError));

    trace.payNo = request->payNo;
    trace.orderId = request->orderId;
    trace.instance = m_options.instance;
    trace.handler = QString::fromLatin1(m_handler->name());

    CallbackAnswer callbackAnswer;
    try {
        db::Connection &connection = threadConnection(m_options.dsn);
        callbackAnswer = m_handler->handle(connection.database(), *request, trace);
    } catch (const db::Error &error) {
        // Nothing was committed: the transaction rolled back (or the connection died with
        // it), so the platform's retry will find the callback new.
        if (error.isConnectionFailure())
            t_connection.reset();
        spdlog::warn("callback {} not processed: {}", request->payNo.toStdString(), error.what());
        callbackAnswer = CallbackAnswer::failure(503, Outcome::Unavailable,
                                                 QStringLiteral("database unavailable; retry later"));
    }

    trace.responded = nowMicros();
    trace.outcome = QString::fromLatin1(outcomeLabel(callbackAnswer.outcome));
    trace.httpStatus = callbackAnswer.httpStatus;
    if (t_connection) {
        try {
            writeTrace(t_connection->database(), trace);
        } catch (const db::Error &error) {
            spdlog::warn("trace of {} not written: {}", request->payNo.toStdString(), error.what());
        }
    }
    finish(callbackAnswer);
}

void CallbackService::handleHealth(httplib::Response &response)
{
    const bool reachable = m_heartbeat->databaseReachable();
    const QJsonObject health{
        {QStringLiteral("status"), reachable ? QStringLiteral("ok") : QStringLiteral("degraded")},
        {QStringLiteral("instance"), m_options.instance},
        {QStringLiteral("handler"), QString::fromLatin1(m_handler->name())},
        {QStringLiteral("mode"), m_switch->recordOnlyHint.load() ? QStringLiteral("RECORD_ONLY") : QStringLiteral("NORMAL")},
        {QStringLiteral("switch_version"), m_switch->versionApplied.load()},
        {QStringLiteral("db"), reachable ? QStringLiteral("ok") : QStringLiteral("unreachable")}};
    response.status = reachable ? 200 : 503;
    response.set_content(QJsonDocument(health).toJson(QJsonDocument::Compact).toStdString(), "application/json");
}

} // namespace payops
