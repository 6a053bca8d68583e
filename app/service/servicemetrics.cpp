#include "servicemetrics.h"

#include "domain/callback/callbackhandler.h"
#include "domain/callback/upstreamclient.h"

#include <sstream>

namespace payops {

void ServiceMetrics::record(const CallbackAnswer &answer, double seconds)
{
    m_outcomes[static_cast<size_t>(answer.outcome)].fetch_add(1, std::memory_order_relaxed);
    if (answer.suppressedBy != Defence::None)
        m_defences[static_cast<size_t>(answer.suppressedBy)].fetch_add(1,
                                                                       std::memory_order_relaxed);
    for (size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i])
            m_buckets[i].fetch_add(1, std::memory_order_relaxed);
    }
    m_durationCount.fetch_add(1, std::memory_order_relaxed);
    m_durationMicros.fetch_add(static_cast<qint64>(seconds * 1e6), std::memory_order_relaxed);
}

qint64 ServiceMetrics::count(Outcome outcome) const
{
    return m_outcomes[static_cast<size_t>(outcome)].load(std::memory_order_relaxed);
}

void ServiceMetrics::recordUpstream(const UpstreamAnswer &answer)
{
    const double seconds = answer.seconds();
    {
        std::lock_guard lock(m_upstreamMutex);
        ++m_upstreamRequests[answer.answered() ? std::to_string(answer.status) : "error"];
        for (size_t i = 0; i < kBuckets.size(); ++i) {
            if (seconds <= kBuckets[i])
                ++m_upstreamBuckets[i];
        }
        ++m_upstreamCount;
        m_upstreamSeconds += seconds;
    }
    m_upstreamState.store(answer.answered() ? UpstreamState::Ok : UpstreamState::Failing);
    m_upstreamChecked.store(answer.answeredMicros);
}

std::string ServiceMetrics::renderUpstream() const
{
    std::lock_guard lock(m_upstreamMutex);
    std::ostringstream out;
    out << "# HELP payops_upstream_requests_total Forwards to the upstream, by its answer's "
           "status (error: no answer).\n"
           "# TYPE payops_upstream_requests_total counter\n";
    for (const auto &[status, count] : m_upstreamRequests)
        out << "payops_upstream_requests_total{status=\"" << status << "\"} " << count << '\n';
    out << "# HELP payops_upstream_duration_seconds Time from a forward to the upstream's answer.\n"
           "# TYPE payops_upstream_duration_seconds histogram\n";
    for (size_t i = 0; i < kBuckets.size(); ++i)
        out << "payops_upstream_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} "
            << m_upstreamBuckets[i] << '\n';
    out << "payops_upstream_duration_seconds_bucket{le=\"+Inf\"} " << m_upstreamCount << '\n'
        << "payops_upstream_duration_seconds_sum " << m_upstreamSeconds << '\n'
        << "payops_upstream_duration_seconds_count " << m_upstreamCount << '\n';
    return out.str();
}

std::string ServiceMetrics::render(const SwitchObserver &switchObserver, const char *handler) const
{
    std::ostringstream out;
    out << "# HELP payops_callbacks_total Callbacks answered, by outcome.\n"
           "# TYPE payops_callbacks_total counter\n";
    for (int i = 0; i < kOutcomeCount; ++i)
        out << "payops_callbacks_total{outcome=\"" << outcomeLabel(static_cast<Outcome>(i))
            << "\"} " << m_outcomes[static_cast<size_t>(i)].load() << '\n';
    out << "# HELP payops_duplicates_suppressed_total Duplicate deliveries stopped, by the defence "
           "that stopped them.\n"
           "# TYPE payops_duplicates_suppressed_total counter\n";
    for (int i = 1; i < kDefenceCount; ++i)
        out << "payops_duplicates_suppressed_total{defence=\""
            << defenceLabel(static_cast<Defence>(i)) << "\"} "
            << m_defences[static_cast<size_t>(i)].load() << '\n';
    out << "# HELP payops_callback_duration_seconds Time from receipt to answer.\n"
           "# TYPE payops_callback_duration_seconds histogram\n";
    for (size_t i = 0; i < kBuckets.size(); ++i)
        out << "payops_callback_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} "
            << m_buckets[i].load() << '\n';
    out << "payops_callback_duration_seconds_bucket{le=\"+Inf\"} " << m_durationCount.load() << '\n'
        << "payops_callback_duration_seconds_sum " << double(m_durationMicros.load()) / 1e6 << '\n'
        << "payops_callback_duration_seconds_count " << m_durationCount.load() << '\n';
    out << "# HELP payops_backlog_recorded Callbacks recorded in record-only mode and not yet "
           "drained.\n"
           "# TYPE payops_backlog_recorded gauge\n"
        << "payops_backlog_recorded " << m_backlog.load() << '\n';
    out << "# HELP payops_record_batches_total Batches of recorded callbacks committed, each one "
           "transaction (record-only, or a gateway's recording step).\n"
           "# TYPE payops_record_batches_total counter\n"
        << "payops_record_batches_total " << m_recordBatches.load() << '\n'
        << "# HELP payops_record_batch_rows_total Callbacks recorded by those batches.\n"
           "# TYPE payops_record_batch_rows_total counter\n"
        << "payops_record_batch_rows_total " << m_recordBatchRows.load() << '\n';
    const bool recordOnly = switchObserver.recordOnlyHint.load();
    out << "# HELP payops_mode The switch mode this instance applies.\n# TYPE payops_mode gauge\n"
        << "payops_mode{mode=\"NORMAL\"} " << (recordOnly ? 0 : 1) << '\n'
        << "payops_mode{mode=\"RECORD_ONLY\"} " << (recordOnly ? 1 : 0) << '\n'
        << "# HELP payops_switch_version The switch version this instance applies.\n# TYPE "
           "payops_switch_version gauge\n"
        << "payops_switch_version " << switchObserver.versionApplied.load() << '\n'
        << "# HELP payops_handler_info The handler this instance runs.\n# TYPE payops_handler_info "
           "gauge\n"
        << "payops_handler_info{handler=\"" << handler << "\"} 1\n";
    return out.str();
}

} // namespace payops
