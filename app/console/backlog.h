#pragma once

#include "domain/unmatchedcallbacks.h"
#include "sqltime.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops::console {

// One callback waiting in pay_callback_log: recorded in RECORD_ONLY mode and not processed
// yet, or UNMATCHED (it arrived before its order).
struct RecordedCallback
{
    qint64 id = 0;
    QByteArray payNo;     // VARBINARY; shown as UTF-8
    qint64 orderId = 0;
    qint64 amountFen = 0;
    QString currency;
    QString tradeStatus;
    QString instance;     // which endpoint recorded it
    qint64 receivedMicros = 0;
    QByteArray rawBody;   // byte for byte as the platform sent it
    QString orderStatus;  // unmatched ones: the order's status now, empty while it does not exist
};

struct BacklogSummary
{
    qint64 recorded = 0;
    qint64 oldestMicros = 0;
    qint64 amountFen = 0;
    QString mode;         // the switch: NORMAL | RECORD_ONLY
    qint64 switchVersion = 0;
    UnmatchedCount unmatched;
};

// Keyset paging by id, oldest first: the order in which a drain processes them. Throws db::Error.
QList<RecordedCallback> loadRecordedPage(const QSqlDatabase &db, qint64 afterId, int limit);
QList<RecordedCallback> loadUnmatchedPage(const QSqlDatabase &db, qint64 afterId, int limit);
// Throws db::Error.
BacklogSummary loadBacklogSummary(const QSqlDatabase &db);

} // namespace payops::console
