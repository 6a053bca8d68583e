#pragma once

#include <QByteArray>
#include <QList>
#include <QMutex>
#include <QString>

#include <atomic>
#include <thread>
#include <vector>

namespace payops::test {

// One notification the platform owes: a signed callback for an order, due at a moment of the
// storm. A forged one (a wrong key) is an attacker's: sent once, never retried.
struct Delivery
{
    qint64 order = 0;
    QByteArray payNo;
    qint64 amountFen = 0;
    int target = 0;   // the endpoint instance it goes to first
    qint64 dueMs = 0; // since the storm started
    bool forged = false;
};

// What one HTTP attempt got: the HTTP status, 0 for no answer (refused, reset, timed out),
// which incarnation of which instance was asked, and when the answer arrived.
struct Attempt
{
    int status = 0;
    QString instance;
    qint64 answeredAtMs = 0; // since the epoch
};

// The endpoints the platform calls: a port and a name per instance, swapped when an instance
// is restarted (it comes back on another port, as a new incarnation).
class Endpoints final
{
public:
    explicit Endpoints(int count)
        : m_ports(count)
        , m_names(count)
    {
    }
    void set(int index, int port, const QString &name);
    int count() const { return int(m_ports.size()); }
    std::pair<int, QString> get(int index) const;

private:
    mutable QMutex m_mutex;
    std::vector<int> m_ports;
    QStringList m_names;
};

// A payment platform delivering at least once: every delivery at its due time from a pool of
// threads; any non-2xx or no answer is retried with back-off (100 ms doubling to 2 s) on the
// next instance, as a load balancer would, until a 2xx or maxAttempts. Every attempt is kept.
class Platform final
{
public:
    Platform(QList<Delivery> deliveries, const Endpoints &endpoints, QByteArray secret,
             int threads = 48, int maxAttempts = 30);
    ~Platform();
    Platform(const Platform &) = delete;
    Platform &operator=(const Platform &) = delete;

    void start();
    void wait();
    qint64 elapsedMs() const;
    // Attempts sent to an instance and not yet answered, for a kill that lands mid-request.
    int inFlight(int instance) const { return m_inFlight[size_t(instance)].load(); }

    const QList<Delivery> &deliveries() const { return m_deliveries; }
    // Attempts of delivery i, valid after wait().
    const QList<Attempt> &attempts(int i) const { return m_attempts[size_t(i)]; }

private:
    void run();
    void deliver(int index);

    QList<Delivery> m_deliveries;
    std::vector<QList<Attempt>> m_attempts;
    const Endpoints &m_endpoints;
    QByteArray m_secret;
    int m_threadCount;
    int m_maxAttempts;
    std::vector<std::atomic<int>> m_inFlight;
    std::atomic<int> m_next{0};
    qint64 m_startedAtMs = 0;
    std::vector<std::thread> m_threads;
};

} // namespace payops::test
