#pragma once

#include <QByteArray>
#include <QString>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace payops::bench {

// Requests a measured run sends: REQUESTS from the environment, or `fallback` (a shorter run
// for a quick look, the default for the figures).
int requestsPerRun(int fallback);

// The median of `values` (the mean of the middle two for an even count): the figure of rounds
// taken on a noisy machine.
template <typename Values> double median(Values values)
{
    std::sort(values.begin(), values.end());
    const auto count = values.size();
    return (values[(count - 1) / 2] + values[count / 2]) / 2;
}

// CPU seconds (user and system, every thread) a process has used so far, from
// /proc/<pid>/stat; 0 for a process that is gone.
double processCpuSeconds(qint64 pid);

// One measured run of requests: its wall time and each request's latency.
struct RunResult
{
    double seconds = 0;
    int requests = 0;
    std::vector<double> latencies; // seconds
    int failures = 0;
    // The CPU seconds each process drive() was asked to watch used while the clock ran.
    std::vector<double> cpuSeconds;

    double throughput() const { return requests / seconds; }
    // The latency below which a fraction p of the requests finished, in seconds.
    double percentile(double p) const;
    // A row of a Markdown table: | name | callbacks/s | p50 ms | p99 ms | failed |
    QString row(const QString &name, int nameWidth) const;
};

// Sends every body once, from `clients` threads that each take the next one not yet sent,
// and times each. `send` makes one client per thread (send.makeClient()) and sends one body
// on it (send(client, body), true for a success). The clients are made one at a time (256
// database connections asked for at once overflow the server's listen queue), and the clock
// starts once every client is made: connections opening are not what a run measures.
template <typename Send>
RunResult drive(int clients, const std::vector<QByteArray> &bodies, const Send &send,
                const std::vector<qint64> &watched = {})
{
    RunResult result;
    result.requests = int(bodies.size());
    std::atomic<size_t> next{0};
    std::atomic<int> failures{0};
    std::mutex making;
    std::condition_variable changed;
    int ready = 0;
    bool go = false;
    std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            std::unique_lock<std::mutex> lock(making);
            auto state = send.makeClient();
            ++ready;
            changed.notify_all();
            changed.wait(lock, [&] { return go; });
            lock.unlock();
            for (size_t i = next++; i < bodies.size(); i = next++) {
                const auto t0 = std::chrono::steady_clock::now();
                if (!send(state, bodies[i]))
                    ++failures;
                latencies[size_t(c)].push_back(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
        });
    std::unique_lock<std::mutex> lock(making);
    changed.wait(lock, [&] { return ready == clients; });
    for (qint64 pid : watched)
        result.cpuSeconds.push_back(-processCpuSeconds(pid));
    const auto started = std::chrono::steady_clock::now();
    go = true;
    lock.unlock();
    changed.notify_all();
    for (auto &thread : threads)
        thread.join();
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (size_t i = 0; i < watched.size(); ++i)
        result.cpuSeconds[i] += processCpuSeconds(watched[i]);
    for (const auto &own : latencies)
        result.latencies.insert(result.latencies.end(), own.begin(), own.end());
    result.failures = failures.load();
    return result;
}

// payops callbacks (X-Payops-Signature with `secret`, signed when sent) POSTed to `path` at
// 127.0.0.1:port, each client on one kept-alive connection; a success is a 200. An answer
// not received within timeoutSeconds is no answer.
struct SignedPoster
{
    int port = 0;
    QByteArray secret;
    std::string path = "/callbacks/pay";
    int timeoutSeconds = 30;

    std::unique_ptr<httplib::Client> makeClient() const;
    // The answer's HTTP status, 0 for none (refused, reset, timed out).
    int post(std::unique_ptr<httplib::Client> &client, const QByteArray &body) const;
    bool operator()(std::unique_ptr<httplib::Client> &client, const QByteArray &body) const
    {
        return post(client, body) == 200;
    }
};

// An open-loop run: request i is due at i / rate seconds from the start, whatever the answers
// to earlier ones, as a platform's storm arrives. One thread sends each request when it falls
// due on one of `connections` kept-alive connections that is not waiting for an answer
// (stormoffer.cpp); as long as one is free when a request falls due, the schedule holds.
// `late` counts requests sent more than 100 ms after their time: the schedule, not the
// endpoint, set those.
struct OfferResult
{
    double rate = 0;               // offered, requests a second
    double sendSeconds = 0;        // from the start to the last request sent
    double seconds = 0;            // from the start to the last answer
    std::vector<int> statuses;     // each request's answer, 0 for none
    std::vector<double> latencies; // seconds, each request's from its send to its answer
    int late = 0;

    int count(int lowStatus, int highStatus) const; // answers with lowStatus <= status <= high
};
OfferResult offer(const SignedPoster &poster, const std::vector<QByteArray> &bodies, double rate,
                  int connections);

} // namespace payops::bench
