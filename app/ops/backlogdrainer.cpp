#include "backlogdrainer.h"

#include "auditlog.h"
#include "callbackswitch.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "service/callbackanswer.h"
#include "service/callbacklog.h"
#include "service/callbackrequest.h"
#include "service/callbacktrace.h"
#include "service/paymentapplier.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace payops {

namespace {

enum class Step { Processed, Rejected, Ignored, Empty, SwitchOn };

// One callback, one transaction.
Step drainOne(const QSqlDatabase &db, const QString &fromState, const DrainOptions &options)
{
    CallbackTrace trace;
    trace.received = nowMicros();
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly && !options.force)
        return Step::SwitchOn;
    QSqlQuery next = db::exec(db, QStringLiteral(
        "SELECT id, raw_body FROM pay_callback_log WHERE status = 'RECORDED' ORDER BY id LIMIT 1 "
        "FOR UPDATE SKIP LOCKED"));
    if (!next.next())
        return Step::Empty;
    const qint64 id = next.value(0).toLongLong();
    QString parseError;
    const auto request = CallbackRequest::parse(next.value(1).toByteArray(), &parseError);

    Step step = Step::Rejected;
    QString reason;
    CallbackAnswer answer;
    if (!request) { // was valid when recorded; a hand-edited row must not stop the drain
        reason = QStringLiteral("unreadable_record");
        answer = CallbackAnswer::success(Outcome::Rejected, reason);
    } else if (!request->isSuccess()) {
        step = Step::Ignored;
        reason = QStringLiteral("trade_status ") + request->tradeStatus;
        answer = CallbackAnswer::success(Outcome::Ignored, reason);
    } else {
        const PaymentResult payment = applyPayment(db, *request, fromState, options.worker);
        step = payment.applied ? Step::Processed : Step::Rejected;
        reason = payment.reason;
        answer = payment.applied ? CallbackAnswer::success(Outcome::Processed)
                                 : CallbackAnswer::success(Outcome::Rejected, reason);
    }
    const QString status = step == Step::Processed ? QStringLiteral("PROCESSED")
                           : step == Step::Ignored ? QStringLiteral("IGNORED")
                                                   : QStringLiteral("REJECTED");
    finishCallback(db, id, status, reason, options.worker, answer);
    transaction.commit();

    if (request) {
        trace.payNo = request->payNo;
        trace.orderId = request->orderId;
        trace.instance = options.worker;
        trace.handler = QStringLiteral("drain");
        trace.committed = trace.responded = nowMicros();
        trace.outcome = QString::fromLatin1(outcomeLabel(answer.outcome));
        trace.httpStatus = 200;
        writeTrace(db, trace);
    }
    return step;
}

// One entry per drain that processed anything, under the database's name for who ran it:
// each callback's own trail is its pay_callback_log row and its callback_trace.
void auditDrain(const QSqlDatabase &db, const DrainOptions &options, const DrainResult &result, const QString &stop)
{
    if (result.handled() == 0)
        return;
    const QJsonObject after{{QStringLiteral("processed"), result.processed},
                            {QStringLiteral("rejected"), result.rejected},
                            {QStringLiteral("ignored"), result.ignored},
                            {QStringLiteral("worker"), options.worker},
                            {QStringLiteral("stopped"), stop}};
    appendAudit(db, QStringLiteral("backlog.drain"), QStringLiteral("pay_callback_log"),
                options.force ? QStringLiteral("forced while RECORD_ONLY") : QString(), QString(), QString(),
                QString::fromUtf8(QJsonDocument(after).toJson(QJsonDocument::Compact)));
}

void drainLoop(const QSqlDatabase &db, const DrainOptions &options, DrainResult &result)
{
    const QString fromState = paymentFromState(db);
    int deadlocksInARow = 0;
    while (options.limit == 0 || result.handled() < options.limit) {
        if (options.cancel && options.cancel->load()) {
            result.cancelled = true;
            break;
        }
        Step step;
        try {
            step = drainOne(db, fromState, options);
            deadlocksInARow = 0;
        } catch (const db::Error &error) {
            // A deadlock rolled the claim back; the row is RECORDED again and is retried.
            if (!error.isDeadlock() || ++deadlocksInARow == 3)
                throw;
            continue;
        }
        if (step == Step::Empty)
            break;
        if (step == Step::SwitchOn) {
            result.stoppedBySwitch = true;
            break;
        }
        ++(step == Step::Processed ? result.processed : step == Step::Ignored ? result.ignored : result.rejected);
        if (options.progress)
            options.progress(result);
    }
}

} // namespace

DrainResult drainBacklog(const QSqlDatabase &db, const DrainOptions &options)
{
    DrainResult result;
    try {
        drainLoop(db, options, result);
    } catch (const db::Error &) {
        try {
            auditDrain(db, options, result, QStringLiteral("error"));
        } catch (const db::Error &) {
            // The connection that failed the drain fails its audit too; the first error counts.
        }
        throw;
    }
    auditDrain(db, options, result,
               result.stoppedBySwitch ? QStringLiteral("switch") : result.cancelled ? QStringLiteral("cancelled") : QString());
    return result;
}

} // namespace payops
