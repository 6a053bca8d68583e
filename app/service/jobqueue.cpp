#include "jobqueue.h"

namespace payops {

JobQueue::JobQueue(int threads, int depth, std::chrono::milliseconds maxWait)
    : m_queue(threads, depth, {}, [maxWait](std::vector<BatchQueue<Job>::Entry> &batch) {
        for (BatchQueue<Job>::Entry &entry : batch)
            entry.item(std::chrono::steady_clock::now() - entry.queuedAt > maxWait);
    })
{
}

} // namespace payops
