#pragma once

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <atomic>

namespace payops {

// The facts of one incident, read from the database for a window [from, to), as plain values:
// what the incident report prints, and nothing it has to ask the database for again. Every
// read is an index range on time or a key lookup over the window, never a read of history:
// a report on last night's hour costs the same on a week-old database and a five-year-old one.
//
// "Extra copy": a coupon (order, template) or a points row (order, point type; reversals do
// not count) issued in the window after an earlier copy of the same group, the duplicates
// page's definition. Compensations are those of the window's extra copies, whenever they
// were made: finance asks what was done about this incident's copies, and compensating
// usually comes after the window that is being reported.

struct SwitchFlipFact
{
    QDateTime at; // UTC
    QString actor;
    QString fromMode;
    QString toMode;
    qint64 version = 0;
    QString reason;
};

struct CompensationBatchFact
{
    QString batchId;
    QString by;
    QDateTime firstAt; // UTC
    QDateTime lastAt;
    QString ticket;
    QString reason;
    qint64 actions = 0;
    qint64 amountFen = 0;
};

struct ReconciliationFindingCount
{
    QString kind; // the reconciliation's own word, e.g. missing_ours
    qint64 count = 0;
};

struct ReconciliationFact
{
    bool present = false; // a reconciliation run started in the window
    qint64 runId = 0;
    QDateTime startedAt; // UTC
    QString startedBy;
    bool finished = false;
    QString format;
    QString channel;
    QString sourceFile;
    QDateTime periodStart; // UTC, invalid when the statement has none
    QDateTime periodEnd;
    qint64 lines = 0;
    qint64 unreadableLines = 0;
    QList<ReconciliationFindingCount> findings; // every kind, in the reconciliation's order
    qint64 totalFindings() const;
};

// Counts per bucket from the window's start: bucket i is [from + i * bucketSeconds, ...).
struct IncidentSeries
{
    int bucketSeconds = 60;
    QList<qint64> duplicates; // extra copies issued
    QList<qint64> deliveries; // callbacks received by an instance (callback_trace)
};

struct IncidentFacts
{
    QDateTime from; // UTC, half open
    QDateTime to;
    QDateTime readAt;
    QString database; // the schema's name, to say which database the report is about
    qint64 pointsPerYuan = 100;

    QDateTime firstDuplicateAt; // invalid: no extra copy in the window
    qint64 firstDuplicateOrder = 0;
    QDateTime lastDuplicateAt;
    qint64 duplicateOrders = 0;
    qint64 couponCopies = 0;
    qint64 pointCopies = 0;
    qint64 copiesFen = 0; // what the extra copies were worth when issued
    qint64 atRiskFen = 0; // the extra copies still live now
    qint64 compensatedCopies = 0;
    qint64 compensatedFen = 0; // the compensations' own amounts

    QString switchModeNow;
    QList<SwitchFlipFact> flips;          // in the window, oldest first
    QList<CompensationBatchFact> batches; // oldest first
    ReconciliationFact reconciliation;
    IncidentSeries series;

    qint64 auditHeadId = 0;
    QString auditHeadHash;
    bool auditHeadMatchesLog = false; // the head names the log's last entry and its hash

    qint64 copies() const { return couponCopies + pointCopies; }
};

// Chooses the chart's bucket: one minute up to three hours, then wider, so a chart keeps
// at most about 180 bars.
int incidentBucketSeconds(const QDateTime &from, const QDateTime &to);

// Reads the facts. `from` must be before `to` (std::invalid_argument otherwise). Returns with
// what was read so far when `cancel` is set; the caller knows it asked. Throws db::Error.
IncidentFacts readIncidentFacts(const QSqlDatabase &db, const QDateTime &from, const QDateTime &to,
                                qint64 pointsPerYuan = 100,
                                const std::atomic<bool> *cancel = nullptr);

} // namespace payops
