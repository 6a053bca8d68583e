#include "safehandler.h"

#include "callbacklog.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/namedlock.h"
#include "domain/callback/callbackswitch.h"
#include "paymentapplier.h"

namespace payops {
namespace {

// The transaction this connection began is no longer the one it is in: a conflicting
// transaction from another Galera node rolled it back and the error reached no statement
// (db::Transaction). Reported as the deadlock it is, so that it is run again under the lock.
db::Error rolledBackUnderUs()
{
    return db::rolledBackByAnotherNode(QStringLiteral("this callback's transaction"));
}

// On a Galera node, whether what was committed is there: a roll-back whose error reached no
// statement leaves a COMMIT that succeeds with nothing in it, and a 2xx must never be
// answered for a callback that is not recorded.
bool committedAs(const QSqlDatabase &db, const CallbackRequest &request, qint64 id,
                 const QString &status)
{
    if (!db::isClusterNode(db))
        return true;
    const auto stored = findCallback(db, request.payNo);
    return stored && stored->id == id && stored->status == status;
}

} // namespace

SafeHandler::SafeHandler(QString instance, QString fromState, SwitchObserver &switchObserver,
                         int lockTimeoutSeconds)
    : m_instance(std::move(instance))
    , m_fromState(std::move(fromState))
    , m_switch(switchObserver)
    , m_lockTimeoutSeconds(lockTimeoutSeconds)
{
}

CallbackAnswer SafeHandler::handle(const QSqlDatabase &db, const CallbackRequest &request,
                                   CallbackTrace &trace)
{
    // Gateway: a pay_no seen before gets its first answer again, with no lock and no
    // transaction. A resend that races past this check is caught by uk_pay_no below.
    bool upgrade = false;
    if (const auto stored = findCallback(db, request.payNo)) {
        if (auto answer = answerForResend(*stored, request))
            return *answer;
        upgrade = true;
    }
    if (!upgrade && m_switch.recordOnlyHint.load(std::memory_order_relaxed)) {
        if (auto answer = tryRecordOnly(db, request, trace))
            return *answer;
    }
    return process(db, request, upgrade, trace);
}

std::optional<CallbackAnswer> SafeHandler::tryRecordOnly(const QSqlDatabase &db,
                                                         const CallbackRequest &request,
                                                         CallbackTrace &trace)
{
    SwitchReading reading(m_switch, db);
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    const SwitchState state = reading.read();
    if (state.mode != CallbackMode::RecordOnly)
        return std::nullopt; // flipped back meanwhile: take the full path
    const CallbackAnswer answer = CallbackAnswer::success(Outcome::Recorded);
    qint64 id = 0;
    try {
        id = insertCallback(db, request, QStringLiteral("RECORDED"), m_instance, answer);
    } catch (const db::Error &error) {
        if (!error.isDuplicateKey())
            throw;
        transaction.rollback();
        return answerExisting(db, request, Defence::PayNoKey);
    }
    transaction.commit();
    if (!committedAs(db, request, id, QStringLiteral("RECORDED")))
        throw rolledBackUnderUs(); // answered 503: the platform sends it again
    trace.committed = nowMicros();
    return answer;
}

CallbackAnswer SafeHandler::process(const QSqlDatabase &db, const CallbackRequest &request,
                                    bool upgrade, CallbackTrace &trace)
{
    // The lock is taken before BEGIN and released after COMMIT. The incident released it
    // in `finally`, inside the transaction, and the next callback read the order before the
    // first one's commit made it PAID.
    db::NamedLock lock(db, db::payNoLockName(request.payNo));
    if (!lock.acquire(m_lockTimeoutSeconds))
        return CallbackAnswer::failure(
            503, Outcome::Unavailable,
            QStringLiteral("this payment is being processed; retry later"));
    trace.lockAcquired = nowMicros();

    // A deadlock rolls back the whole transaction and nothing else: with the lock still
    // held it is safe to run the transaction again instead of making the platform retry.
    std::optional<CallbackAnswer> answer;
    for (int attempt = 1; !answer; ++attempt) {
        try {
            answer = processLocked(db, request, upgrade, trace);
            break;
        } catch (const db::Error &error) {
            if (!error.isDeadlock() || attempt == kDeadlockAttempts)
                throw;
        }
    }
    lock.release();
    trace.lockReleased = nowMicros();
    // nullopt: another instance recorded this pay_no first; uk_pay_no kept it out.
    return answer ? *answer : answerExisting(db, request, Defence::PayNoKey);
}

std::optional<CallbackAnswer> SafeHandler::processLocked(const QSqlDatabase &db,
                                                         const CallbackRequest &request,
                                                         bool upgrade, CallbackTrace &trace)
{
    SwitchReading reading(m_switch, db);
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    const SwitchState state = reading.read();

    qint64 id = 0;
    try {
        id = upgrade ? upgradeCallback(db, request, m_instance)
                     : insertCallback(db, request, QStringLiteral("PROCESSING"), m_instance,
                                      CallbackAnswer());
    } catch (const db::Error &error) {
        if (!error.isDuplicateKey())
            throw;
    }
    if (id == 0)
        return std::nullopt;

    QString status;
    QString reason;
    CallbackAnswer answer;
    if (state.mode == CallbackMode::RecordOnly) {
        status = QStringLiteral("RECORDED");
        answer = CallbackAnswer::success(Outcome::Recorded);
    } else if (!request.isSuccess()) {
        status = QStringLiteral("IGNORED");
        reason = QStringLiteral("trade_status ") + request.tradeStatus;
        answer = CallbackAnswer::success(Outcome::Ignored, reason);
    } else {
        const PaymentVerdict verdict =
            verdictFor(applyPayment(db, request, m_fromState, m_instance));
        status = verdict.status;
        reason = verdict.reason;
        answer = verdict.answer;
    }
    // The row this transaction began with must still be there to finish: otherwise the
    // transaction was rolled back under this connection, and committing now would make what
    // ran since (side effects, on a cluster node) durable without the row and the CAS.
    if (!finishCallback(db, id, status, reason, m_instance, answer))
        throw rolledBackUnderUs();
    transaction.commit();
    if (!committedAs(db, request, id, status))
        throw rolledBackUnderUs();
    trace.committed = nowMicros();
    return answer;
}

CallbackAnswer SafeHandler::answerExisting(const QSqlDatabase &db, const CallbackRequest &request,
                                           Defence defence)
{
    const auto stored = findCallback(db, request.payNo);
    std::optional<CallbackAnswer> answer;
    if (stored)
        answer = answerForResend(*stored, request);
    if (!answer) // the other writer rolled back, or upgraded the row meanwhile: let the platform
                 // retry
        return CallbackAnswer::failure(503, Outcome::Unavailable,
                                       QStringLiteral("concurrent delivery; retry later"));
    if (answer->outcome == Outcome::Replayed)
        answer->suppressedBy = defence;
    return *answer;
}

} // namespace payops
