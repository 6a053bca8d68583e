#pragma once

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QString>

class QNetworkAccessManager;

namespace payops::console {

// What an instance's own endpoints said the last time we asked.
struct InstanceHealth
{
    QString id;
    bool reachable = false;
    QString error;  // why not, in one line
    QString status; // /healthz "status"
    QString handler;
    QString mode;
    qint64 switchVersion = -1;
    QString db;
    double callbacksTotal = -1;     // sum of payops_callbacks_total over outcomes
    double callbacksPerSecond = -1; // from two successive scrapes; -1 until there are two
    double backlog = -1;
    double suppressedTotal = -1;
};

// Asks each instance for /healthz and /metrics over Qt Network. Never blocks: replies come
// back as signals, an unreachable instance times out into an error, and a scrape still in
// flight is not asked again.
class InstanceProber final : public QObject
{
    Q_OBJECT

public:
    explicit InstanceProber(QObject *parent = nullptr);
    ~InstanceProber() override;
    Q_DISABLE_COPY_MOVE(InstanceProber)

    // listen is host:port or a full http:// base URL.
    void probe(const QString &id, const QString &listen);
    void setTimeoutMs(int ms) { m_timeoutMs = ms; }

Q_SIGNALS:
    void healthChanged(const payops::console::InstanceHealth &health);

private:
    struct Scrape
    {
        double total = -1;
        qint64 atMs = 0;
    };
    struct Pending
    {
        InstanceHealth health;
        int outstanding = 0;
    };
    void finish(const QString &id);

    QNetworkAccessManager *m_network = nullptr;
    QHash<QString, Pending> m_pending;
    QHash<QString, Scrape> m_lastScrape;
    int m_timeoutMs = 2000;
};

} // namespace payops::console
