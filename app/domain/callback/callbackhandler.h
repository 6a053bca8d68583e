#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"
#include "callbackswitch.h"
#include "callbacktrace.h"

#include <QSqlDatabase>

#include <atomic>
#include <map>
#include <mutex>

namespace payops {

// What the instance knows of the switch. The hint steers a callback to the cheap
// record-only path; the decision is always taken again under the switch's shared lock.
struct SwitchObserver
{
    std::atomic<bool> recordOnlyHint{false};
    std::atomic<qint64> versionApplied{0};

    void observe(bool recordOnly, qint64 version)
    {
        recordOnlyHint.store(recordOnly, std::memory_order_relaxed);
        qint64 seen = versionApplied.load();
        while (version > seen && !versionApplied.compare_exchange_weak(seen, version)) {
        }
    }

    // The version this instance acknowledges to an operator's flip (the heartbeat's
    // switch_version_applied): the one it observed, held back to the oldest version a
    // processing transaction of its still acts on. On one server the flip's barrier has
    // already waited for those; a flip on another Galera node has not
    // (docs/decisions/0067-switch-acknowledged-across-nodes.md).
    qint64 versionAcknowledged() const;

private:
    friend class SwitchReading;
    mutable std::mutex m_readingsMutex;
    std::map<quint64, qint64> m_readings; // a reading held, by number: the version it acts on
    quint64 m_lastReading = 0;
};

// One processing transaction's reading of the switch under its barrier, held from before the
// read until the transaction has ended (or what it decided has been done), so it is declared
// before the db::Transaction. While it is held the instance acknowledges no newer version;
// where it is not held it only observes what it read.
class SwitchReading final
{
public:
    // Held on a Galera node only, where the flip's barrier does not wait for the transaction;
    // or everywhere, for a reading that acts beyond its transaction (a gateway's forward, which
    // runs after its claim committed: gatewayforward.h).
    enum class Hold { OnClusterNodes, Everywhere };
    SwitchReading(SwitchObserver &observer, const QSqlDatabase &db,
                  Hold hold = Hold::OnClusterNodes);
    ~SwitchReading();
    SwitchReading(const SwitchReading &) = delete;
    SwitchReading &operator=(const SwitchReading &) = delete;

    // readSwitchForProcessing, observed by the instance.
    SwitchState read();
    // The same, from the result of switchForProcessingStatement() sent with other statements.
    SwitchState readFrom(QSqlQuery &result);

private:
    // What this transaction acts on, from here on: `state`, which it read.
    SwitchState actOn(const SwitchState &state);

    SwitchObserver &m_observer;
    const QSqlDatabase &m_db;
    quint64 m_number = 0; // 0: not held (not a cluster node)
};

// One way of handling a valid, signed callback. Runs on an HTTP worker thread with that
// thread's own connection; throws db::Error when the database fails (the caller answers 503
// and nothing was committed).
class CallbackHandler
{
public:
    virtual ~CallbackHandler() = default;
    virtual const char *name() const = 0;
    // True when running a callback again is harmless: the handler looks its pay_no up first
    // and answers one already applied from what it stored.
    virtual bool repeatable() const = 0;
    virtual CallbackAnswer handle(const QSqlDatabase &db, const CallbackRequest &request,
                                  CallbackTrace &trace) = 0;
};

} // namespace payops
