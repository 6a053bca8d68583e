#pragma once

#include "callbackhandler.h"

#include <QString>

namespace payops {

// The incident's handler, reproduced on purpose for demos and for the tests that prove the
// safe handler's tests can see the bug: the transaction opens first (the @Transactional
// proxy), the lock is taken inside it on the order and released in `finally` before the
// commit, the status is read with a plain SELECT, the CAS's affected rows are ignored and
// the side effects have no keys. commitDelayMs stands for the time the proxy takes to
// commit after the method returned; it widens the window. Like every handler it sits behind
// the record-only switch. Runs only on a sandbox.
class UnsafeHandler final : public CallbackHandler
{
public:
    UnsafeHandler(QString instance, int commitDelayMs, int lockTimeoutSeconds);

    const char *name() const override { return "unsafe-demo"; }
    bool repeatable() const override { return false; }
    CallbackAnswer handle(const QSqlDatabase &db, const CallbackRequest &request,
                          CallbackTrace &trace) override;

private:
    CallbackAnswer onPaySuccess(const QSqlDatabase &db, const CallbackRequest &request);
    CallbackAnswer logCallback(const QSqlDatabase &db, const CallbackRequest &request,
                               const CallbackAnswer &answer);

    QString m_instance;
    int m_commitDelayMs;
    int m_lockTimeoutSeconds;
};

} // namespace payops
