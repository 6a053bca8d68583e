#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"
#include "callbacktrace.h"

#include <QSqlDatabase>

#include <atomic>

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
