#pragma once

#include "db/dsn.h"

#include <QByteArray>
#include <QProcess>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QTemporaryFile>

#include <memory>

namespace payops::test {

QByteArray testSecret();

// A callback body as the contract defines it.
QByteArray callbackBody(const QByteArray &payNo, qint64 orderId, qint64 amountFen,
                        const QString &currency = QStringLiteral("CNY"),
                        const QString &tradeStatus = QStringLiteral("SUCCESS"));

struct HttpResult
{
    int status = 0; // 0: no answer (connection refused, reset, timed out)
    QByteArray body;
    QByteArray contentType = {};
};

// POSTs a signed callback; timestamp 0 means now. Safe to call from any thread.
HttpResult postCallback(int port, const QByteArray &body, qint64 timestamp = 0,
                        const QByteArray &secret = testSecret());
// POSTs with exactly these headers (for signature tests).
HttpResult postRaw(int port, const QByteArray &body,
                   const QList<QPair<QByteArray, QByteArray>> &headers);
// The same to any path, with any content type (the platforms' notifications).
HttpResult postTo(int port, const char *path, const QByteArray &body,
                  const QList<QPair<QByteArray, QByteArray>> &headers,
                  const char *contentType = "application/json");
HttpResult get(int port, const QString &path);
// A value of the endpoint's /metrics by its full name (labels included); -1 when absent or the
// endpoint did not answer.
qint64 metric(int port, const QByteArray &name);

// Migrates a scratch database to `level`, marks it a sandbox, and adds what callbacks need:
// 2 active coupon templates (1000 and 500 fen) and one inactive, a 100-point reward rule,
// users 1-50 and PENDING orders firstOrderId .. firstOrderId+count-1 of 9900 fen CNY.
void prepareCallbackDatabase(const Dsn &dsn, const QString &level, int orderCount,
                             qint64 firstOrderId = 1001);
void addPendingOrders(const QSqlDatabase &db, int count, qint64 firstOrderId);
// What an endpoint in RECORD_ONLY mode leaves, written directly: one RECORDED SUCCESS
// callback of 9900 fen for each of `count` orders from `firstOrderId`.
void recordCallbacks(const Dsn &dsn, qint64 firstOrderId, int count);

// A digest of the business tables (orders, side effects, balances, callbacks, transition
// log): equal before and after means nothing changed them.
QString businessFingerprint(const Dsn &dsn);
// Side effects of one order: coupons per template (live rows) and points rows.
struct SideEffects
{
    int coupons = 0;
    int couponTemplatesTwice = 0; // templates with more than one live coupon
    int points = 0;
};
SideEffects sideEffectsOf(const QSqlDatabase &db, qint64 orderId);
// What the incident leaves, written directly: orders 1001 .. 1000+n each with the coupons of
// both templates (1000 and 500 fen) and 100 PAY_REWARD points issued twice. Every third
// order's second coupon of template 1 was already used.
void insertDuplicateIncident(const QSqlDatabase &db, int orders);

// One payops-callbackd process on 127.0.0.1 and a free port; stopped with SIGTERM when the
// object goes. An empty handler passes no --handler (gateway mode, with --upstream in
// extraArguments).
class CallbackdProcess final
{
public:
    CallbackdProcess(const Dsn &dsn, const QString &handler = QStringLiteral("safe"),
                     const QString &instance = QString(), const QStringList &extraArguments = {});
    ~CallbackdProcess();
    CallbackdProcess(const CallbackdProcess &) = delete;
    CallbackdProcess &operator=(const CallbackdProcess &) = delete;

    int port() const { return m_port; }
    const QString &instance() const { return m_instance; }
    qint64 pid() const { return m_process->processId(); }
    // SIGTERM, then waits for the exit; returns the exit code (-1 if it crashed or hung).
    int terminate(int timeoutMs = 30000);
    QString output() const { return m_output; }

private:
    QString standardError() const;

    std::unique_ptr<QProcess> m_process;
    // The endpoint's log goes to a file, not a pipe: a test that blocks its thread while the
    // endpoint logs (a storm during a database restart) would otherwise fill the pipe, and
    // every worker of the endpoint would stop in write().
    std::unique_ptr<QTemporaryFile> m_standardError;
    int m_port = 0;
    QString m_instance;
    QString m_output;
};

QString callbackdPath();
QString secretFilePath();

} // namespace payops::test
