#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace payops {

// A fixed pool of worker threads fed by a bounded queue. The endpoint's database work runs
// here, apart from the HTTP I/O threads, so that a slow database makes requests wait in a
// queue of known size instead of piling up: a full queue refuses at once, and a job that
// waited past the bound is told so and answers without touching the database.
class JobQueue final
{
public:
    // The job learns whether it waited longer than the bound before a worker took it.
    using Job = std::function<void(bool expired)>;

    JobQueue(int threads, int depth, std::chrono::milliseconds maxWait);
    ~JobQueue();
    JobQueue(const JobQueue &) = delete;
    JobQueue &operator=(const JobQueue &) = delete;

    // False when the queue is full or stopped: the caller answers for the job itself.
    bool submit(Job job);
    // Runs every job already queued, then joins the workers.
    void stop();
    int waiting() const;

private:
    struct Entry
    {
        Job job;
        std::chrono::steady_clock::time_point queuedAt;
    };
    void work();

    const size_t m_depth;
    const std::chrono::milliseconds m_maxWait;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Entry> m_entries;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace payops
