#include "backlogdrainer.h"

#include "callbackswitch.h"
#include "db/connection.h"
#include "service/callbackanswer.h"
#include "service/callbacklog.h"
#include "service/callbackrequest.h"
#include "service/callbacktrace.h"
#include "service/paymentapplier.h"

namespace payops {

DrainResult drainBacklog(db::Connection &connection, const DrainOptions &options)
{
    const QSqlDatabase db = connection.database();
    const QString fromState = paymentFromState(db);
    DrainResult result;
    while (options.limit == 0 || result.processed + result.rejected + result.ignored < options.limit) {
        if (options.cancel && options.cancel->load()) {
            result.cancelled = true;
            break;
        }
        CallbackTrace trace;
        trace.received = nowMicros();
        db::Transaction transaction(db);
        trace.txBegin = nowMicros();
        if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly && !options.force) {
            result.stoppedBySwitch = true;
            break;
        }
        QSqlQuery next = db::exec(db, QStringLiteral(
            "SELECT id, raw_body FROM pay_callback_log WHERE status = 'RECORDED' ORDER BY id LIMIT 1 "
            "FOR UPDATE SKIP LOCKED"));
        if (!next.next())
            break;
        const qint64 id = next.value(0).toLongLong();
        QString parseError;
        const auto request = CallbackRequest::parse(next.value(1).toByteArray(), &parseError);

        QString status;
        QString reason;
        CallbackAnswer answer;
        if (!request) { // was valid when recorded; a hand-edited row must not stop the drain
            status = QStringLiteral("REJECTED");
            reason = QStringLiteral("unreadable_record");
            answer = CallbackAnswer::success(Outcome::Rejected, reason);
        } else if (!request->isSuccess()) {
            status = QStringLiteral("IGNORED");
            reason = QStringLiteral("trade_status ") + request->tradeStatus;
            answer = CallbackAnswer::success(Outcome::Ignored, reason);
        } else {
            const PaymentResult payment = applyPayment(db, *request, fromState, options.worker);
            status = payment.applied ? QStringLiteral("PROCESSED") : QStringLiteral("REJECTED");
            reason = payment.reason;
            answer = payment.applied ? CallbackAnswer::success(Outcome::Processed)
                                     : CallbackAnswer::success(Outcome::Rejected, reason);
        }
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
        if (status == QLatin1String("PROCESSED"))
            ++result.processed;
        else if (status == QLatin1String("IGNORED"))
            ++result.ignored;
        else
            ++result.rejected;
        if (options.progress)
            options.progress(result);
    }
    return result;
}

} // namespace payops
