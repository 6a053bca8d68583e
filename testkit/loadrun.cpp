#include "loadrun.h"

#include "domain/callback/signature.h"

#include <QDateTime>

#include <httplib.h>

namespace payops::bench {

double RunResult::percentile(double p) const
{
    if (latencies.empty())
        return 0;
    std::vector<double> sorted = latencies;
    std::sort(sorted.begin(), sorted.end());
    return sorted[std::min(sorted.size() - 1, size_t(p * double(sorted.size())))];
}

QString RunResult::row(const QString &name, int nameWidth) const
{
    return QStringLiteral("| %1 | %2 | %3 | %4 | %5 |")
        .arg(name, -nameWidth)
        .arg(throughput(), 8, 'f', 0)
        .arg(percentile(0.5) * 1000, 7, 'f', 2)
        .arg(percentile(0.99) * 1000, 7, 'f', 2)
        .arg(failures);
}

std::unique_ptr<httplib::Client> SignedPoster::makeClient() const
{
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    client->set_read_timeout(30, 0);
    return client;
}

bool SignedPoster::operator()(std::unique_ptr<httplib::Client> &client,
                              const QByteArray &body) const
{
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    const httplib::Headers headers{
        {"X-Payops-Timestamp", std::to_string(now)},
        {"X-Payops-Signature", signatureHeader(secret, now, body).toStdString()}};
    const auto response = client->Post(path, headers, body.toStdString(), "application/json");
    return response && response->status == 200;
}

} // namespace payops::bench
