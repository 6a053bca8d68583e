#include "unsafehandler.h"

#include "callbacklog.h"
#include "callbackswitch.h"
#include "db/connection.h"
#include "db/namedlock.h"

#include <QThread>

namespace payops {

UnsafeHandler::UnsafeHandler(QString instance, int commitDelayMs, int lockTimeoutSeconds)
    : m_instance(std::move(instance))
    , m_commitDelayMs(commitDelayMs)
    , m_lockTimeoutSeconds(lockTimeoutSeconds)
{
}

CallbackAnswer UnsafeHandler::handle(const QSqlDatabase &db, const CallbackRequest &request,
                                     CallbackTrace &trace)
{
    // ❌ The incident's shape. tx.begin() by the proxy ...
    db::Transaction transaction(db);
    trace.txBegin = nowMicros();
    // The record-only switch stands in front of any handler, this one too: it is how the
    // bleeding is stopped before the handler is fixed. The same barrier as the safe handler's.
    if (readSwitchForProcessing(db).mode == CallbackMode::RecordOnly) {
        const CallbackAnswer recorded =
            logCallback(db, request, CallbackAnswer::success(Outcome::Recorded));
        transaction.commit();
        trace.committed = nowMicros();
        return recorded;
    }
    CallbackAnswer answer;
    {
        db::NamedLock lock(db, QStringLiteral("payops:order:%1").arg(request.orderId));
        if (!lock.acquire(m_lockTimeoutSeconds))
            return CallbackAnswer::failure(503, Outcome::Unavailable,
                                           QStringLiteral("lock timeout"));
        trace.lockAcquired = nowMicros();
        try {
            answer = onPaySuccess(db, request);
        } catch (...) {
            lock.release(); // finally { lock.unlock(); }
            throw;
        }
        lock.release(); // finally { lock.unlock(); } -- the transaction is still open
        trace.lockReleased = nowMicros();
    }
    // ... and tx.commit() by the proxy, after the method (and its finally) returned.
    if (m_commitDelayMs > 0)
        QThread::msleep(static_cast<unsigned long>(m_commitDelayMs));
    transaction.commit();
    trace.committed = nowMicros();
    return answer;
}

CallbackAnswer UnsafeHandler::onPaySuccess(const QSqlDatabase &db, const CallbackRequest &request)
{
    // The callback is logged last, as in code that logs it once the business is done.
    const auto logCallback = [&](const CallbackAnswer &answer) {
        return this->logCallback(db, request, answer);
    };
    if (!request.isSuccess())
        return logCallback(CallbackAnswer::success(Outcome::Ignored));

    // Check point 1: an in-memory decision on a plain snapshot read.
    QSqlQuery order = db::exec(
        db, QStringLiteral("SELECT status, user_id FROM orders WHERE id = ?"), {request.orderId});
    if (!order.next() || order.value(0).toString() != QLatin1String("PENDING"))
        return logCallback(
            CallbackAnswer::success(Outcome::Rejected, QStringLiteral("order_not_pending")));
    const qint64 userId = order.value(1).toLongLong();

    // The CAS waits for the other transaction's row lock and may move 0 rows; the code
    // does not care. The attempt is logged as evidence only.
    QSqlQuery cas = db::exec(db,
                             QStringLiteral("UPDATE orders SET status = 'PAID', paid_at = NOW(3), "
                                            "pay_no = ? WHERE id = ? AND status = 'PENDING'"),
                             {request.payNo, request.orderId});
    const bool moved = cas.numRowsAffected() == 1;
    db::exec(
        db,
        QStringLiteral("INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, "
                       "accepted, reason, "
                       "instance, created_at) VALUES (?, ?, 'PENDING', 'PAID', ?, ?, ?, NOW(3))"),
        {request.orderId, request.payNo, moved ? 1 : 0,
         moved ? QString() : QStringLiteral("affected_rows_ignored"), m_instance});

    db::exec(db,
             QStringLiteral("INSERT INTO user_coupon (user_id, order_id, coupon_template_id, "
                            "status, face_value_fen, pay_no) "
                            "SELECT ?, ?, t.id, 'ISSUED', t.face_value_fen, ? FROM coupon_template "
                            "t WHERE t.active = 1"),
             {userId, request.orderId, request.payNo});
    db::exec(db,
             QStringLiteral(
                 "INSERT INTO point_log (user_id, order_id, point_type, points, pay_no) "
                 "SELECT ?, ?, r.point_type, r.points, ? FROM point_rule r WHERE r.active = 1"),
             {userId, request.orderId, request.payNo});
    db::exec(db,
             QStringLiteral(
                 "UPDATE users SET points_balance = points_balance + "
                 "(SELECT COALESCE(SUM(points), 0) FROM point_rule WHERE active = 1) WHERE id = ?"),
             {userId});
    return logCallback(CallbackAnswer::success(Outcome::Processed));
}

// The unique index works; nobody looks at what INSERT IGNORE did.
CallbackAnswer UnsafeHandler::logCallback(const QSqlDatabase &db, const CallbackRequest &request,
                                          const CallbackAnswer &answer)
{
    const bool recorded =
        answer.outcome == Outcome::Recorded; // left for the drain, not processed yet
    db::exec(db,
             QStringLiteral(
                 "INSERT IGNORE INTO pay_callback_log (pay_no, order_id, raw_body, amount_fen, "
                 "currency, channel, "
                 "trade_status, status, response_body, instance, platform_paid_at, processed_at) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, %1)")
                 .arg(recorded ? QStringLiteral("NULL") : QStringLiteral("NOW(3)")),
             {request.payNo, request.orderId, request.rawBody, request.amountFen, request.currency,
              request.channel, request.tradeStatus,
              recorded ? QStringLiteral("RECORDED") : QStringLiteral("PROCESSED"),
              QString::fromUtf8(answer.body), m_instance, platformPaidAt(request.paidAt)});
    return answer;
}

} // namespace payops
