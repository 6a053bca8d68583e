#pragma once

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops {

// Microseconds since the epoch, UTC; callback_trace keeps DATETIME(6).
qint64 nowMicros();
QString formatMicros(qint64 micros); // 'YYYY-MM-DD HH:MM:SS.ffffff', or empty for 0

// When each step of one callback happened on one instance. The order of lockReleased and
// committed is the evidence: released before committed is the incident's phantom.
struct CallbackTrace
{
    QByteArray payNo;
    QByteArray event; // a later event of the trade (CallbackRequest::event); empty: its payment
    qint64 orderId = 0;
    QString instance;
    QString handler;
    qint64 received = 0;
    qint64 lockAcquired = 0;
    qint64 txBegin = 0;
    qint64 committed = 0;
    qint64 lockReleased = 0;
    qint64 responded = 0;
    QString outcome;
    int httpStatus = 0;
    // A gateway's forward: when it went out, when the upstream answered, and with what (0: none).
    qint64 forwarded = 0;
    qint64 upstreamAnswered = 0;
    int upstreamStatus = 0;

    // The incident's defect: whoever takes the lock next reads uncommitted state.
    bool releasedBeforeCommit() const
    {
        return lockReleased > 0 && committed > 0 && lockReleased < committed;
    }

    // What the delivery was of, as the evidence names it: its pay_no, and a later event's name
    // beside it.
    QByteArray subject() const { return event.isEmpty() ? payNo : payNo + " · " + event; }
};

// Throws db::Error.
void writeTrace(const QSqlDatabase &db, const CallbackTrace &trace);
// A record-only batch's traces, one statement for all of them. Throws db::Error.
void writeTraces(const QSqlDatabase &db, const QList<CallbackTrace> &traces);
// Its statement (at least one trace), for a transaction that sends it with others.
QString tracesStatement(const QSqlDatabase &db, const QList<CallbackTrace> &traces);

} // namespace payops
