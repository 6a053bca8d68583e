#include "incidentfacts.h"

#include "db/connection.h"
#include "domain/statement/reconciliation.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>
#include <stdexcept>

namespace payops {
namespace {

QString sqlTime(const QDateTime &t)
{
    return t.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

bool cancelled(const std::atomic<bool> *cancel)
{
    return cancel && cancel->load();
}

// The extra copies of one side-effect table issued in the window, each with its compensation
// if it has one. The window is a range of the table's created_at index; "an earlier copy
// exists" is a lookup in its (order_id, key) index; the compensation one of
// uk_compensation_target. %1 table, %2 key column, %3 value of one copy in fen, %4 rows
// that count (reversals are corrections, not copies).
const QString kExtraCopies = QStringLiteral(
    "SELECT s.id, s.order_id, s.created_at, %3, s.superseded_by IS NULL, c.id, c.amount_fen, "
    "c.batch_id, "
    "c.created_by, c.created_at, c.ticket, c.reason "
    "FROM %1 s LEFT JOIN compensation c ON c.target_table = '%1' AND c.target_id = s.id "
    "WHERE s.created_at >= ? AND s.created_at < ? AND %4 AND EXISTS ("
    "SELECT 1 FROM %1 k WHERE k.order_id = s.order_id AND k.%2 = s.%2 AND k.id < s.id AND %5)");

struct Reading
{
    IncidentFacts &facts;
    QSet<qint64> orders;
    QMap<QString, CompensationBatchFact> batches;

    void extraCopies(const QSqlDatabase &db, const QString &sql, qint64 *copies)
    {
        QSqlQuery query = db::exec(db, sql, {sqlTime(facts.from), sqlTime(facts.to)});
        const int bucket = facts.series.bucketSeconds;
        while (query.next()) {
            ++*copies;
            const qint64 order = query.value(1).toLongLong();
            const QDateTime at = db::utcDateTime(query.value(2));
            const qint64 fen = query.value(3).toLongLong();
            orders.insert(order);
            facts.copiesFen += fen;
            if (query.value(4).toBool())
                facts.atRiskFen += fen;
            if (!facts.firstDuplicateAt.isValid() || at < facts.firstDuplicateAt) {
                facts.firstDuplicateAt = at;
                facts.firstDuplicateOrder = order;
            }
            facts.lastDuplicateAt = std::max(facts.lastDuplicateAt, at);
            const qint64 index = facts.from.secsTo(at) / bucket;
            if (index >= 0 && index < facts.series.duplicates.size())
                ++facts.series.duplicates[index];
            if (query.value(5).isNull())
                continue;
            ++facts.compensatedCopies;
            facts.compensatedFen += query.value(6).toLongLong();
            CompensationBatchFact &batch = batches[query.value(7).toString()];
            const QDateTime when = db::utcDateTime(query.value(9));
            if (batch.actions == 0) {
                batch.batchId = query.value(7).toString();
                batch.by = query.value(8).toString();
                batch.firstAt = when;
                batch.lastAt = when;
                batch.ticket = query.value(10).toString();
                batch.reason = query.value(11).toString();
            }
            batch.firstAt = std::min(batch.firstAt, when);
            batch.lastAt = std::max(batch.lastAt, when);
            ++batch.actions;
            batch.amountFen += query.value(6).toLongLong();
        }
    }
};

void readDeliveries(const QSqlDatabase &db, IncidentFacts &facts)
{
    // One GROUP BY over a range of idx_trace_received: the window's rows and no others.
    QSqlQuery query = db::exec(
        db,
        QStringLiteral("SELECT FLOOR(TIMESTAMPDIFF(MICROSECOND, ?, received_at) / ?), COUNT(*) "
                       "FROM callback_trace WHERE received_at >= ? AND received_at < ? "
                       "GROUP BY 1"),
        {sqlTime(facts.from), qint64(facts.series.bucketSeconds) * 1000000, sqlTime(facts.from),
         sqlTime(facts.to)});
    while (query.next()) {
        const qint64 index = query.value(0).toLongLong();
        if (index >= 0 && index < facts.series.deliveries.size())
            facts.series.deliveries[index] += query.value(1).toLongLong();
    }
}

void readFlips(const QSqlDatabase &db, IncidentFacts &facts)
{
    facts.switchModeNow =
        db::scalar(db, QStringLiteral("SELECT mode FROM callback_switch WHERE id = 1")).toString();
    // A range of idx_audit_action (action, created_at).
    QSqlQuery query =
        db::exec(db,
                 QStringLiteral("SELECT created_at, actor, reason, before_json, after_json "
                                "FROM ops_audit_log WHERE action = 'switch.flip' "
                                "AND created_at >= ? AND created_at < ? ORDER BY created_at, id"),
                 {sqlTime(facts.from), sqlTime(facts.to)});
    while (query.next()) {
        SwitchFlipFact flip;
        flip.at = db::utcDateTime(query.value(0));
        flip.actor = query.value(1).toString();
        flip.reason = query.value(2).toString();
        const QJsonObject before =
            QJsonDocument::fromJson(query.value(3).toString().toUtf8()).object();
        const QJsonObject after =
            QJsonDocument::fromJson(query.value(4).toString().toUtf8()).object();
        flip.fromMode = before.value(QStringLiteral("mode")).toString();
        flip.toMode = after.value(QStringLiteral("mode")).toString();
        flip.version = after.value(QStringLiteral("version")).toInteger();
        facts.flips << flip;
    }
}

void readReconciliation(const QSqlDatabase &db, IncidentFacts &facts)
{
    // Runs are one per import, a handful a day: walking the primary key down from the newest
    // stops at the window's newest run after the few started since.
    // The run keeps a count per kind in a column named as the kind.
    QStringList counts;
    for (int kind = 0; kind < kFindingKinds; ++kind)
        counts << QStringLiteral("r.") + findingKindName(FindingKind(kind));
    QSqlQuery run =
        db::exec(db,
                 QStringLiteral(
                     "SELECT r.id, r.started_at, r.started_by, r.finished_at IS NOT NULL, "
                     "s.format, s.channel, s.source_file, s.period_start, s.period_end, "
                     "s.line_count, s.error_count, %1 "
                     "FROM reconciliation_run r JOIN platform_statement s ON s.id = r.statement_id "
                     "WHERE r.started_at >= ? AND r.started_at < ? ORDER BY r.id DESC LIMIT 1")
                     .arg(counts.join(QStringLiteral(", "))),
                 {sqlTime(facts.from), sqlTime(facts.to)});
    if (!run.next())
        return;
    ReconciliationFact &r = facts.reconciliation;
    r.present = true;
    r.runId = run.value(0).toLongLong();
    r.startedAt = db::utcDateTime(run.value(1));
    r.startedBy = run.value(2).toString();
    r.finished = run.value(3).toBool();
    r.format = run.value(4).toString();
    r.channel = run.value(5).toString();
    r.sourceFile = run.value(6).toString();
    r.periodStart = db::utcDateTime(run.value(7));
    r.periodEnd = db::utcDateTime(run.value(8));
    r.lines = run.value(9).toLongLong();
    r.unreadableLines = run.value(10).toLongLong();
    for (int kind = 0; kind < kFindingKinds; ++kind)
        r.findings << ReconciliationFindingCount{findingKindName(FindingKind(kind)),
                                                 run.value(11 + kind).toLongLong()};
}

void readAuditHead(const QSqlDatabase &db, IncidentFacts &facts)
{
    QSqlQuery head =
        db::exec(db, QStringLiteral("SELECT last_id, last_hash FROM ops_audit_head WHERE id = 1"));
    if (!head.next())
        return;
    facts.auditHeadId = head.value(0).toLongLong();
    facts.auditHeadHash = head.value(1).toString();
    // One primary-key read: the head must name the log's newest entry and carry its hash.
    // The whole chain is `payops audit verify`'s, run when a person asks.
    QSqlQuery last = db::exec(
        db, QStringLiteral("SELECT id, row_hash FROM ops_audit_log ORDER BY id DESC LIMIT 1"));
    facts.auditHeadMatchesLog = last.next() ? last.value(0).toLongLong() == facts.auditHeadId &&
                                                  last.value(1).toString() == facts.auditHeadHash
                                            : facts.auditHeadId == 0;
}

} // namespace

qint64 ReconciliationFact::totalFindings() const
{
    qint64 total = 0;
    for (const ReconciliationFindingCount &f : findings)
        total += f.count;
    return total;
}

int incidentBucketSeconds(const QDateTime &from, const QDateTime &to)
{
    const qint64 seconds = std::max<qint64>(1, from.secsTo(to));
    if (seconds <= 3 * 3600)
        return 60;
    // Whole minutes, about 180 bars at most.
    return int(((seconds + 179) / 180 + 59) / 60 * 60);
}

IncidentFacts readIncidentFacts(const QSqlDatabase &db, const QDateTime &from, const QDateTime &to,
                                qint64 pointsPerYuan, const std::atomic<bool> *cancel)
{
    if (!from.isValid() || !to.isValid() || from >= to)
        throw std::invalid_argument("the report's window is empty: --from must be before --to");
    if (pointsPerYuan <= 0)
        throw std::invalid_argument("points per yuan must be positive");
    IncidentFacts facts;
    facts.from = from.toUTC();
    facts.to = to.toUTC();
    facts.pointsPerYuan = pointsPerYuan;
    facts.readAt = QDateTime::currentDateTimeUtc();
    facts.database = db::scalar(db, QStringLiteral("SELECT DATABASE()")).toString();
    facts.series.bucketSeconds = incidentBucketSeconds(facts.from, facts.to);
    const qint64 buckets =
        (facts.from.secsTo(facts.to) + facts.series.bucketSeconds - 1) / facts.series.bucketSeconds;
    facts.series.duplicates.fill(0, buckets);
    facts.series.deliveries.fill(0, buckets);

    Reading reading{facts, {}, {}};
    reading.extraCopies(db,
                        kExtraCopies.arg(QStringLiteral("user_coupon"),
                                         QStringLiteral("coupon_template_id"),
                                         QStringLiteral("s.face_value_fen"),
                                         QStringLiteral("1 = 1"), QStringLiteral("1 = 1")),
                        &facts.couponCopies);
    if (cancelled(cancel))
        return facts;
    // A points row's value in fen, as the duplicates page counts it.
    reading.extraCopies(db,
                        kExtraCopies.arg(QStringLiteral("point_log"), QStringLiteral("point_type"),
                                         QStringLiteral("s.points * 100 DIV %1").arg(pointsPerYuan),
                                         QStringLiteral("s.reverses_id IS NULL"),
                                         QStringLiteral("k.reverses_id IS NULL")),
                        &facts.pointCopies);
    facts.duplicateOrders = reading.orders.size();
    facts.batches = reading.batches.values();
    std::sort(facts.batches.begin(), facts.batches.end(),
              [](const CompensationBatchFact &a, const CompensationBatchFact &b) {
                  return a.firstAt < b.firstAt;
              });
    if (cancelled(cancel))
        return facts;
    readDeliveries(db, facts);
    if (cancelled(cancel))
        return facts;
    readFlips(db, facts);
    readReconciliation(db, facts);
    readAuditHead(db, facts);
    return facts;
}

} // namespace payops
