#pragma once

#include "orderlist.h"

#include <QList>
#include <QSqlDatabase>
#include <QStringList>

namespace payops::console {

// One callback's steps on one instance, from callback_trace (microseconds since the epoch;
// 0 where a step never happened).
struct CallbackTrace
{
    QByteArray payNo;
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

    // The incident's defect: whoever takes the lock next reads uncommitted state.
    bool releasedBeforeCommit() const { return lockReleased > 0 && committed > 0 && lockReleased < committed; }
};

// Anything else that happened to the order, placed on a lane.
struct EvidenceEvent
{
    enum class Kind { Callback, Attempt, Coupon, Points, Compensation };
    Kind kind = Kind::Callback;
    QString lane;      // service instance, or "side effects" / "operators"
    qint64 micros = 0;
    QString text;
    bool bad = false;  // rejected attempt, duplicate copy
};

struct OrderEvidence
{
    bool found = false;
    OrderRow order;
    QList<CallbackTrace> traces;
    QList<EvidenceEvent> events;
    QStringList findings; // the verdicts, in words
    QStringList lanes;    // in order of first appearance
    qint64 originMicros = 0; // the first thing that happened; offsets count from here
};

// Throws db::Error.
OrderEvidence loadOrderEvidence(const QSqlDatabase &db, qint64 orderId);

// "+41.500 ms" relative to origin.
QString formatOffset(qint64 micros, qint64 origin);
// "45.000 ms", "2 h 3 min"
QString formatGap(qint64 micros);

} // namespace payops::console
