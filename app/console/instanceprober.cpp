#include "instanceprober.h"

#include "prometheustext.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QUrl>

namespace payops::console {

InstanceProber::InstanceProber(QObject *parent)
    : QObject(parent)
    , m_network(new QNetworkAccessManager(this))
{
}

InstanceProber::~InstanceProber() = default;

void InstanceProber::probe(const QString &id, const QString &listen)
{
    if (m_pending.contains(id))
        return; // the last scrape has not answered yet; asking again would pile up requests
    QString base = listen.trimmed();
    if (!base.startsWith(QLatin1String("http://")) && !base.startsWith(QLatin1String("https://")))
        base.prepend(QStringLiteral("http://"));
    const QUrl baseUrl(base);
    Pending &pending = m_pending[id];
    pending.health.id = id;
    if (listen.trimmed().isEmpty() || !baseUrl.isValid() || baseUrl.host().isEmpty()) {
        pending.health.error = QStringLiteral("no listen address");
        finish(id);
        return;
    }
    const auto request = [this, baseUrl](const QString &path) {
        QUrl url = baseUrl;
        url.setPath(path);
        QNetworkRequest req(url);
        req.setTransferTimeout(m_timeoutMs);
        return m_network->get(req);
    };

    QNetworkReply *health = request(QStringLiteral("/healthz"));
    QNetworkReply *metrics = request(QStringLiteral("/metrics"));
    pending.outstanding = 2;
    connect(health, &QNetworkReply::finished, this, [this, id, health] {
        health->deleteLater();
        Pending &p = m_pending[id];
        if (health->error() != QNetworkReply::NoError) {
            p.health.error = health->errorString();
        } else {
            const QJsonObject json = QJsonDocument::fromJson(health->readAll()).object();
            p.health.reachable = true;
            p.health.status = json.value(QStringLiteral("status")).toString();
            p.health.handler = json.value(QStringLiteral("handler")).toString();
            p.health.mode = json.value(QStringLiteral("mode")).toString();
            p.health.switchVersion = json.value(QStringLiteral("switch_version")).toInteger(-1);
            p.health.db = json.value(QStringLiteral("db")).toString();
        }
        if (--p.outstanding == 0)
            finish(id);
    });
    connect(metrics, &QNetworkReply::finished, this, [this, id, metrics] {
        metrics->deleteLater();
        Pending &p = m_pending[id];
        if (metrics->error() == QNetworkReply::NoError) {
            const auto samples = parsePrometheusText(QString::fromUtf8(metrics->readAll()));
            p.health.callbacksTotal = sumSamples(samples, QStringLiteral("payops_callbacks_total"));
            p.health.backlog = sumSamples(samples, QStringLiteral("payops_backlog_recorded"));
            p.health.suppressedTotal =
                sumSamples(samples, QStringLiteral("payops_duplicates_suppressed_total"));
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            const Scrape previous = m_lastScrape.value(id);
            if (previous.total >= 0 && now > previous.atMs &&
                p.health.callbacksTotal >= previous.total)
                p.health.callbacksPerSecond = (p.health.callbacksTotal - previous.total) * 1000.0 /
                                              double(now - previous.atMs);
            m_lastScrape.insert(id, Scrape{p.health.callbacksTotal, now});
        } else if (p.health.error.isEmpty()) {
            p.health.error = metrics->errorString();
        }
        if (--p.outstanding == 0)
            finish(id);
    });
}

void InstanceProber::finish(const QString &id)
{
    const InstanceHealth health = m_pending.take(id).health;
    Q_EMIT healthChanged(health);
}

} // namespace payops::console
