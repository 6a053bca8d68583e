#include "platform.h"

#include "callbackfixture.h"

#include "domain/callback/signature.h"

#include <QDateTime>
#include <QMutexLocker>

#include <httplib.h>

#include <algorithm>
#include <chrono>

namespace payops::test {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

// One signed POST; 0 when nothing came back. Short timeouts: a platform gives up on a silent
// endpoint after seconds and retries, and a killed instance must not hold a sender for long.
int post(int port, const QByteArray &body, const QByteArray &secret)
{
    if (port <= 0)
        return 0;
    const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(10, 0);
    const httplib::Headers headers{
        {"X-Payops-Timestamp", std::to_string(timestamp)},
        {"X-Payops-Signature", signatureHeader(secret, timestamp, body).toStdString()}};
    const auto result =
        client.Post("/callbacks/pay", headers, body.toStdString(), "application/json");
    return result ? result->status : 0;
}

} // namespace

void Endpoints::set(int index, int port, const QString &name)
{
    const QMutexLocker locker(&m_mutex);
    m_ports[size_t(index)] = port;
    m_names[index] = name;
}

std::pair<int, QString> Endpoints::get(int index) const
{
    const QMutexLocker locker(&m_mutex);
    return {m_ports[size_t(index)], m_names[index]};
}

Platform::Platform(QList<Delivery> deliveries, const Endpoints &endpoints, QByteArray secret,
                   int threads, int maxAttempts)
    : m_deliveries(std::move(deliveries))
    , m_attempts(size_t(m_deliveries.size()))
    , m_endpoints(endpoints)
    , m_secret(std::move(secret))
    , m_threadCount(threads)
    , m_maxAttempts(maxAttempts)
    , m_inFlight(size_t(endpoints.count()))
{
    std::stable_sort(m_deliveries.begin(), m_deliveries.end(),
                     [](const Delivery &a, const Delivery &b) { return a.dueMs < b.dueMs; });
}

Platform::~Platform()
{
    wait();
}

void Platform::start()
{
    m_startedAtMs = nowMs();
    for (int i = 0; i < m_threadCount; ++i)
        m_threads.emplace_back([this] { run(); });
}

void Platform::wait()
{
    for (std::thread &thread : m_threads)
        thread.join();
    m_threads.clear();
}

qint64 Platform::elapsedMs() const
{
    return nowMs() - m_startedAtMs;
}

void Platform::run()
{
    for (int index = m_next++; index < m_deliveries.size(); index = m_next++) {
        const qint64 wait = m_deliveries[index].dueMs - elapsedMs();
        if (wait > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(wait));
        deliver(index);
    }
}

void Platform::deliver(int index)
{
    const Delivery &delivery = m_deliveries[index];
    const QByteArray body = callbackBody(delivery.payNo, delivery.order, delivery.amountFen);
    const QByteArray secret =
        delivery.forged ? QByteArrayLiteral("not-the-platform-key") : m_secret;
    QList<Attempt> &attempts = m_attempts[size_t(index)];
    int backoffMs = 100;
    for (int attempt = 0; attempt < m_maxAttempts; ++attempt) {
        const int target = (delivery.target + attempt) % m_endpoints.count();
        const auto [port, name] = m_endpoints.get(target);
        ++m_inFlight[size_t(target)];
        const int status = post(port, body, secret);
        --m_inFlight[size_t(target)];
        attempts.append({status, name, nowMs()});
        if ((status >= 200 && status < 300) || delivery.forged)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(backoffMs));
        backoffMs = std::min(backoffMs * 2, 2000);
    }
}

} // namespace payops::test
