#include "backlogdrainer.h"

#include "callbackswitch.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/namedlock.h"
#include "domain/callback/callbackanswer.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/callbacktrace.h"
#include "domain/callback/paymentapplier.h"
#include "domain/money/auditlog.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QList>

#include <optional>

namespace payops {

namespace {

enum class Step { Processed, Rejected, Ignored, Unmatched, Skipped, Empty, SwitchOn };

// What one claimed callback comes to, decided inside its transaction.
struct Settled
{
    Step step = Step::Rejected;
    PaymentVerdict verdict;
    std::optional<CallbackRequest> request;
};

Settled settle(const QSqlDatabase &db, const QByteArray &rawBody, const QString &fromState,
               const QString &worker)
{
    Settled settled;
    QString parseError;
    settled.request = CallbackRequest::parse(rawBody, &parseError);
    if (!settled.request) { // was valid when recorded; a hand-edited row must not stop the drain
        settled.verdict.status = QStringLiteral("REJECTED");
        settled.verdict.reason = QStringLiteral("unreadable_record");
        settled.verdict.answer = CallbackAnswer::success(Outcome::Rejected, settled.verdict.reason);
    } else if (!settled.request->isSuccess()) {
        settled.step = Step::Ignored;
        settled.verdict.status = QStringLiteral("IGNORED");
        settled.verdict.reason = QStringLiteral("trade_status ") + settled.request->tradeStatus;
        settled.verdict.answer = CallbackAnswer::success(Outcome::Ignored, settled.verdict.reason);
    } else {
        settled.verdict = verdictFor(applyPayment(db, *settled.request, fromState, worker));
        settled.step = settled.verdict.status == QLatin1String("PROCESSED")   ? Step::Processed
                       : settled.verdict.status == QLatin1String("UNMATCHED") ? Step::Unmatched
                                                                              : Step::Rejected;
    }
    return settled;
}

void writeDrainTrace(const QSqlDatabase &db, CallbackTrace &trace, const Settled &settled,
                     const QString &worker)
{
    if (!settled.request)
        return;
    trace.payNo = settled.request->payNo;
    trace.orderId = settled.request->orderId;
    trace.instance = worker;
    trace.handler = QStringLiteral("drain");
    trace.responded = nowMicros();
    trace.outcome = QString::fromLatin1(outcomeLabel(settled.verdict.answer.outcome));
    trace.httpStatus = 200;
    writeTrace(db, trace);
}

// One recorded callback, one transaction.
Step drainRecorded(const QSqlDatabase &db, const QString &fromState, const DrainOptions &options)
{
    CallbackTrace trace;
    trace.received = nowMicros();
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly && !options.force)
        return Step::SwitchOn;
    QSqlQuery next = db::exec(db, QStringLiteral("SELECT id, raw_body FROM pay_callback_log WHERE "
                                                 "status = 'RECORDED' AND gateway = 0 "
                                                 "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"));
    if (!next.next())
        return Step::Empty;
    const Settled settled = settle(db, next.value(1).toByteArray(), fromState, options.worker);
    finishCallback(db, next.value(0).toLongLong(), settled.verdict.status, settled.verdict.reason,
                   options.worker, settled.verdict.answer);
    transaction.commit();
    trace.committed = nowMicros();
    writeDrainTrace(db, trace, settled, options.worker);
    return settled.step;
}

// One unmatched callback whose order was there when it was picked: the pipeline of the
// endpoint, the pay_no lock around the transaction.
Step drainUnmatched(const QSqlDatabase &db, const QString &fromState, const DrainOptions &options,
                    qint64 id, const QByteArray &payNo)
{
    CallbackTrace trace;
    trace.received = nowMicros();
    db::NamedLock lock(db, db::payNoLockName(payNo));
    if (!lock.acquire(0))
        return Step::Skipped;
    trace.lockAcquired = nowMicros();
    Settled settled;
    {
        db::Transaction transaction(db);
        trace.txBegin = nowMicros();
        if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly && !options.force)
            return Step::SwitchOn;
        QSqlQuery claim =
            db::exec(db,
                     QStringLiteral("SELECT raw_body FROM pay_callback_log WHERE id = ? AND status "
                                    "= 'UNMATCHED' FOR UPDATE SKIP LOCKED"),
                     {id});
        if (!claim.next())
            return Step::Skipped; // another drainer applied it meanwhile
        settled = settle(db, claim.value(0).toByteArray(), fromState, options.worker);
        if (settled.step == Step::Unmatched)
            return Step::Unmatched; // the order went away again: roll back, the row stays as it was
        finishCallback(db, id, settled.verdict.status, settled.verdict.reason, options.worker,
                       settled.verdict.answer);
        transaction.commit();
        trace.committed = nowMicros();
    }
    lock.release();
    trace.lockReleased = nowMicros();
    writeDrainTrace(db, trace, settled, options.worker);
    return settled.step;
}

// A deadlock rolled the claim back: the row is as it was and is tried again.
template <typename Attempt> Step retryingDeadlocks(Attempt attempt)
{
    for (int tries = 1;; ++tries) {
        try {
            return attempt();
        } catch (const db::Error &error) {
            if (!error.isDeadlock() || tries == 3)
                throw;
        }
    }
}

