#pragma once

#include "callbackhandler.h"

#include <QString>

namespace payops {

// The pipeline of docs/callback-contract.md ("How the safe handler pays exactly once") with
// the incident's defences done right: replay check, switch barrier, lock on pay_no taken before
// BEGIN and released after COMMIT, uk_pay_no, CAS with affected rows checked, side effects
// under their own keys.
class SafeHandler final : public CallbackHandler
{
public:
    SafeHandler(QString instance, QString fromState, SwitchObserver &switchObserver,
                int lockTimeoutSeconds);

    const char *name() const override { return "safe"; }
    bool repeatable() const override { return true; }
    CallbackAnswer handle(const QSqlDatabase &db, const CallbackRequest &request,
                          CallbackTrace &trace) override;

private:
    std::optional<CallbackAnswer>
    tryRecordOnly(const QSqlDatabase &db, const CallbackRequest &request, CallbackTrace &trace);
    CallbackAnswer process(const QSqlDatabase &db, const CallbackRequest &request, bool upgrade,
                           CallbackTrace &trace);
    // One transaction under the pay_no lock; nullopt when uk_pay_no found the callback recorded.
    std::optional<CallbackAnswer> processLocked(const QSqlDatabase &db,
                                                const CallbackRequest &request, bool upgrade,
                                                CallbackTrace &trace);
    CallbackAnswer answerExisting(const QSqlDatabase &db, const CallbackRequest &request,
                                  Defence defence);

    static constexpr int kDeadlockAttempts = 3;

    QString m_instance;
    QString m_fromState;
    SwitchObserver &m_switch;
    int m_lockTimeoutSeconds;
};

} // namespace payops
