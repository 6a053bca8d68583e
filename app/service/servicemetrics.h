#pragma once

#include "domain/callback/callbackanswer.h"

#include <array>
#include <atomic>
#include <string>

namespace payops {

struct SwitchObserver;

// Counters for /metrics, updated lock-free from the HTTP worker threads.
class ServiceMetrics final
{
public:
    void record(const CallbackAnswer &answer, double seconds);
    void setBacklog(qint64 recorded) { m_backlog.store(recorded, std::memory_order_relaxed); }
    qint64 count(Outcome outcome) const;

    // Prometheus text exposition format, version 0.0.4.
    std::string render(const SwitchObserver &switchObserver, const char *handler) const;

private:
    static constexpr std::array<double, 12> kBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,   0.25,   0.5,   1,    2.5,   5};

    std::array<std::atomic<qint64>, kOutcomeCount> m_outcomes{};
    std::array<std::atomic<qint64>, kDefenceCount> m_defences{};
    std::array<std::atomic<qint64>, kBuckets.size()> m_buckets{};
    std::atomic<qint64> m_durationCount{0};
    std::atomic<qint64> m_durationMicros{0};
    std::atomic<qint64> m_backlog{0};
};

} // namespace payops
