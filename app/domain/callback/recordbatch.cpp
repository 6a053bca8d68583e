#include "recordbatch.h"

#include "callbackhandler.h"
#include "callbacklog.h"
#include "callbackswitch.h"
#include "callbacktrace.h"
#include "db/connection.h"
#include "db/dberror.h"

#include <QHash>
#include <QSet>

namespace payops {
namespace {

// On a Galera node, what the commit kept: a roll-back whose error reached no statement leaves
// a COMMIT that succeeds with nothing in it (decision 0065,
// docs/decisions/0065-galera-roll-back-without-error.md). Each callback whose row is not there
// is answered 503 and the platform sends it again, as on the single callback's path: no 2xx
// for a callback that is not recorded.
void answerUnkept(const QSqlDatabase &db, const QList<CallbackRequest> &requests,
                  const QList<CallbackRequest> &inserted, RecordBatchResult &result)
{
    if (inserted.isEmpty() || !db::isClusterNode(db))
        return;
    QList<QByteArray> payNos;
    for (const CallbackRequest &request : inserted)
        payNos << request.payNo;
    const QHash<QByteArray, StoredCallback> kept = findCallbacks(db, payNos);
    const QSet<QByteArray> lost = QSet<QByteArray>(payNos.cbegin(), payNos.cend()) -
                                  QSet<QByteArray>(kept.keyBegin(), kept.keyEnd());
    result.inserted -= int(lost.size());
    for (qsizetype i = 0; i < requests.size(); ++i)
        if (lost.contains(requests.at(i).payNo))
            result.answers[i] = CallbackAnswer::failure(
                503, Outcome::Unavailable,
                QStringLiteral("the batch was rolled back on this cluster node; retry later"));
}

} // namespace

RecordBatchResult recordBatch(const QSqlDatabase &db, const QList<CallbackRequest> &requests,
                              const QString &instance, SwitchObserver &switchObserver,
                              const AlsoCommit &alsoCommit)
{
    RecordBatchResult result;
    result.answers.resize(requests.size());
    SwitchReading reading(switchObserver, db);
    db::Transaction transaction(db);
    result.txBegin = nowMicros();

    QList<QByteArray> payNos;
    payNos.reserve(requests.size());
    for (const CallbackRequest &request : requests)
        payNos << request.payNo;
    // The barrier, as for one callback (a flip back to NORMAL waits for this transaction), and
    // what the table holds of the batch's pay_nos: two statements, one round trip.
    SwitchState state;
    QHash<QByteArray, StoredCallback> known;
    db::execTogether(db, {switchForProcessingStatement(), findCallbacksStatement(db, payNos)},
                     [&](qsizetype statement, QSqlQuery &query) {
                         if (statement == 0)
                             state = reading.readFrom(query);
                         else
                             known = storedCallbacks(query);
                     });
    result.recordOnly = state.mode == CallbackMode::RecordOnly;
    if (!result.recordOnly)
        return result;

    // What the table holds, then what this batch adds, each as answerForResend reads it.
    const CallbackAnswer recorded = CallbackAnswer::success(Outcome::Recorded);
    QList<CallbackRequest> toInsert;
    for (qsizetype i = 0; i < requests.size(); ++i) {
        const CallbackRequest &request = requests.at(i);
        const auto stored = known.constFind(request.payNo);
        if (stored != known.constEnd()) {
            result.answers[i] = answerForResend(*stored, request);
            continue;
        }
        StoredCallback added;
        added.status = QStringLiteral("RECORDED");
        added.content = request;
        added.responseCode = recorded.httpStatus;
        added.responseBody = recorded.body;
        known.insert(request.payNo, added);
        toInsert << request;
        result.answers[i] = recorded;
    }
    result.inserted = int(toInsert.size());
    result.committed = nowMicros(); // as the COMMIT is sent: what the traces say
    // The INSERT, what goes with it and the COMMIT: one round trip.
    QStringList writes;
    if (!toInsert.isEmpty())
        writes << insertCallbacksStatement(db, toInsert, QStringLiteral("RECORDED"), instance,
                                           recorded);
    if (alsoCommit)
        writes += alsoCommit(result);
    try {
        transaction.commitWith(writes);
    } catch (const db::Error &error) {
        if (!error.isDuplicateKey())
            throw;
        // Another writer stored one of these pay_nos since the lookup: the handler's path
        // answers each of them from what is stored by then.
        transaction.rollback();
        result.answers.fill(std::nullopt);
        result.inserted = 0;
        result.committed = 0;
        return result;
    }
    answerUnkept(db, requests, toInsert, result);
    return result;
}

} // namespace payops
