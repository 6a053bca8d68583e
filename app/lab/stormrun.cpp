// runStorm (storm.h): the deliveries of a storm, scheduled by the calling thread and sent by a
// bounded pool of HTTP workers.

#include "storm.h"

#include "domain/callback/platformreply.h"
#include "platformnotification.h"

#include <QDateTime>
#include <QRandomGenerator>
#include <QUuid>

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <thread>
#include <vector>

namespace payops {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A platform's back-off: 100 ms, doubling, at most 5 s between attempts.
constexpr int kFirstBackoffMs = 100;
constexpr int kMaxBackoffMs = 5000;
constexpr milliseconds kProgressPeriod{100};
// An endpoint under a storm may queue a callback (2 s) and wait for its lock (5 s) before it
// answers; longer than that is no answer.
constexpr int kConnectTimeoutSeconds = 3;
constexpr int kReadTimeoutSeconds = 10;

struct Delivery
{
    Clock::time_point due;
    qsizetype order = 0; // index into the storm's payments
    int target = 0;
    int attempt = 1;
    bool forged = false;
    bool operator>(const Delivery &other) const { return due > other.due; }
};

StormPattern patternOf(const StormPlan &plan, qsizetype order)
{
    if (plan.pattern != StormPattern::Mixed)
        return plan.pattern;
    static constexpr StormPattern kMix[] = {StormPattern::Concurrent, StormPattern::Gap,
                                            StormPattern::Replay};
    return kMix[order % 3];
}

// When copy `copy` of the storm's order number `order` goes out, counted from the start.
milliseconds copyOffset(const StormPlan &plan, qsizetype order, int copy)
{
    double offset = plan.ratePerSecond > 0 ? double(order) * 1000.0 / plan.ratePerSecond : 0;
    switch (patternOf(plan, order)) {
    case StormPattern::Concurrent:
        break; // every copy at the same instant, each taken by another worker (connection)
    case StormPattern::Gap:
        offset += double(copy) * plan.gapMs;
        break;
    case StormPattern::Replay:
        if (copy > 0)
            offset += kStormReplayDelayMs + double(copy - 1) * plan.gapMs;
        break;
    case StormPattern::Mixed:
        break;
    }
    return milliseconds(std::llround(offset));
}

int backoffMs(int failedAttempt)
{
    return std::min(kMaxBackoffMs, kFirstBackoffMs << std::min(failedAttempt - 1, 10));
}

class Storm final
{
public:
    Storm(const StormPlan &plan, std::vector<PlatformPayment> payments,
          const std::atomic<bool> &stop)
        : m_plan(plan)
        , m_payments(std::move(payments))
        , m_notifier(notifierFor(plan))
        , m_stop(stop)
    {
        for (const QString &url : plan.targets)
            m_targets.push_back(*parseStormTarget(url, nullptr));
    }

