#pragma once

#include <QByteArray>
#include <QHash>

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace payops {

// Which signed requests may keep a connection (HttpResponse::useful). A platform sends a
// notification twice within milliseconds, and retries it later; an attacker who captured one
// signed notification replays it for ever (Alipay's carry no time), from thousands of
// connections, to hold the slots that real callbacks need. So a signed content keeps a
// connection only for its first few copies, within a short window after it was first seen. A
// replay past either is answered as before; it keeps nothing. Safe from any thread.
class ReplayWindow final
{
public:
    using Clock = std::chrono::steady_clock;
    // As long as a connection may idle (--keep-alive-idle's default): a platform's copies
    // within it count, a captured notification buys one idle period and no more.
    static constexpr std::chrono::seconds kWindow{5};
    // The platform's own duplicates: two within milliseconds, a third at most.
    static constexpr int kCopies = 4;
    // How many signed contents it remembers, and for how long: a replay of one forgotten gets
    // one more window. 2^18 of them cost about 12 MiB.
    static constexpr std::size_t kCapacity = std::size_t(1) << 18;
    static constexpr std::chrono::hours kMemory{1};

    explicit ReplayWindow(Clock::duration window = kWindow, std::size_t capacity = kCapacity,
                          Clock::duration memory = kMemory);

    // Whether `digest` (CallbackAnswer::signedDigest, never empty) was first seen no longer
    // than the window before `now`, and this is one of its first kCopies; remembered from now
    // when it is new.
    bool isFresh(const QByteArray &digest, Clock::time_point now);
    std::size_t remembered() const;

private:
    const Clock::duration m_window;
    const std::size_t m_capacity;
    const Clock::duration m_memory;
    mutable std::mutex m_mutex;
    struct Sighting
    {
        Clock::time_point first;
        int copies = 1;
    };
    QHash<quint64, Sighting> m_sightings;
    std::deque<std::pair<Clock::time_point, quint64>> m_byAge; // oldest first
};

} // namespace payops
