#include "callbackservice.h"

#include "callbackgate.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/callback/callbackhandler.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/gatewayforward.h"
#include "domain/callback/instanceliveness.h"
#include "domain/callback/paymentapplier.h"
#include "domain/callback/platformreply.h"
#include "domain/callback/safehandler.h"
#include "domain/callback/unsafehandler.h"
#include "gateway.h"
#include "heartbeat.h"
#include "jobqueue.h"
#include "recordbatcher.h"
#include "replaywindow.h"
#include "servicemetrics.h"
#include "threadconnection.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSysInfo>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <signal.h>
#include <stdexcept>
#include <unistd.h>

namespace payops {
namespace {

// The answer in the format the callback came in (payops's own JSON for /callbacks/pay).
HttpResponse toResponse(WireFormat wire, const CallbackAnswer &callbackAnswer, bool useful)
{
    const PlatformReply reply = platformReply(wire, callbackAnswer);
    HttpResponse response{reply.status, reply.body, reply.contentType};
    response.useful = useful;
    return response;
}

// A later event of a trade (a refund's outcome) reaches a handler that pays orders and acts on
// no refund: it is kept in callback_event, once, and answered as taken, so that the platform
// stops resending it and nothing it said is lost (docs/gateway.md, "One forward per event").
CallbackAnswer keepLaterEvent(const QSqlDatabase &db, const CallbackRequest &request,
                              const QString &instance)
{
    try {
        recordEvent(db, request, QStringLiteral("IGNORED"), instance);
    } catch (const db::Error &error) {
        if (!error.isDuplicateKey()) // a resend of an event kept before
            throw;
    }
    return CallbackAnswer::success(Outcome::Ignored, QStringLiteral("kept, not acted on: ") +
                                                         QString::fromUtf8(request.event));
}

[[noreturn]] void fail(const QString &message)
{
    throw std::runtime_error(message.toStdString());
}

// Every connection the server closed on its own, by why: a flood shows as which limit held it.
std::string closedConnectionsText(const HttpServer::Counters &http)
{
    std::string text =
        "# HELP payops_http_connections_closed_total Connections the endpoint closed, by reason.\n"
        "# TYPE payops_http_connections_closed_total counter\n";
    for (int reason = 0; reason < int(HttpServer::CloseReason::Count); ++reason) {
        const auto why = HttpServer::CloseReason(reason);
        text += std::string("payops_http_connections_closed_total{reason=\"") +
                HttpServer::label(why) + "\"} " + std::to_string(http.closedFor(why)) + "\n";
    }
    return text;
}

double secondsSince(std::chrono::steady_clock::time_point started)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

} // namespace

CallbackService::CallbackService(ServiceOptions options)
    : m_options(std::move(options))
    , m_switch(std::make_unique<SwitchObserver>())
    , m_metrics(std::make_unique<ServiceMetrics>())
    , m_replays(std::make_unique<ReplayWindow>())
    , m_loseCommitReplyOf(qgetenv("PAYOPS_TEST_LOSE_COMMIT_REPLY"))
{
}

CallbackService::~CallbackService() = default;

int CallbackService::start()
{
    // Every connection of the endpoint waits for a row no longer than for a pay_no's lock (at
    // least the server's least, 1 s): a callback is then answered 503 and retried by the
    // platform. The server's default is 50 s, long after the platform gave up on the answer,
    // and all that time the transaction (a callback's, a record-only batch's, a gateway's
    // recording) holds the switch's shared lock, which a flip waits for. On a Galera cluster a
    // flip once waited 49 s, most likely behind such a wait (docs/servers.md).
    m_options.dsn.lockWaitSeconds = std::max(1, m_options.lockTimeoutSeconds);
    if (m_options.secret.isEmpty())
        fail(CallbackService::tr("the signing secret is empty"));
    QString fromState;
    try {
        db::Connection connection(m_options.dsn, QStringLiteral("startup"));
        const QSqlDatabase db = connection.database();
        if (!db::Migrator(connection).currentLevel())
            fail(CallbackService::tr(
                     "database '%1' has no payops schema; run payops migrate --db DSN")
                     .arg(m_options.dsn.database));
        if (m_options.handler == QLatin1String("unsafe-demo") && !db::isSandboxDatabase(db))
            fail(
                CallbackService::tr(
                    "refusing --handler unsafe-demo: database '%1' is not marked as a sandbox. The "
                    "unsafe handler pays out twice on purpose; run it only on a sandbox (payops "
                    "sandbox start, or payops migrate --sandbox on a throwaway database)")
                    .arg(m_options.dsn.database));
        fromState = paymentFromState(db);
    } catch (const db::Error &error) {
        fail(db::userMessage(error));
    }

    m_server = std::make_unique<HttpServer>(
        m_options.limits,
        [this](HttpRequest request, HttpResponder respond) {
            route(std::move(request), std::move(respond));
        },
        [this] { m_metrics->record(CallbackAnswer::failure(413, Outcome::TooLarge, {}), 0); });
    const int port = m_server->listen(m_options.host, m_options.port);
    m_options.port = port;
    if (m_options.instance.isEmpty())
        m_options.instance =
            QStringLiteral("%1:%2").arg(QSysInfo::machineHostName(), QString::number(port));
    checkInstanceName();

    if (gateway())
        m_gateway = std::make_unique<Gateway>(m_options, *m_switch, *m_metrics);
    else if (m_options.handler == QLatin1String("unsafe-demo"))
        m_handler = std::make_unique<UnsafeHandler>(
            m_options.instance, m_options.unsafeCommitDelayMs, m_options.lockTimeoutSeconds);
    else
        m_handler = std::make_unique<SafeHandler>(m_options.instance, fromState, *m_switch,
                                                  m_options.lockTimeoutSeconds);

    InstanceInfo info{m_options.instance, QSysInfo::machineHostName(), qint64(::getpid()),
                      ServiceOptions::hostAndPort(m_options.host, port), handlerName()};
    if (gateway()) {
        info.mode = QStringLiteral("gateway");
        info.upstream = m_options.upstreamsText();
    }
    m_heartbeat = std::make_unique<Heartbeat>(m_options.dsn, info, *m_switch, *m_metrics);
    try {
        m_heartbeat->start();
    } catch (const db::Error &error) {
        fail(db::userMessage(error));
    }
    m_jobs = std::make_unique<JobQueue>(m_options.threads, m_options.limits.queueDepth,
                                        std::chrono::milliseconds(m_options.limits.queueWaitMs));
    if (!gateway() && m_options.handler == QLatin1String("safe"))
        m_batcher = std::make_unique<RecordBatcher>(
            m_options.dsn, m_options.instance,
            RecordBatcher::Limits{m_options.recordBatchRows,
                                  std::chrono::milliseconds(m_options.recordBatchMs),
                                  m_options.limits.queueDepth,
                                  std::chrono::milliseconds(m_options.limits.queueWaitMs)},
            *m_switch, *m_metrics,
            [this](const QSqlDatabase &db, const QList<CallbackRequest> &requests) {
                for (const CallbackRequest &request : requests)
                    loseCommitReplyOnce(db, request.payNo);
            });
    m_server->start();
    return port;
}

void CallbackService::checkInstanceName()
{
    // Two processes under one name would overwrite one row of callback_instance, and the
    // console would show one healthy instance where two run. A name is free when its row is
    // stopped, its heartbeat is stale, or its process on this host is gone.
    try {
        db::Connection connection(m_options.dsn, QStringLiteral("startup"));
        QSqlQuery query =
            db::exec(connection.database(),
                     QStringLiteral("SELECT host, pid FROM callback_instance WHERE id = ? AND %1")
                         .arg(instanceLiveSql()),
                     {m_options.instance});
        if (!query.next())
            return;
        const QString host = query.value(0).toString();
        const qint64 pid = query.value(1).toLongLong();
        if (host == QSysInfo::machineHostName() && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
            return;
        if (m_options.takeOver) {
            spdlog::warn("taking over instance name {} from pid {} on {}",
                         m_options.instance.toStdString(), pid, host.toStdString());
            return;
        }
        fail(CallbackService::tr(
                 "instance name '%1' is in use by a live payops-callbackd (pid %2 on %3); choose "
                 "another --instance, or pass --take-over if that process is gone")
                 .arg(m_options.instance, QString::number(pid), host));
    } catch (const db::Error &error) {
        fail(db::userMessage(error));
    }
}

void CallbackService::run()
{
    {
        std::unique_lock lock(m_stopMutex);
        m_stopWake.wait(lock, [this] { return m_stopRequested; });
    }
    // The server answers every request already taken (their jobs run to the end) before the
    // workers go; then the instance is marked stopped.
    m_server->stop();
    if (m_batcher)
        m_batcher->stop(); // before the workers: a batch may hand callbacks to them
    m_jobs->stop();
    if (m_gateway)
        m_gateway->stop(); // after the workers, who hand it forwards
    m_heartbeat->stop();
}

void CallbackService::stop()
{
    {
        std::lock_guard lock(m_stopMutex);
        m_stopRequested = true;
    }
    m_stopWake.notify_all();
}

void CallbackService::route(HttpRequest request, HttpResponder respond)
{
    const auto route = routeOf(request);
    if (const auto *refusal = std::get_if<HttpResponse>(&route))
        return respond(*refusal);
    switch (std::get<Route>(route)) {
    case Route::Pay:
    case Route::WechatPay:
    case Route::Alipay: {
        const WireFormat wire = *wireOf(std::get<Route>(route));
        if (!isServed(wire, m_options))
            return respond(noSuchPath()); // its keys are not configured
        return handlePay(wire, std::move(request), std::move(respond));
    }
    case Route::Health:
        return respond(health());
    case Route::Metrics:
        return respond(metrics());
    }
}

void CallbackService::handlePay(WireFormat wire, HttpRequest httpRequest, HttpResponder respond)
{
    // Signature and syntax are checked on the I/O thread: they cost microseconds, and a
    // flood of unsigned bodies must never take a database worker's place in the queue.
    const auto started = std::chrono::steady_clock::now();
    auto trace = std::make_shared<CallbackTrace>();
    trace->received = nowMicros();
    auto admitted = admitAs(wire, m_options, httpRequest, QDateTime::currentSecsSinceEpoch());

    // Only the platform's own request keeps its connection alive and protected from eviction,
    // whatever it is answered: not one refused before or by its signature check (a body `x`
    // to /callbacks/alipay is answered 400 before the check), and not a replay of a signed one
    // past its first copies (ReplayWindow; docs/SECURITY.md, "What a client can cost it").
    const QByteArray &digest = std::visit(
        [](const auto &admission) -> const QByteArray & { return admission.signedDigest; },
        admitted);
    const bool useful = !digest.isEmpty() && m_replays->isFresh(digest, started);
    const auto finish = [this, started, wire, useful](const HttpResponder &responder,
                                                      const CallbackAnswer &callbackAnswer) {
        m_metrics->record(callbackAnswer, secondsSince(started));
        responder(toResponse(wire, callbackAnswer, useful));
    };
    if (const auto *refusal = std::get_if<CallbackAnswer>(&admitted))
        return finish(respond, *refusal);

    const CallbackAnswer overloaded = CallbackAnswer::failure(
        503, Outcome::Unavailable, QStringLiteral("the endpoint is overloaded; retry later"));
    // A replay past its first copies reaches the database only while a quarter of the queue is
    // free for it: one captured notification sent from a thousand connections must not take the
    // workers that new callbacks need. The platform, if it was the platform, retries later.
    if (!useful && m_jobs->waiting() >= m_options.limits.queueDepth / 4)
        return finish(respond, overloaded);
    auto request = std::get<CallbackRequest>(std::move(admitted));
    auto job = [this, finish, respond, trace, request, overloaded](bool expired) {
        if (expired)
            return finish(respond, overloaded);
        if (m_gateway) {
            traceAt(request, *trace);
            return m_gateway->accept(
                request, trace, [finish, respond](const CallbackAnswer &a) { finish(respond, a); });
        }
        finish(respond, processPay(request, *trace));
    };
    // In RECORD_ONLY a callback goes to the group commit straight from the I/O thread, not
    // through a worker's place: batches are then bounded by their window, not the workers.
    if (m_batcher && request.event.isEmpty() &&
        m_switch->recordOnlyHint.load(std::memory_order_relaxed)) {
        RecordBatcher::Callback callback{
            std::move(request), trace,
            [finish, respond](const CallbackAnswer &answer) { finish(respond, answer); },
            [this, job, finish, respond, overloaded] {
                if (!m_jobs->submit(job))
                    finish(respond, overloaded);
            }};
        if (!m_batcher->submit(std::move(callback)))
            finish(respond, overloaded);
        return;
    }
    if (!m_jobs->submit(job))
        finish(respond, overloaded);
}

CallbackAnswer CallbackService::processPay(const CallbackRequest &request, CallbackTrace &trace)
{
    traceAt(request, trace);

    CallbackAnswer callbackAnswer;
    try {
        callbackAnswer = handleOnThreadConnection(request, trace);
    } catch (const db::Error &error) {
        if (error.isConnectionFailure())
            dropThreadConnection();
        callbackAnswer = answerAfterFailure(error, request, trace);
    }

    trace.responded = nowMicros();
    trace.outcome = QString::fromLatin1(outcomeLabel(callbackAnswer.outcome));
    trace.httpStatus = callbackAnswer.httpStatus;
    if (db::Connection *connection = openThreadConnection()) {
        try {
            writeTrace(connection->database(), trace);
        } catch (const db::Error &error) {
            spdlog::warn("trace of {} not written: {}", request.payNo.toStdString(), error.what());
        }
    }
    return callbackAnswer;
}

void CallbackService::traceAt(const CallbackRequest &request, CallbackTrace &trace) const
{
    trace.payNo = request.payNo;
    trace.event = request.event;
    trace.orderId = request.orderId;
    trace.instance = m_options.instance;
    trace.handler = handlerName();
}

QString CallbackService::handlerName() const
{
    return m_gateway ? QStringLiteral("gateway") : QString::fromLatin1(m_handler->name());
}

CallbackAnswer CallbackService::handleOnThreadConnection(const CallbackRequest &request,
                                                         CallbackTrace &trace)
{
    db::Connection &connection = threadConnection(m_options.dsn);
    if (!request.event.isEmpty())
        return keepLaterEvent(connection.database(), request, m_options.instance);
    CallbackAnswer answer = m_handler->handle(connection.database(), request, trace);
    loseCommitReplyOnce(connection.database(), request.payNo);
    return answer;
}

void CallbackService::loseCommitReplyOnce(const QSqlDatabase &db, const QByteArray &payNo)
{
    // The fault a test cannot time from outside: the server ends this connection after the
    // COMMIT was executed, so its reply is lost (payops-callbackd(8),
    // PAYOPS_TEST_LOSE_COMMIT_REPLY).
    if (!m_loseCommitReplyOf.isEmpty() && payNo == m_loseCommitReplyOf &&
        !m_commitReplyLost.exchange(true))
        db::exec(db, QStringLiteral("KILL CONNECTION_ID()"));
}

CallbackAnswer CallbackService::answerAfterFailure(const db::Error &error,
                                                   const CallbackRequest &request,
                                                   CallbackTrace &trace)
{
    spdlog::warn("callback {} not processed: {}", request.payNo.toStdString(), error.what());
    const CallbackAnswer unavailable = CallbackAnswer::failure(
        503, Outcome::Unavailable, QStringLiteral("database unavailable; retry later"));
    // A lost connection may have taken only COMMIT's reply with it, the callback applied. The
    // safe handler's first step is to look the pay_no up, so running it once more on a new
    // connection answers an applied callback from its stored answer and takes one that was
    // not. The unsafe handler would pay again: it answers 503, as the incident's did.
    if (!error.isConnectionFailure() || !m_handler->repeatable())
        return unavailable;
    try {
        return handleOnThreadConnection(request, trace);
    } catch (const db::Error &again) {
        if (again.isConnectionFailure())
            dropThreadConnection();
        spdlog::warn("callback {} not looked up again: {}", request.payNo.toStdString(),
                     again.what());
        return unavailable;
    }
}

HttpResponse CallbackService::health() const
{
    const bool reachable = m_heartbeat->databaseReachable();
    QJsonObject health{
        {QStringLiteral("status"), reachable ? QStringLiteral("ok") : QStringLiteral("degraded")},
        {QStringLiteral("instance"), m_options.instance},
        {QStringLiteral("handler"), handlerName()},
        {QStringLiteral("mode"), m_switch->recordOnlyHint.load() ? QStringLiteral("RECORD_ONLY")
                                                                 : QStringLiteral("NORMAL")},
        {QStringLiteral("switch_version"), m_switch->versionApplied.load()},
        {QStringLiteral("db"), reachable ? QStringLiteral("ok") : QStringLiteral("unreachable")},
        {QStringLiteral("instance_mode"),
         gateway() ? QStringLiteral("gateway") : QStringLiteral("handler")}};
    if (gateway())
        health.insert(QStringLiteral("upstream"), m_options.upstreamsText());
    return {reachable ? 200 : 503, QJsonDocument(health).toJson(QJsonDocument::Compact)};
}

HttpResponse CallbackService::metrics() const
{
    const HttpServer::Counters http = m_server->counters();
    const std::string text =
        m_metrics->render(*m_switch, handlerName().toLatin1().constData()) +
        (gateway() ? m_metrics->renderUpstream() : std::string()) +
        "# HELP payops_http_open_connections Connections open now.\n# TYPE "
        "payops_http_open_connections gauge\n"
        "payops_http_open_connections " +
        std::to_string(http.openConnections) + "\n" +
        "# HELP payops_http_request_timeouts_total Connections closed for not sending a request in "
        "time.\n"
        "# TYPE payops_http_request_timeouts_total counter\n"
        "payops_http_request_timeouts_total " +
        std::to_string(http.closedFor(HttpServer::CloseReason::RequestTimeout)) + "\n" +
        closedConnectionsText(http) +
        "# HELP payops_queue_waiting Callbacks waiting for a database worker or a record-only "
        "batch.\n# TYPE "
        "payops_queue_waiting gauge\n"
        "payops_queue_waiting " +
        std::to_string((m_jobs ? m_jobs->waiting() : 0) + (m_batcher ? m_batcher->waiting() : 0)) +
        "\n";
    return {200, QByteArray::fromStdString(text), "text/plain; version=0.0.4"};
}

} // namespace payops
