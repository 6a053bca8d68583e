#pragma once

#include "domain/callback/callbackanswer.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>

namespace payops {

struct SwitchObserver;
struct UpstreamAnswer;

// A gateway's upstream as its last forward found it (callback_instance.upstream_state).
enum class UpstreamState { Unknown, Ok, Failing };

// Counters for /metrics, updated lock-free from the HTTP worker threads.
class ServiceMetrics final
{
public:
    void record(const CallbackAnswer &answer, double seconds);
    // A committed batch (record-only's, or a gateway's recording) and how many it recorded.
    void recordBatch(int rows)
    {
        m_recordBatches.fetch_add(1, std::memory_order_relaxed);
        m_recordBatchRows.fetch_add(rows, std::memory_order_relaxed);
    }
    void setBacklog(qint64 recorded) { m_backlog.store(recorded, std::memory_order_relaxed); }
    qint64 count(Outcome outcome) const;
    // A gateway's forward: counted by the upstream's status ("error": no answer), timed, and
    // kept as the upstream's state for the heartbeat.
    void recordUpstream(const UpstreamAnswer &answer);
    UpstreamState upstreamState() const { return m_upstreamState.load(); }
    qint64 upstreamCheckedMicros() const { return m_upstreamChecked.load(); }

    // Prometheus text exposition format, version 0.0.4.
    std::string render(const SwitchObserver &switchObserver, const char *handler) const;
    // A gateway's upstream: the counters by status and the histogram.
    std::string renderUpstream() const;

private:
    static constexpr std::array<double, 12> kBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,   0.25,   0.5,   1,    2.5,   5};

    std::array<std::atomic<qint64>, kOutcomeCount> m_outcomes{};
    std::array<std::atomic<qint64>, kDefenceCount> m_defences{};
    std::array<std::atomic<qint64>, kBuckets.size()> m_buckets{};
    std::atomic<qint64> m_durationCount{0};
    std::atomic<qint64> m_durationMicros{0};
    std::atomic<qint64> m_backlog{0};
    std::atomic<qint64> m_recordBatches{0};
    std::atomic<qint64> m_recordBatchRows{0};

    // Statuses are whatever the upstream answers: a map, under a mutex, per forward.
    mutable std::mutex m_upstreamMutex;
    std::map<std::string, qint64> m_upstreamRequests;
    std::array<qint64, kBuckets.size()> m_upstreamBuckets{};
    qint64 m_upstreamCount = 0;
    double m_upstreamSeconds = 0;
    std::atomic<UpstreamState> m_upstreamState{UpstreamState::Unknown};
    std::atomic<qint64> m_upstreamChecked{0};
};

} // namespace payops
