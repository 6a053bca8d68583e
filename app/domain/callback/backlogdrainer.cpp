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
#include "domain/money/auditedaction.h"
#include "domain/money/auditlog.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QList>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace payops {

namespace {

using Clock = std::chrono::steady_clock;

enum class Step { Processed, Rejected, Ignored, Unmatched, Skipped, Empty, SwitchOn };

// What one claimed callback comes to, decided inside its transaction.
struct Settled
{
    Step step = Step::Rejected;
    PaymentVerdict verdict;
    std::optional<CallbackRequest> request;
};

Settled settle(const QSqlDatabase &db, const StoredCallback &stored, const QString &fromState,
               const QString &worker)
{
    Settled settled;
    // Every admitted callback has a three-letter currency and a trade status; a row without
    // them was written by hand and must not stop the drain.
    if (stored.content.currency.size() != 3 || stored.content.tradeStatus.isEmpty()) {
        settled.verdict.status = QStringLiteral("REJECTED");
        settled.verdict.reason = QStringLiteral("unreadable_record");
        settled.verdict.answer = CallbackAnswer::success(Outcome::Rejected, settled.verdict.reason);
        return settled;
    }
    settled.request = stored.content;
    if (!settled.request->isSuccess()) {
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

// Locks the orders the batch may pay, then their users, each in ascending id, before its first
// payment. That is the order the endpoint takes them in (its CAS locks the order, its points
// then the user), and every batch takes all of its own at once, so batches wait for each other
// but never deadlock, however many share users. And since nobody else can change these orders
// until the commit, what the payments read of them later in the batch (the reason a CAS moved
// nothing) is current, although the batch's snapshot is older than its last payment.
void lockOrdersAndUsers(const QSqlDatabase &db, const QList<StoredCallback> &claimed)
{
    QList<qint64> orderIds;
    for (const StoredCallback &stored : claimed)
        orderIds << stored.content.orderId;
    std::sort(orderIds.begin(), orderIds.end());
    orderIds.erase(std::unique(orderIds.begin(), orderIds.end()), orderIds.end());
    if (orderIds.isEmpty())
        return;
    QSqlQuery orders = db::exec(
        db, QStringLiteral("SELECT user_id FROM orders WHERE id IN (%1) ORDER BY id FOR UPDATE")
                .arg(db::idList(orderIds)));
    QList<qint64> userIds;
    while (orders.next())
        userIds << orders.value(0).toLongLong();
    std::sort(userIds.begin(), userIds.end());
    userIds.erase(std::unique(userIds.begin(), userIds.end()), userIds.end());
    if (!userIds.isEmpty())
        db::exec(db, QStringLiteral("SELECT id FROM users WHERE id IN (%1) ORDER BY id FOR UPDATE")
                         .arg(db::idList(userIds)));
}

// One claimed batch after its commit: what each callback came to, and when.
struct Batch
{
    bool switchOn = false;
    QList<Settled> settled;
    qint64 lastId = 0; // the newest callback it claimed
    qint64 began = 0;
    qint64 committed = 0;
};

// The oldest recorded callbacks after `afterId`, `limit` of them, by a plain read that locks
// nothing: the candidates a batch claims from.
QList<qint64> recordedAfter(const QSqlDatabase &db, qint64 afterId, int limit)
{
    // A gateway's rows (gateway = 1) are forwarded to the team's handler, never paid here.
    QSqlQuery query = db::exec(db,
                               QStringLiteral("SELECT id FROM pay_callback_log WHERE status = "
                                              "'RECORDED' AND gateway = 0 AND id > ? "
                                              "ORDER BY id LIMIT %1")
                                   .arg(limit),
                               {afterId});
    QList<qint64> ids;
    while (query.next())
        ids << query.value(0).toLongLong();
    return ids;
}

// On a Galera node a drain's claim is written too, as its transaction's first write, and each
// finish requires it: a conflict from another node that rolled the transaction back without an
// error (docs/decisions/0065-galera-roll-back-without-error.md) must not leave the statements
// after it to commit the side effects without the order's state change.
void markOnClusterNode(const QSqlDatabase &db, const QList<StoredCallback> &claimed,
                       const QString &from)
{
    if (!db::isClusterNode(db))
        return;
    QList<qint64> ids;
    for (const StoredCallback &stored : claimed)
        ids << stored.id;
    if (!markClaimed(db, ids, from))
        throw db::rolledBackByAnotherNode(QStringLiteral("a drain's claim"));
}

void finishSettled(const QSqlDatabase &db, qint64 id, const PaymentVerdict &verdict,
                   const QString &worker)
{
    const bool finished =
        db::isClusterNode(db)
            ? finishClaimedCallback(db, id, verdict.status, verdict.reason, worker, verdict.answer)
            : finishCallback(db, id, verdict.status, verdict.reason, worker, verdict.answer);
    if (!finished)
        throw db::rolledBackByAnotherNode(QStringLiteral("a drain's transaction"));
}

// Claims up to `size` of the candidates still RECORDED that no one else holds and applies
// them, oldest first, in one transaction: the same statements per callback as one
// transaction each, one commit for all of them. The claim goes by primary key only: a
// locking scan of the status index would lock entries the other batches' status updates
// must then wait for, a deadlock the moment two batches do it to each other.
Batch drainBatch(const QSqlDatabase &db, const QString &fromState, const DrainOptions &options,
                 const QList<qint64> &candidates, int size)
{
    Batch batch;
    batch.began = nowMicros();
    db::Transaction transaction(db);
    if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly && !options.force) {
        batch.switchOn = true;
        return batch;
    }
    QSqlQuery claim = db::exec(
        db, QStringLiteral("SELECT %1 FROM pay_callback_log FORCE INDEX (PRIMARY) "
                           "WHERE id IN (%2) AND status = 'RECORDED' ORDER BY id "
                           "LIMIT %3 FOR UPDATE SKIP LOCKED")
                .arg(storedCallbackColumns(), db::idList(candidates), QString::number(size)));
    // Read whole before the payments, which run on the same connection.
    QList<StoredCallback> claimed;
    while (claim.next())
        claimed.append(storedCallback(claim));
    markOnClusterNode(db, claimed, QStringLiteral("RECORDED"));
    lockOrdersAndUsers(db, claimed);
    for (const StoredCallback &stored : std::as_const(claimed)) {
        batch.settled.append(settle(db, stored, fromState, options.worker));
        finishSettled(db, stored.id, batch.settled.last().verdict, options.worker);
        batch.lastId = stored.id;
    }
    transaction.commit();
    batch.committed = nowMicros();
    return batch;
}

// The traces of a committed batch, in one statement (writeTraces): what writeDrainTrace writes
// for each, without a round trip per callback.
void writeBatchTraces(const QSqlDatabase &db, const Batch &batch, const QString &worker)
{
    const qint64 responded = nowMicros();
    QList<CallbackTrace> traces;
    for (const Settled &settled : batch.settled) {
        if (!settled.request)
            continue;
        CallbackTrace trace;
        trace.payNo = settled.request->payNo;
        trace.orderId = settled.request->orderId;
        trace.instance = worker;
        trace.handler = QStringLiteral("drain");
        trace.received = batch.began;
        trace.txBegin = batch.began;
        trace.committed = batch.committed;
        trace.responded = responded;
        trace.outcome = QString::fromLatin1(outcomeLabel(settled.verdict.answer.outcome));
        trace.httpStatus = 200;
        traces << trace;
    }
    writeTraces(db, traces);
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
        QSqlQuery claim = db::exec(db,
                                   QStringLiteral("SELECT %1 FROM pay_callback_log WHERE id = ? "
                                                  "AND status = 'UNMATCHED' FOR UPDATE SKIP LOCKED")
                                       .arg(storedCallbackColumns()),
                                   {id});
        if (!claim.next())
            return Step::Skipped; // another drainer applied it meanwhile
        const StoredCallback stored = storedCallback(claim);
        markOnClusterNode(db, {stored}, QStringLiteral("UNMATCHED"));
        settled = settle(db, stored, fromState, options.worker);
        if (settled.step == Step::Unmatched)
            return Step::Unmatched; // the order went away again: roll back, the row stays as it was
        finishSettled(db, id, settled.verdict, options.worker);
        transaction.commit();
        trace.committed = nowMicros();
    }
    lock.release();
    trace.lockReleased = nowMicros();
    writeDrainTrace(db, trace, settled, options.worker);
    return settled.step;
}

// Adds a callback's step to the counts.
void tally(Step step, DrainResult &result, DrainSource source)
{
    switch (step) {
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
        ++(source == DrainSource::Recorded ? result.unmatched : result.waiting);
        break;
    case Step::Empty:
    case Step::SwitchOn:
    case Step::Skipped:
        break;
    }
}

double perSecond(int done, Clock::time_point started)
{
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return seconds > 0 ? done / seconds : 0;
}

// Counts an unmatched callback's step; false when the drain ends with it.
bool count(Step step, DrainResult &result, const DrainOptions &options, Clock::time_point started)
{
    if (step == Step::Empty)
        return false;
    if (step == Step::SwitchOn) {
        result.stoppedBySwitch = true;
        return false;
    }
    if (step == Step::Skipped)
        return true;
    tally(step, result, options.source);
    result.perSecond = perSecond(result.handled() + result.waiting, started);
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

// What the threads of a recorded drain share: the counts, the limit, the first error.
class RecordedDrain
{
public:
    RecordedDrain(const DrainOptions &options, int backlog)
        : m_options(options)
        , m_started(Clock::now())
    {
        m_result.backlog = backlog;
    }

    // How many callbacks, `most` at most, the next batch may claim; 0 when the drain is over.
    // Under a limit, what a batch may claim is reserved until it is counted.
    int reserve(int most)
    {
        std::lock_guard lock(m_mutex);
        if (m_error || m_result.stoppedBySwitch)
            return 0;
        if (m_options.cancel && m_options.cancel->load()) {
            m_result.cancelled = true;
            return 0;
        }
        if (m_options.limit == 0)
            return most;
        const int size = std::min(most, m_options.limit - m_result.handled() - m_reserved);
        if (size <= 0)
            return 0;
        m_reserved += size;
        return size;
    }

    // A committed batch that had reserved `reserved`.
    void count(const Batch &batch, int reserved)
    {
        std::lock_guard lock(m_mutex);
        if (m_options.limit > 0)
            m_reserved -= reserved;
        if (batch.switchOn) {
            m_result.stoppedBySwitch = true;
            return;
        }
        for (const Settled &settled : batch.settled)
            tally(settled.step, m_result, DrainSource::Recorded);
        m_result.perSecond = perSecond(m_result.handled(), m_started);
        if (m_options.progress && !batch.settled.isEmpty())
            m_options.progress(m_result);
    }

    void fail(const db::Error &error)
    {
        std::lock_guard lock(m_mutex);
        if (!m_error)
            m_error = error;
    }

    DrainResult result() const
    {
        std::lock_guard lock(m_mutex);
        return m_result;
    }
    const std::optional<db::Error> &error() const { return m_error; }

private:
    const DrainOptions &m_options;
    const Clock::time_point m_started;
    mutable std::mutex m_mutex;
    int m_reserved = 0; // claimed by batches not yet counted, under a limit
    DrainResult m_result;
    std::optional<db::Error> m_error;
};

// On a Galera node each read of a drain waits until the node has applied what the cluster
// committed before it (wsrep_sync_wait): two drains on two nodes claim the same callbacks
// (SKIP LOCKED is local), and the one whose claim lost must see the winner's before it claims
// again. Without it, on a loaded machine, it claimed rows the other node had already taken
// but its own had not yet applied, deadlock after deadlock, until it gave up.
void readWhatTheClusterCommitted(const QSqlDatabase &db)
{
    if (db::isClusterNode(db))
        db::execDirect(db, QStringLiteral("SET SESSION wsrep_sync_wait = 1"));
}

// A deadlock rolled the batch back: its rows are as they were, and a batch half the size is
// claimed, down to one callback a transaction, so that it deadlocks less each time. `size`
// is left at the size that committed. Between tries it waits as db::retryingDeadlocks does, so
// that two drains on two Galera nodes stop meeting in step.
Batch drainBatchRetryingDeadlocks(const QSqlDatabase &db, const QString &fromState,
                                  const DrainOptions &options, const QList<qint64> &candidates,
                                  int &size)
{
    // From the largest batch down to one callback, then two more tries at one, as before
    // batches.
    constexpr int kTries = 13;
    for (int tries = 1;; ++tries) {
        try {
            return drainBatch(db, fromState, options, candidates, size);
        } catch (const db::Error &error) {
            if (!error.isDeadlock() || tries == kTries)
                throw;
            size = std::max(1, size / 2);
        }
        db::waitBeforeRetry(tries);
    }
}

// One thread of a recorded drain, on a connection of its own, batch after batch, walking the
// backlog forward by id until no candidate is left. Candidates that other connections or
// drains hold are theirs: the walk goes past them. After a deadlock its batches grow back,
// doubling with each commit, to options.batch.
void drainRecordedBatches(const Dsn &dsn, const QString &fromState, RecordedDrain &drain,
                          const DrainOptions &options)
{
    // Room in each window for the batches other connections hold at the head of the backlog.
    constexpr int kWindowBatches = 4;
    try {
        db::Connection connection(dsn, QStringLiteral("drain"));
        const QSqlDatabase db = connection.database();
        readWhatTheClusterCommitted(db);
        int ceiling = options.batch;
        qint64 after = 0;
        for (int reserved = drain.reserve(ceiling); reserved > 0;
             reserved = drain.reserve(ceiling)) {
            const QList<qint64> candidates =
                recordedAfter(db, after, kWindowBatches * options.batch);
            int size = reserved;
            const Batch batch =
                candidates.isEmpty()
                    ? Batch{}
                    : drainBatchRetryingDeadlocks(db, fromState, options, candidates, size);
            drain.count(batch, reserved);
            if (candidates.isEmpty() || batch.switchOn)
                return;
            if (batch.settled.isEmpty()) {
                after = candidates.last(); // all held by others: look further on
                continue;
            }
            after = batch.lastId;
            writeBatchTraces(db, batch, options.worker);
            ceiling = std::min(options.batch, 2 * size);
        }
    } catch (const db::Error &error) {
        drain.fail(error);
    }
}

// Throws the first thread's db::Error once all have stopped; `result` holds the counts anyway.
void drainRecorded(const Dsn &dsn, const QSqlDatabase &db, const DrainOptions &options,
                   DrainResult &result)
{
    const QString fromState = paymentFromState(db);
    const int backlog =
        db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                      "'RECORDED' AND gateway = 0"))
            .toInt();
    RecordedDrain drain(options, backlog);
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, options.connections); ++i)
        threads.emplace_back([&] { drainRecordedBatches(dsn, fromState, drain, options); });
    for (std::thread &thread : threads)
        thread.join();
    result = drain.result();
    if (drain.error())
        throw *drain.error();
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
                       "WHERE c.status = 'UNMATCHED' AND c.gateway = 0 AND c.id > ? "
                       "ORDER BY c.id LIMIT 100"),
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
    const Clock::time_point started = Clock::now();
    qint64 after = 0;
    for (QList<Candidate> batch = unmatchedAfter(db, after); !batch.isEmpty();
         batch = unmatchedAfter(db, after)) {
        for (const Candidate &candidate : std::as_const(batch)) {
            if (!mayGoOn(options, result))
                return;
            after = candidate.id;
            // A deadlock rolled the claim back: all is as it was, and it is tried again.
            const Step step = candidate.orderExists
                                  ? db::retryingDeadlocks(3,
                                                          [&] {
                                                              return drainUnmatched(
                                                                  db, fromState, options,
                                                                  candidate.id, candidate.payNo);
                                                          })
                                  : Step::Unmatched;
            if (!count(step, result, options, started))
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
        after.insert(QStringLiteral("connections"), options.connections);
        after.insert(QStringLiteral("batch"), options.batch);
    }
    runAudited([&] {
        appendAudit(
            db,
            unmatched ? QStringLiteral("backlog.drain_unmatched") : QStringLiteral("backlog.drain"),
            QStringLiteral("pay_callback_log"),
            options.force ? QStringLiteral("forced while RECORD_ONLY") : QString(), QString(),
            QString(), QString::fromUtf8(QJsonDocument(after).toJson(QJsonDocument::Compact)));
    });
}

} // namespace

DrainResult drainBacklog(const Dsn &dsn, const DrainOptions &options)
{
    db::Connection connection(dsn, QStringLiteral("drain"));
    const QSqlDatabase db = connection.database();
    readWhatTheClusterCommitted(db);
    DrainResult result;
    try {
        if (options.source == DrainSource::Unmatched)
            drainUnmatchedLoop(db, options, result);
        else
            drainRecorded(dsn, db, options, result);
    } catch (const db::Error &) {
        try {
            auditDrain(db, options, result, QStringLiteral("error"));
        } catch (const db::Error &) {
            // A server that failed the drain may fail its audit too; the first error counts.
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
