#pragma once

#include <QByteArray>
#include <QString>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace payops::bench {

// One measured run of requests: its wall time and each request's latency.
struct RunResult
{
    double seconds = 0;
    int requests = 0;
    std::vector<double> latencies; // seconds
    int failures = 0;

    double throughput() const { return requests / seconds; }
    // The latency below which a fraction p of the requests finished, in seconds.
    double percentile(double p) const;
    // A row of a Markdown table: | name | callbacks/s | p50 ms | p99 ms | failed |
    QString row(const QString &name, int nameWidth) const;
};

// Sends every body once, from `clients` threads that each take the next one not yet sent,
// and times each. `send` makes one client per thread (send.makeClient()) and sends one body
// on it (send(client, body), true for a success).
template <typename Send>
RunResult drive(int clients, const std::vector<QByteArray> &bodies, const Send &send)
{
    RunResult result;
    result.requests = int(bodies.size());
    std::atomic<size_t> next{0};
    std::atomic<int> failures{0};
    std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            auto state = send.makeClient();
            for (size_t i = next++; i < bodies.size(); i = next++) {
                const auto t0 = std::chrono::steady_clock::now();
                if (!send(state, bodies[i]))
                    ++failures;
                latencies[size_t(c)].push_back(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
        });
    for (auto &thread : threads)
        thread.join();
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (const auto &own : latencies)
        result.latencies.insert(result.latencies.end(), own.begin(), own.end());
    result.failures = failures.load();
    return result;
}

// payops callbacks (X-Payops-Signature with `secret`, signed when sent) POSTed to `path` at
// 127.0.0.1:port, each client on one kept-alive connection; a success is a 200.
struct SignedPoster
{
    int port = 0;
    QByteArray secret;
    std::string path = "/callbacks/pay";

    std::unique_ptr<httplib::Client> makeClient() const;
    bool operator()(std::unique_ptr<httplib::Client> &client, const QByteArray &body) const;
};

} // namespace payops::bench
