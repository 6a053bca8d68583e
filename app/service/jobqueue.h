#pragma once

#include "batchqueue.h"

#include <chrono>
#include <functional>

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
    JobQueue(const JobQueue &) = delete;
    JobQueue &operator=(const JobQueue &) = delete;

    // False when the queue is full or stopped: the caller answers for the job itself.
    bool submit(Job job) { return m_queue.submit(std::move(job)); }
    // Runs every job already queued, then joins the workers.
    void stop() { m_queue.stop(); }
    int waiting() const { return m_queue.waiting(); }

private:
    BatchQueue<Job> m_queue;
};

} // namespace payops