    StormCounts run(const std::function<void(const StormCounts &)> &progress)
    {
        const auto start = Clock::now();
        const int targets = int(m_targets.size());
        for (qsizetype order = 0; order < qsizetype(m_payments.size()); ++order) {
            for (int copy = 0; copy < m_plan.copies; ++copy)
                m_scheduled.push({start + copyOffset(m_plan, order, copy), order,
                                  int((order + copy) % targets), 1});
            // The attacker's copy races the platform's first one, on another connection.
            if (order < m_plan.forged)
                m_scheduled.push({start + copyOffset(m_plan, order, 0), order,
                                  int((order + 1) % targets), 1, true});
        }
        m_counts.planned = qint64(m_scheduled.size());
        m_unfinished = m_counts.planned;

        const int workers = int(std::min<qint64>(kStormMaxInFlight, m_counts.planned));
        for (int slot = 0; slot < workers; ++slot)
            m_clients.push_back(makeClients());
        std::vector<std::thread> threads;
        for (int slot = 0; slot < workers; ++slot)
            threads.emplace_back([this, slot] { work(slot); });

        std::unique_lock lock(m_mutex);
        auto lastProgress = Clock::now() - kProgressPeriod;
        while (m_unfinished > 0 && !m_stop.load()) {
            const auto now = Clock::now();
            bool released = false;
            while (!m_scheduled.empty() && m_scheduled.top().due <= now) {
                m_ready.push_back(m_scheduled.top());
                m_scheduled.pop();
                released = true;
            }
            if (released)
                m_work.notify_all();
            if (progress && now - lastProgress >= kProgressPeriod) {
                lastProgress = now;
                const StormCounts counts = m_counts;
                lock.unlock();
                progress(counts);
                lock.lock();
                continue;
            }
            auto wake = now + kProgressPeriod;
            if (!m_scheduled.empty())
                wake = std::min(wake, m_scheduled.top().due);
            m_changed.wait_until(lock, wake);
        }
        m_counts.stopped = m_unfinished > 0;
        m_ending = true;
        m_ready.clear();
        m_scheduled = {};
        lock.unlock();
        m_work.notify_all();
        // A stopped storm does not wait for answers still on their way: their sockets are shut.
        for (auto &clients : m_clients) {
            for (auto &client : clients)
                client->stop();
        }
        for (auto &thread : threads)
            thread.join();
        if (progress)
            progress(m_counts);
        return m_counts;
    }

private:
    static std::unique_ptr<PlatformNotifier> notifierFor(const StormPlan &plan)
    {
        switch (plan.channel) {
        case WireFormat::WechatPay:
            return PlatformNotifier::wechatPay(plan.keys);
        case WireFormat::Alipay:
            return PlatformNotifier::alipay(plan.keys);
        case WireFormat::Payops:
            break;
        }
        return PlatformNotifier::payops(plan.secret);
    }

    std::vector<std::unique_ptr<httplib::Client>> makeClients() const
    {
        std::vector<std::unique_ptr<httplib::Client>> clients;
        for (const StormTarget &target : m_targets) {
            auto client = std::make_unique<httplib::Client>(target.host.toStdString(), target.port);
            client->set_keep_alive(true);
            client->set_tcp_nodelay(true);
            client->set_connection_timeout(kConnectTimeoutSeconds, 0);
            client->set_read_timeout(kReadTimeoutSeconds, 0);
            client->set_write_timeout(kReadTimeoutSeconds, 0);
            clients.push_back(std::move(client));
        }
        return clients;
    }

    void work(int slot)
    {
        for (;;) {
            Delivery delivery;
            {
                std::unique_lock lock(m_mutex);
                m_work.wait(lock, [this] { return m_ending || !m_ready.empty(); });
                if (m_ending)
                    return;
                delivery = m_ready.front();
                m_ready.pop_front();
                ++m_counts.sent;
                if (delivery.attempt > 1)
                    ++m_counts.retries;
            }
            const Answer answer = post(*m_clients[size_t(slot)][size_t(delivery.target)],
                                       m_payments[size_t(delivery.order)], delivery.forged);
            {
                const std::lock_guard lock(m_mutex);
                record(delivery, answer);
            }
            m_changed.notify_one();
        }
    }

    struct Answer
    {
        int status = 0;       // 0: no answer
        bool success = false; // the platform's success answer
    };

    // Under m_mutex.
    void record(const Delivery &delivery, const Answer &answer)
    {
        const int status = answer.status;
        const bool ok = answer.success;
        if (status >= 200 && status < 300)
            ++m_counts.answered2xx;
        else if (status == 0)
            ++m_counts.noAnswer;
        else if (status >= 500)
            ++m_counts.answered5xx;
        else
            ++m_counts.answered4xx;
        if (delivery.forged) {
            // An attacker does not retry; what matters is whether the endpoint believed it.
            ++m_counts.forged;
            if (ok)
                ++m_counts.forgedAccepted;
            --m_unfinished;
            ++m_counts.finished;
            return;
        }
        if (!ok && m_plan.retryNon2xx && delivery.attempt < m_plan.maxAttempts && !m_ending) {
            // The retry goes to the next target, as a platform's retry through a load balancer
            // may reach any instance.
            m_scheduled.push(
                {Clock::now() + milliseconds(backoffMs(delivery.attempt)), delivery.order,
                 int((delivery.target + 1) % qsizetype(m_targets.size())), delivery.attempt + 1});
            return;
        }
        --m_unfinished;
        ++m_counts.finished;
        if (!ok)
            ++m_counts.gaveUp;
    }

