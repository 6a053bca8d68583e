#include "jobqueue.h"

namespace payops {

JobQueue::JobQueue(int threads, int depth, std::chrono::milliseconds maxWait)
    : m_depth(size_t(depth))
    , m_maxWait(maxWait)
{
    m_threads.reserve(size_t(threads));
    for (int i = 0; i < threads; ++i)
        m_threads.emplace_back([this] { work(); });
}

JobQueue::~JobQueue()
{
    stop();
}

bool JobQueue::submit(Job job)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping || m_entries.size() >= m_depth)
            return false;
        m_entries.push_back({std::move(job), std::chrono::steady_clock::now()});
    }
    m_wake.notify_one();
    return true;
}

void JobQueue::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (std::thread &thread : m_threads) {
        if (thread.joinable())
            thread.join();
    }
}

int JobQueue::waiting() const
{
    std::lock_guard lock(m_mutex);
    return int(m_entries.size());
}

void JobQueue::work()
{
    for (;;) {
        Entry entry;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_entries.empty(); });
            if (m_entries.empty())
                return; // stopping, and everything queued has run
            entry = std::move(m_entries.front());
            m_entries.pop_front();
        }
        entry.job(std::chrono::steady_clock::now() - entry.queuedAt > m_maxWait);
    }
}

} // namespace payops
