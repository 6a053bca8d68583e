#pragma once

#include <QtGlobal>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace payops {

// A fixed pool of threads fed by a bounded queue, each thread taking what waits in batches: at
// most `rows` entries (and `maxBytes` by the entries' own measure), after waiting `window` from
// the oldest entry for more to come. A full queue refuses at once. The endpoint's database
// workers take one callback at a time (JobQueue); record-only's group commit takes many
// (RecordBatcher).
template <typename Item> class BatchQueue final
{
public:
    struct Entry
    {
        Item item;
        std::chrono::steady_clock::time_point queuedAt;
    };
    struct Shape
    {
        int rows = 1;
        std::chrono::milliseconds window{0};
        std::function<qsizetype(const Item &)> bytes = {}; // unset: no byte bound
        qsizetype maxBytes = 0;
    };
    using Run = std::function<void(std::vector<Entry> &batch)>;

    BatchQueue(int threads, int depth, Shape shape, Run run)
        : m_depth(size_t(depth))
        , m_shape(std::move(shape))
        , m_run(std::move(run))
    {
        m_threads.reserve(size_t(threads));
        for (int i = 0; i < threads; ++i)
            m_threads.emplace_back([this] { work(); });
    }
    ~BatchQueue() { stop(); }
    BatchQueue(const BatchQueue &) = delete;
    BatchQueue &operator=(const BatchQueue &) = delete;

    // False when the queue is full or stopped: the caller answers for the item itself.
    bool submit(Item item)
    {
        bool full = false;
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping || m_entries.size() >= m_depth)
                return false;
            m_entries.push_back({std::move(item), std::chrono::steady_clock::now()});
            full = m_entries.size() >= size_t(m_shape.rows);
        }
        // A full batch ends a waiting thread's window at once.
        if (full && m_shape.rows > 1)
            m_wake.notify_all();
        else
            m_wake.notify_one();
        return true;
    }

    // Runs everything already queued, then joins the threads.
    void stop()
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

    int waiting() const
    {
        std::lock_guard lock(m_mutex);
        return int(m_entries.size());
    }

private:
    // The next batch; empty once stopping and everything queued was taken.
    std::vector<Entry> take()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [this] { return m_stopping || !m_entries.empty(); });
            if (m_entries.empty())
                return {};
            // The window opens with the oldest entry: one that waited while every thread was
            // busy goes at once.
            if (m_shape.window.count() > 0)
                m_wake.wait_until(lock, m_entries.front().queuedAt + m_shape.window, [this] {
                    return m_stopping || m_entries.empty() ||
                           m_entries.size() >= size_t(m_shape.rows);
                });
            if (!m_entries.empty())
                break; // else another thread took them meanwhile
        }
        std::vector<Entry> batch;
        qsizetype bytes = 0;
        while (!m_entries.empty() && batch.size() < size_t(m_shape.rows)) {
            if (m_shape.bytes) {
                bytes += m_shape.bytes(m_entries.front().item);
                if (!batch.empty() && bytes > m_shape.maxBytes)
                    break;
            }
            batch.push_back(std::move(m_entries.front()));
            m_entries.pop_front();
        }
        if (!m_entries.empty())
            m_wake.notify_one(); // another thread starts the next batch meanwhile
        return batch;
    }

    void work()
    {
        for (std::vector<Entry> batch = take(); !batch.empty(); batch = take())
            m_run(batch);
    }

    const size_t m_depth;
    const Shape m_shape;
    const Run m_run;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Entry> m_entries;
    bool m_stopping = false;
    std::vector<std::thread> m_threads; // last: started once everything above is made
};

} // namespace payops
