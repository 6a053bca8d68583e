#pragma once

#include "inspection.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace payops {

// One stored inspection (table inspection_run): when, by whom, from where, whether it was clean,
// its headline figures and its findings as `payops inspect --json` prints them.
struct InspectionRun
{
    qint64 id = 0;
    QDateTime startedAt; // UTC
    QDateTime finishedAt;
    QString runBy;  // CURRENT_USER() of the run's connection
    QString source; // "cli" or "console"
    bool clean = true;
    qint64 duplicateGroups = 0;
    qint64 duplicateExtraCopies = 0;
    qint64 moneyAtRiskFen = 0;
    qint64 unmatched = 0;
    qint64 unmatchedWithOrder = 0;
    qint64 doublePaymentOrders = 0;
    qint64 doublePaymentCallbacks = 0;
    qint64 refundOwedFen = 0;
    qint64 backlog = 0;
    QString findingsJson;

    // A run about to be stored: the report's figures, from `startedAt` (the server's clock,
    // see serverTime()) until now.
    static InspectionRun of(const InspectionReport &report, const QDateTime &startedAt,
                            const QString &source);
};

// The server's UTC clock, which every stored time is read against. Throws db::Error.
QDateTime serverTime(const QSqlDatabase &db);

// What storing a run came to: its id, or why it was not stored.
struct StoredRun
{
    Q_DECLARE_TR_FUNCTIONS(payops::StoredRun)

public:
    qint64 id = 0;
    QString notStored; // one sentence; empty when stored

    bool stored() const { return id > 0; }
};

// Inserts the run with finished_at = now and run_by = CURRENT_USER(). Never throws: a run
// that was made deserves its result even when it cannot be kept (an account without the
// grant, a database not yet migrated to inspection_run, a connection lost at the end), so
// the refusal comes back as `notStored` for the caller to warn about.
StoredRun storeInspectionRun(const QSqlDatabase &db, const InspectionRun &run);

// Up to `limit` runs, newest first, with an id below `beforeId` (0: from the newest): a
// primary-key range, one page at a time. Throws db::Error.
QList<InspectionRun> loadInspectionRuns(const QSqlDatabase &db, qint64 beforeId, int limit);
// The newest run with an id below `beforeId` (0: the newest of all), or none. Throws db::Error.
std::optional<InspectionRun> previousInspectionRun(const QSqlDatabase &db, qint64 beforeId);

} // namespace payops
