#include "callbacktrace.h"

#include "db/connection.h"

#include <QDateTime>

#include <chrono>

namespace payops {

qint64 nowMicros()
{
    using namespace std::chrono;
    return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

QString formatMicros(qint64 micros)
{
    if (micros <= 0)
        return {};
    const QDateTime time = QDateTime::fromMSecsSinceEpoch(micros / 1000, Qt::UTC);
    return time.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.")) +
           QStringLiteral("%1").arg(micros % 1000000, 6, 10, QLatin1Char('0'));
}

void writeTrace(const QSqlDatabase &db, const CallbackTrace &trace)
{
    writeTraces(db, {trace});
}

void writeTraces(const QSqlDatabase &db, const QList<CallbackTrace> &traces)
{
    if (!traces.isEmpty())
        db::execDirect(db, tracesStatement(db, traces));
}

QString tracesStatement(const QSqlDatabase &db, const QList<CallbackTrace> &traces)
{
    const auto time = [](qint64 micros) {
        return micros > 0 ? QVariant(formatMicros(micros)) : QVariant();
    };
    QList<QVariantList> rows;
    rows.reserve(traces.size());
    for (const CallbackTrace &trace : traces)
        rows << QVariantList{QString::fromUtf8(trace.payNo),
                             trace.orderId,
                             trace.instance,
                             trace.handler,
                             time(trace.received),
                             time(trace.lockAcquired),
                             time(trace.txBegin),
                             time(trace.committed),
                             time(trace.lockReleased),
                             time(trace.responded),
                             trace.outcome,
                             trace.httpStatus,
                             time(trace.forwarded),
                             time(trace.upstreamAnswered),
                             trace.upstreamStatus > 0 ? QVariant(trace.upstreamStatus) : QVariant(),
                             QString::fromUtf8(trace.event)}; // '' for a payment, never NULL
    return QStringLiteral("INSERT INTO callback_trace (pay_no, order_id, instance, handler, "
                          "received_at, lock_acquired_at, tx_begin_at, committed_at, "
                          "lock_released_at, responded_at, outcome, http_status, forwarded_at, "
                          "upstream_answered_at, upstream_status, event) VALUES ") +
           db::valueRows(db, rows);
}

} // namespace payops
