#include "loadrun.h"

#include "domain/callback/signature.h"

#include <QDateTime>

#include <httplib.h>

namespace payops::bench {

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

OfferResult offer(const SignedPoster &poster, const std::vector<QByteArray> &bodies, double rate,
                  int connections)
{
    using Clock = std::chrono::steady_clock;
    OfferResult result;
    result.rate = rate;
    result.statuses.assign(bodies.size(), 0);
    result.latencies.assign(bodies.size(), 0);
    std::atomic<size_t> next{0};
    std::atomic<int> late{0};
    std::atomic<Clock::rep> lastSent{0};
    const auto started = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c)
        threads.emplace_back([&] {
            auto client = poster.makeClient();
            for (size_t i = next++; i < bodies.size(); i = next++) {
                const auto due = started + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(double(i) / rate));
                std::this_thread::sleep_until(due);
                const auto sent = Clock::now();
                if (sent - due > std::chrono::milliseconds(100))
                    ++late;
                const Clock::rep since = (sent - started).count();
                for (Clock::rep seen = lastSent.load();
                     since > seen && !lastSent.compare_exchange_weak(seen, since);)
                    ;
                result.statuses[i] = poster.post(client, bodies[i]);
                result.latencies[i] = std::chrono::duration<double>(Clock::now() - sent).count();
            }
        });
    for (auto &thread : threads)
        thread.join();
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    result.sendSeconds = std::chrono::duration<double>(Clock::duration(lastSent.load())).count();
    result.late = late.load();
    return result;
}

} // namespace payops::bench