    // Each attempt is rendered afresh: a platform signs (and WeChat Pay encrypts) every retry
    // anew, with a new timestamp and new nonces.
    Answer post(httplib::Client &client, const PlatformPayment &payment, bool forged) const
    {
        const PlatformRequest request = [&] {
            // One rendering at a time: rendering reaches Qt globals guarded by a QReadWriteLock
            // whose contended path ThreadSanitizer reads as a race inside uninstrumented Qt
            // (tests/sanitizers/tsan.supp); payops's own lock keeps that path untaken, as
            // app/db/connection.cpp does. Rendering is short beside the HTTP round trip.
            const std::lock_guard<std::mutex> rendering(m_renderMutex);
            return m_notifier->render(payment, forged);
        }();
        httplib::Headers headers;
        for (const auto &[name, value] : request.headers)
            headers.emplace(name.toStdString(), value.toStdString());
        const auto result =
            client.Post(request.path.constData(), headers, request.body.constData(),
                        size_t(request.body.size()), request.contentType.constData());
        if (!result)
            return {};
        return {result->status, isPlatformSuccess(m_plan.channel, result->status,
                                                  QByteArray::fromStdString(result->body))};
    }

    const StormPlan &m_plan;
    const std::vector<PlatformPayment> m_payments;
    const std::unique_ptr<PlatformNotifier> m_notifier;
    const std::atomic<bool> &m_stop;
    std::vector<StormTarget> m_targets;
    std::vector<std::vector<std::unique_ptr<httplib::Client>>> m_clients; // [worker][target]

    mutable std::mutex m_renderMutex;
    std::mutex m_mutex;
    std::condition_variable m_work;    // workers: a delivery is ready, or the storm ends
    std::condition_variable m_changed; // the scheduler: an answer came (a retry may be due)
    std::priority_queue<Delivery, std::vector<Delivery>, std::greater<>> m_scheduled;
    std::deque<Delivery> m_ready;
    qint64 m_unfinished = 0;
    bool m_ending = false;
    StormCounts m_counts;
};

} // namespace

StormCounts runStorm(const StormPlan &plan, const QList<qint64> &orders,
                     const std::function<void(const StormCounts &)> &progress,
                     const std::atomic<bool> &stop)
{
    if (const QString invalid = validateStormPlan(plan); !invalid.isEmpty())
        throw std::invalid_argument(invalid.toStdString());
    // One pay_no per order, the same in all its copies: what makes them duplicates of one
    // payment. The run's token keeps a second storm over the same orders a different payment.
    const QByteArray token =
        QByteArray::number(QRandomGenerator::global()->generate(), 36).toUpper();
    const QDateTime paidAt = QDateTime::currentDateTimeUtc();
    std::vector<PlatformPayment> payments;
    for (const qint64 order : orders.mid(0, plan.orders)) {
        std::optional<StormOrderFacts> facts;
        if (const auto given = plan.orderFacts.constFind(order);
            given != plan.orderFacts.constEnd())
            facts = *given;
        else
            facts = rememberedStormOrderFacts(order);
        if (!facts)
            throw std::invalid_argument(
                QStringLiteral("the amount of order %1 is unknown: pick the orders with "
                               "createStormOrders, pendingStormOrders or stormOrderFacts")
                    .arg(order)
                    .toStdString());
        payments.push_back({"ST" + token + '-' + QByteArray::number(order), order, facts->amountFen,
                            facts->currency, paidAt,
                            QUuid::createUuid().toByteArray(QUuid::WithoutBraces)});
    }
    std::unique_ptr<Storm> storm;
    try {
        storm = std::make_unique<Storm>(plan, std::move(payments), stop);
    } catch (const std::runtime_error &error) { // a key that does not read
        throw std::invalid_argument(error.what());
    }
    return storm->run(progress);
}

} // namespace payops
