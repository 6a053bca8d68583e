#include "replaywindow.h"

#include <algorithm>

namespace payops {

ReplayWindow::ReplayWindow(Clock::duration window, std::size_t capacity, Clock::duration memory)
    : m_window(window)
    , m_capacity(capacity < 1 ? 1 : capacity)
    , m_memory(memory)
{
}

bool ReplayWindow::isFresh(const QByteArray &digest, Clock::time_point now)
{
    // Eight bytes of a SHA-256 name a signed content well enough: only the platform's keys
    // make one, so nobody can choose two that collide.
    quint64 key = 0;
    for (qsizetype i = 0; i < std::min<qsizetype>(digest.size(), 8); ++i)
        key = key << 8 | quint8(digest.at(i));
    std::lock_guard lock(m_mutex);
    const auto forgetOldest = [this] {
        m_sightings.remove(m_byAge.front().second);
        m_byAge.pop_front();
    };
    while (!m_byAge.empty() && now - m_byAge.front().first > m_memory)
        forgetOldest();
    const auto seen = m_sightings.find(key);
    if (seen != m_sightings.end()) {
        seen->copies = std::min(seen->copies + 1, kCopies + 1); // a flood does not overflow it
        return seen->copies <= kCopies && now - seen->first <= m_window;
    }
    while (m_byAge.size() >= m_capacity)
        forgetOldest();
    m_sightings.insert(key, Sighting{now});
    m_byAge.emplace_back(now, key);
    return true;
}

std::size_t ReplayWindow::remembered() const
{
    std::lock_guard lock(m_mutex);
    return m_byAge.size();
}

} // namespace payops