// Counts a step; false when the drain ends with it.
bool count(Step step, DrainResult &result, const DrainOptions &options)
{
    switch (step) {
    case Step::Empty:
        return false;
    case Step::SwitchOn:
        result.stoppedBySwitch = true;
        return false;
    case Step::Skipped:
        return true;
    case Step::Processed:
        ++result.processed;
        break;
    case Step::Rejected:
        ++result.rejected;
        break;
    case Step::Ignored:
        ++result.ignored;
        break;
    case Step::Unmatched:
        ++(options.source == DrainSource::Recorded ? result.unmatched : result.waiting);
        break;
    }
    if (options.progress)
        options.progress(result);
    return true;
}

// False when the drain must not take another callback.
bool mayGoOn(const DrainOptions &options, DrainResult &result)
{
    if (options.cancel && options.cancel->load()) {
        result.cancelled = true;
        return false;
    }
    return options.limit == 0 || result.handled() < options.limit;
}

void drainRecordedLoop(const QSqlDatabase &db, const DrainOptions &options, DrainResult &result)
{
    const QString fromState = paymentFromState(db);
    while (mayGoOn(options, result)) {
        if (!count(retryingDeadlocks([&] { return drainRecorded(db, fromState, options); }), result,
                   options))
            return;
    }
}

struct Candidate
{
    qint64 id = 0;
    QByteArray payNo;
    bool orderExists = false;
};

// A plain read, no lock: the claim happens under the pay_no lock, in the transaction.
QList<Candidate> unmatchedAfter(const QSqlDatabase &db, qint64 afterId)
{
    QSqlQuery query = db::exec(
        db,
        QStringLiteral("SELECT c.id, c.pay_no, o.id IS NOT NULL FROM pay_callback_log c LEFT JOIN "
                       "orders o ON o.id = c.order_id "
                       "WHERE c.status = 'UNMATCHED' AND c.id > ? ORDER BY c.id LIMIT 100"),
        {afterId});
    QList<Candidate> candidates;
    while (query.next())
        candidates.append(
            {query.value(0).toLongLong(), query.value(1).toByteArray(), query.value(2).toBool()});
    return candidates;
}

// Walks the unmatched callbacks once, by id: one whose order is still missing is counted
// and passed over without a lock or a write, so a drain ends even when none can be applied.
void drainUnmatchedLoop(const QSqlDatabase &db, const DrainOptions &options, DrainResult &result)
{
    const QString fromState = paymentFromState(db);
    qint64 after = 0;
    for (QList<Candidate> batch = unmatchedAfter(db, after); !batch.isEmpty();
         batch = unmatchedAfter(db, after)) {
        for (const Candidate &candidate : std::as_const(batch)) {
            if (!mayGoOn(options, result))
                return;
            after = candidate.id;
            const Step step = candidate.orderExists ? retryingDeadlocks([&] {
                return drainUnmatched(db, fromState, options, candidate.id, candidate.payNo);
            })
                                                    : Step::Unmatched;
            if (!count(step, result, options))
                return;
        }
    }
}

// One entry per drain that moved anything, under the database's name for who ran it: each
// callback's own trail is its pay_callback_log row and its callback_trace.
void auditDrain(const QSqlDatabase &db, const DrainOptions &options, const DrainResult &result,
                const QString &stop)
{
    if (result.handled() == 0)
        return;
    const bool unmatched = options.source == DrainSource::Unmatched;
    QJsonObject after{{QStringLiteral("processed"), result.processed},
                      {QStringLiteral("rejected"), result.rejected},
                      {QStringLiteral("worker"), options.worker},
                      {QStringLiteral("stopped"), stop}};
    if (unmatched) {
        after.insert(QStringLiteral("waiting"), result.waiting);
    } else {
        after.insert(QStringLiteral("ignored"), result.ignored);
        after.insert(QStringLiteral("unmatched"), result.unmatched);
    }
    appendAudit(
        db, unmatched ? QStringLiteral("backlog.drain_unmatched") : QStringLiteral("backlog.drain"),
        QStringLiteral("pay_callback_log"),
        options.force ? QStringLiteral("forced while RECORD_ONLY") : QString(), QString(),
        QString(), QString::fromUtf8(QJsonDocument(after).toJson(QJsonDocument::Compact)));
}

} // namespace

DrainResult drainBacklog(const QSqlDatabase &db, const DrainOptions &options)
{
    DrainResult result;
    try {
        if (options.source == DrainSource::Unmatched)
            drainUnmatchedLoop(db, options, result);
        else
            drainRecordedLoop(db, options, result);
    } catch (const db::Error &) {
        try {
            auditDrain(db, options, result, QStringLiteral("error"));
        } catch (const db::Error &) {
            // The connection that failed the drain fails its audit too; the first error counts.
        }
        throw;
    }
    auditDrain(db, options, result,
               result.stoppedBySwitch ? QStringLiteral("switch")
               : result.cancelled     ? QStringLiteral("cancelled")
                                      : QString());
    return result;
}

} // namespace payops
