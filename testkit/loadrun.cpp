#include "loadrun.h"

#include "domain/callback/signature.h"

#include <QDateTime>
#include <QFile>

#include <httplib.h>

#include <unistd.h>

namespace payops::bench {

double processCpuSeconds(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    // After the command's name, which may hold spaces and parentheses: the state is the first
    // field, utime the 12th and stime the 13th, in clock ticks.
    const QByteArray line = stat.readAll();
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return 0;
    return double(fields.at(11).toLongLong() + fields.at(12).toLongLong()) /
           double(sysconf(_SC_CLK_TCK));
}

int requestsPerRun(int fallback)
{
    bool ok = false;
    const int requests = qEnvironmentVariableIntValue("REQUESTS", &ok);
    return ok && requests > 0 ? requests : fallback;
}

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
    client->set_read_timeout(timeoutSeconds, 0);
    client->set_write_timeout(timeoutSeconds, 0);
    client->set_connection_timeout(timeoutSeconds, 0);
    return client;
}

int SignedPoster::post(std::unique_ptr<httplib::Client> &client, const QByteArray &body) const
{
    const qint64 now = QDateTime::currentSecsSinceEpoch();
    const httplib::Headers headers{
        {"X-Payops-Timestamp", std::to_string(now)},
        {"X-Payops-Signature", signatureHeader(secret, now, body).toStdString()}};
    const auto response = client->Post(path, headers, body.toStdString(), "application/json");
    return response ? response->status : 0;
}

int OfferResult::count(int lowStatus, int highStatus) const
{
    return int(std::count_if(statuses.begin(), statuses.end(), [&](int status) {
        return status >= lowStatus && status <= highStatus;
    }));
}

} // namespace payops::bench
