#include "mappedcompensation.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensationrequest.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QUuid>

namespace payops::mapping {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct MappedCompensation
{
    Q_DECLARE_TR_FUNCTIONS(payops::mapping::MappedCompensation)
};

QString q(const QString &name)
{
    return db::quoteIdentifier(name);
}

// One copy's value as an integer: yuan through DECIMAL arithmetic (exact), never a double.
QString integerValue(const SideEffectMapping &se, const QString &alias)
{
    const QString column = alias + q(se.value);
    return se.valueUnit == Unit::Yuan ? QStringLiteral("CAST(%1 * 100 AS SIGNED)").arg(column)
                                      : QStringLiteral("CAST(%1 AS SIGNED)").arg(column);
}

const QString kRecorded =
    QStringLiteral("SELECT mc.target_id FROM mapped_compensation mc WHERE mc.business_table = ?");

// The statement that takes the copies `ids` back ("?" for its shape): an UPDATE with the
// mapping's SET clause, or an INSERT ... SELECT of the reversed row from the row itself, its
// value negated, its user, order and key copied, its creation time now, and the reverse_set
// columns as the mapping writes them.
QString takeBack(const Mapping &mapping, const SideEffectMapping &se, const QString &ids)
{
    const QString table = mapping.table(se.table);
    if (se.compensate == Compensate::Freeze)
        return QStringLiteral("UPDATE %1 SET %2 WHERE %3 IN (%4)")
            .arg(table, se.freeze, q(se.id), ids);
    QStringList columns{q(se.user), q(se.order)};
    QStringList values = columns;
    for (const QString &key : se.key) {
        columns << q(key);
        values << q(key);
    }
    columns << q(se.value);
    values << QLatin1Char('-') + q(se.value);
    bool createdSet = false;
    for (const auto &[column, expression] : se.reverseSet)
        createdSet = createdSet || column == se.createdAt;
    if (!createdSet && !columns.contains(q(se.createdAt))) {
        columns << q(se.createdAt);
        values << QStringLiteral("NOW()");
    }
    for (const auto &[column, expression] : se.reverseSet) {
        columns << q(column);
        values << QLatin1Char('(') + expression + QLatin1Char(')');
    }
    return QStringLiteral("INSERT INTO %1 (%2) SELECT %3 FROM %1 WHERE %4 = %5")
        .arg(table, columns.join(QStringLiteral(", ")), values.join(QStringLiteral(", ")), q(se.id),
             ids);
}

// The rows of `ids` that still count, read under row locks: live and not recorded by anyone
// (the record is read with a lock too, so a second compensator that waited here sees the first
// one's rows once it committed); and, for copies to take back, not used.
enum class Still { Counts, ToTakeBack };
QSet<qint64> lockStillLive(const QSqlDatabase &db, const Mapping &mapping,
                           const SideEffectMapping &se, const QList<qint64> &ids, Still still)
{
    const QString list = db::idList(ids);
    QString sql = QStringLiteral("SELECT %1 FROM %2 WHERE %1 IN (%3) AND (%4)")
                      .arg(q(se.id), mapping.table(se.table), list, se.live);
    if (still == Still::ToTakeBack && !se.used.isEmpty())
        sql += QStringLiteral(" AND NOT (%1)").arg(se.used);
    QSqlQuery rows = db::exec(db, sql + QStringLiteral(" FOR UPDATE"));
    QSet<qint64> live;
    while (rows.next())
        live.insert(rows.value(0).toLongLong());
    QSqlQuery recorded = db::exec(
        db, kRecorded + QStringLiteral(" AND mc.target_id IN (%1) LOCK IN SHARE MODE").arg(list),
        {businessTable(db, mapping, se)});
    while (recorded.next())
        live.remove(recorded.value(0).toLongLong());
    return live;
}

const QString kRecordRows = QStringLiteral(
    "INSERT INTO mapped_compensation (business_table, target_id, side_effect, kept_id, order_id, "
    "action, reversal_id, value_fen, points, amount_fen, mapping_sha256, statement, batch_id, "
    "request_id, reason, ticket, created_by) VALUES ");

// Asks the server, by EXPLAIN, whether the account may run what compensating `se` runs, and
// names the grant that is missing before anything is written.
void checkGrants(const QSqlDatabase &db, const Mapping &mapping, const SideEffectMapping &se)
{
    const auto refused = [&db](const QString &statement) {
        try {
            db::exec(db, QStringLiteral("EXPLAIN ") + statement);
            return false;
        } catch (const db::Error &error) {
            if (error.isAccessDenied())
                return true;
            throw;
        }
    };
    const QString table = mapping.table(se.table);
    const QString write =
        se.compensate == Compensate::Freeze ? QStringLiteral("UPDATE") : QStringLiteral("INSERT");
    if (refused(QStringLiteral("SELECT %1 FROM %2 WHERE %1 = 0 FOR UPDATE").arg(q(se.id), table)))
        throw db::Error(MappedCompensation::tr("this account may not read %1, which compensating "
                                               "%2 needs: the team's DBA grants it with GRANT "
                                               "SELECT ON %1 TO the account")
                            .arg(table, se.name));
    if (refused(takeBack(mapping, se, QStringLiteral("0"))))
        throw db::Error(MappedCompensation::tr("this account may not %1 %2, which compensating %3 "
                                               "needs: the team's DBA grants it with GRANT %1 ON "
                                               "%2 TO the account; nothing was changed")
                            .arg(write, table, se.name));
    if (refused(kRecordRows + QStringLiteral("('', 0, '', 0, 0, 'FREEZE', NULL, 0, 0, 0, '', '', "
                                             "'', NULL, '', '', '')")) ||
        !mayAppendAudit(db))
        throw db::Error(MappedCompensation::tr("this account may not record a compensation in "
                                               "payops's own database: it needs the role "
                                               "payops_operator; nothing was changed"));
}

QString json(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// What one copy weighs against the four-eyes allowance, in fen.
qint64 amountFen(const MappedCopy &copy, qint64 fenPerHundredPoints)
{
    return copy.valueFen + copy.points * fenPerHundredPoints / 100;
}

// The copies of `copies` whose mapped_compensation row is there for `batchId`.
QSet<qint64> recordedIn(const QSqlDatabase &db, const QString &table, const QString &batchId,
                        const QList<MappedCopy> &copies)
{
    QList<qint64> ids;
    for (const MappedCopy &copy : copies)
        ids << copy.targetId;
    QSqlQuery rows = db::exec(db,
                              QStringLiteral("SELECT target_id FROM mapped_compensation WHERE "
                                             "business_table = ? AND batch_id = ? AND "
                                             "target_id IN (%1)")
                                  .arg(db::idList(ids)),
                              {table, batchId});
    QSet<qint64> there;
    while (rows.next())
        there.insert(rows.value(0).toLongLong());
    return there;
}

// On a Galera node, the batch's record rows must still be there before COMMIT, as for a
// compensation of payops's own tables: a conflict from another node can roll the transaction
// back without an error reaching any statement (decision 0065), and the freezes and reversals
// would then commit with no record to say so, to be taken back again by the next run.
void requireRecordedRows(const QSqlDatabase &db, const QString &table, const QString &batchId,
                         const QList<MappedCopy> &done)
{
    if (db::isClusterNode(db) && recordedIn(db, table, batchId, done).size() != done.size())
        throw db::rolledBackByAnotherNode(QStringLiteral("a compensation batch"));
}

// One batch of one side effect, in the caller's transaction: returns the copies it took back.
QList<MappedCopy> applyBatch(const QSqlDatabase &db, const Mapping &mapping,
                             const SideEffectMapping &se, const QList<MappedCopy> &batch,
                             const MappedCompensationPlan &plan, const QString &batchId,
                             const QString &reason, const QString &ticket)
{
    QList<qint64> ids;
    QList<qint64> keptIds;
    for (const MappedCopy &copy : batch) {
        ids << copy.targetId;
        keptIds << copy.keptId;
    }
    const QSet<qint64> live = lockStillLive(db, mapping, se, ids, Still::ToTakeBack);
    // The copy its group keeps must still count as well: had the team voided it since the
    // plan, taking the others back would leave the customer none. Locked after the copies to
    // take back, in every compensator alike.
    const QSet<qint64> keptLive = lockStillLive(db, mapping, se, keptIds, Still::Counts);
    QList<MappedCopy> done;
    for (MappedCopy copy : batch) {
        if (!live.contains(copy.targetId) || !keptLive.contains(copy.keptId))
            continue;
        // One row at a time, so that LAST_INSERT_ID() names each reversal row whatever the
        // server's auto-increment lock mode.
        if (copy.action == MappedAction::Reverse)
            copy.reversalId = db::exec(db, takeBack(mapping, se, QString::number(copy.targetId)))
                                  .lastInsertId()
                                  .toLongLong();
        done << copy;
    }
    if (done.isEmpty())
        return done;
    const QString table = businessTable(db, mapping, se);
    const QString statement = mappedStatement(mapping, se);
    const QString sha = QString::fromLatin1(mapping.sha256);
    QList<QVariantList> rows;
    QList<qint64> frozen;
    for (const MappedCopy &copy : done) {
        rows << QVariantList{table,
                             copy.targetId,
                             se.name,
                             copy.keptId,
                             copy.orderId,
                             copy.action == MappedAction::Freeze ? QStringLiteral("FREEZE")
                                                                 : QStringLiteral("REVERSE"),
                             copy.reversalId > 0 ? QVariant(copy.reversalId) : QVariant(),
                             copy.valueFen,
                             copy.points,
                             amountFen(copy, plan.fenPerHundredPoints),
                             sha,
                             statement,
                             batchId,
                             plan.requestId > 0 ? QVariant(plan.requestId) : QVariant(),
                             reason,
                             ticket};
        if (copy.action == MappedAction::Freeze)
            frozen << copy.targetId;
    }
    // Who is the server's word for the account, not something the client says.
    try {
        db::execDirect(db,
                       kRecordRows + db::valueRows(db, rows, QStringLiteral(",CURRENT_USER()")));
    } catch (const db::Error &error) {
        // Another compensator recorded one of these copies after the locked read above: on a
        // Galera node another node's record is applied here whatever this transaction read
        // under lock, and meets uk_mapped_target instead of a deadlock. Run the batch again
        // (runAudited), which reads that record and leaves the copy to it.
        if (error.isDuplicateKey())
            throw db::rolledBackByAnotherNode(QStringLiteral("a compensation batch"));
        throw;
    }
    if (!frozen.isEmpty())
        db::execDirect(db, takeBack(mapping, se, db::idList(frozen)));
    // One audit entry per copy, chained together (one move of the chain's head).
    QList<QVariantList> entries;
    for (const MappedCopy &copy : done) {
        const bool freeze = copy.action == MappedAction::Freeze;
        QJsonObject after{
            {QStringLiteral("side_effect"), se.name},     {QStringLiteral("kept_id"), copy.keptId},
            {QStringLiteral("order_id"), copy.orderId},   {QStringLiteral("key"), copy.key},
            {QStringLiteral("value_fen"), copy.valueFen}, {QStringLiteral("points"), copy.points},
            {QStringLiteral("mapping_sha256"), sha},      {QStringLiteral("statement"), statement}};
        if (!freeze)
            after.insert(QStringLiteral("reversal_id"), copy.reversalId);
        entries << QVariantList{
            freeze ? QStringLiteral("compensation.mapped_freeze")
                   : QStringLiteral("compensation.mapped_reverse"),
            (table + QLatin1Char(':') + QString::number(copy.targetId)).left(255),
            reason,
            ticket,
            json({{QStringLiteral("id"), copy.targetId}, {QStringLiteral("live"), true}}),
            json(after)};
    }
    openAuditBatch(db);
    db::execDirect(db, auditBatchInsert() + QStringLiteral("VALUES ") + db::valueRows(db, entries));
    appendAuditBatch(db);
    requireRecordedRows(db, table, batchId, done);
    return done;
}

} // namespace

QString mappedActionName(MappedAction action)
{
    switch (action) {
    case MappedAction::Freeze:
        return QStringLiteral("freeze");
    case MappedAction::Reverse:
        return QStringLiteral("reverse");
    case MappedAction::Finance:
        return QStringLiteral("finance");
    }
    return {};
}

int MappedCompensationPlan::count(const QString &sideEffect, MappedAction action) const
{
    int n = 0;
    for (const MappedCopy &copy : copies)
        n += copy.sideEffect == sideEffect && copy.action == action;
    return n;
}

qint64 MappedCompensationPlan::valueFen(const QString &sideEffect, MappedAction action) const
{
    return sum(sideEffect, action, &MappedCopy::valueFen);
}

qint64 MappedCompensationPlan::points(const QString &sideEffect, MappedAction action) const
{
    return sum(sideEffect, action, &MappedCopy::points);
}

qint64 MappedCompensationPlan::moneyFen() const
{
    qint64 fen = 0;
    for (const MappedCopy &copy : copies) {
        if (copy.action != MappedAction::Finance)
            fen += amountFen(copy, fenPerHundredPoints);
    }
    return fen;
}

int MappedCompensationPlan::count(MappedAction action) const
{
    int n = 0;
    for (const MappedCopy &copy : copies)
        n += copy.action == action;
    return n;
}

qint64 MappedCompensationPlan::sum(const QString &sideEffect, MappedAction action,
                                   qint64 MappedCopy::*field) const
{
    qint64 total = 0;
    for (const MappedCopy &copy : copies) {
        if (copy.sideEffect == sideEffect && copy.action == action)
            total += copy.*field;
    }
    return total;
}

QString mappedStatement(const Mapping &mapping, const SideEffectMapping &sideEffect,
                        const QString &ids)
{
    return takeBack(mapping, sideEffect, ids);
}

MappedCompensationPlan planMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                                              const MappedScope &scope,
                                              const std::atomic<bool> *cancel)
{
    MappedCompensationPlan plan;
    if (!scope.everything && scope.orders.isEmpty())
        return plan;
    for (const SideEffectMapping &se : mapping.sideEffects) {
        if (cancel && cancel->load()) {
            plan.cancelled = true;
            return plan;
        }
        const QString table = mapping.table(se.table);
        // The group's columns under names of payops's own, so that the trusted conditions,
        // which name the team's columns unqualified, never meet two of the same name.
        QStringList groupColumns{q(se.order)};
        QStringList groupAs{q(se.order) + QStringLiteral(" AS payops_order")};
        QStringList joinOn{QStringLiteral("k.payops_order = c.") + q(se.order)};
        QStringList keyValues;
        for (int i = 0; i < se.key.size(); ++i) {
            groupColumns << q(se.key[i]);
            groupAs << q(se.key[i]) + QStringLiteral(" AS payops_key%1").arg(i);
            joinOn << QStringLiteral("k.payops_key%1 <=> c.").arg(i) + q(se.key[i]);
            keyValues << QStringLiteral("c.") + q(se.key[i]);
        }
        const QString orders =
            scope.everything
                ? QString()
                : QStringLiteral(" AND %1 IN (%2)").arg(q(se.order), db::idList(scope.orders));
        const QString unrecorded = QStringLiteral(" NOT IN (") + kRecorded + QLatin1Char(')');
        const QString used = se.used.isEmpty()
                                 ? QStringLiteral("0")
                                 : QLatin1Char('(') + se.used + QStringLiteral(") IS TRUE");
        const QString key = keyValues.isEmpty()
                                ? QStringLiteral("''")
                                : QStringLiteral("CONCAT_WS('/', ") +
                                      keyValues.join(QStringLiteral(", ")) + QLatin1Char(')');
        // Concatenated, not arg()-ed: the trusted conditions may hold a '%' of their own.
        const QString live = QLatin1Char('(') + se.live + QLatin1Char(')');
        const QString id = q(se.id);
        const QString sql =
            QStringLiteral("SELECT c.") + id + QStringLiteral(", k.payops_kept, c.") + q(se.order) +
            QStringLiteral(", c.") + q(se.user) + QStringLiteral(", ") +
            integerValue(se, QStringLiteral("c.")) + QStringLiteral(", ") + used +
            QStringLiteral(", ") + key + QStringLiteral(" FROM ") + table +
            QStringLiteral(" c JOIN (SELECT ") + groupAs.join(QStringLiteral(", ")) +
            QStringLiteral(", MIN(") + id + QStringLiteral(") AS payops_kept FROM ") + table +
            QStringLiteral(" WHERE ") + live + QStringLiteral(" AND ") + id + unrecorded + orders +
            QStringLiteral(" GROUP BY ") + groupColumns.join(QStringLiteral(", ")) +
            QStringLiteral(" HAVING COUNT(*) > 1) k ON ") + joinOn.join(QStringLiteral(" AND ")) +
            QStringLiteral(" WHERE ") + live + QStringLiteral(" AND c.") + id +
            QStringLiteral(" <> k.payops_kept AND c.") + id + unrecorded +
            QStringLiteral(" ORDER BY c.") + id;
        const QString recordedAs = businessTable(db, mapping, se);
        QSqlQuery rows = db::exec(db, sql, {recordedAs, recordedAs});
        while (rows.next()) {
            MappedCopy copy;
            copy.sideEffect = se.name;
            copy.targetId = rows.value(0).toLongLong();
            copy.keptId = rows.value(1).toLongLong();
            copy.orderId = rows.value(2).toLongLong();
            copy.userId = rows.value(3).toLongLong();
            (se.valueUnit == Unit::Points ? copy.points : copy.valueFen) =
                rows.value(4).toLongLong();
            copy.key = rows.value(6).toString();
            copy.action = rows.value(5).toBool()                ? MappedAction::Finance
                          : se.compensate == Compensate::Freeze ? MappedAction::Freeze
                                                                : MappedAction::Reverse;
            plan.copies << copy;
        }
    }
    return plan;
}

MappedCompensationOutcome
executeMappedCompensation(const QSqlDatabase &db, const Mapping &mapping,
                          const MappedCompensationPlan &plan, const QString &reason,
                          const QString &ticket, int batchSize, const std::atomic<bool> *cancel,
                          const std::function<void(int done, int total)> &progress)
{
    if (reason.trimmed().isEmpty() || ticket.trimmed().isEmpty())
        throw db::Error(MappedCompensation::tr("a compensation needs a reason and a ticket"));
    MappedCompensationOutcome outcome;
    outcome.batchId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    QList<QPair<const SideEffectMapping *, QList<MappedCopy>>> work;
    int total = 0;
    for (const SideEffectMapping &se : mapping.sideEffects) {
        QList<MappedCopy> copies;
        for (const MappedCopy &copy : plan.copies) {
            if (copy.sideEffect != se.name)
                continue;
            if (copy.action == MappedAction::Finance)
                outcome.finance << copy;
            else
                copies << copy;
        }
        if (copies.isEmpty())
            continue;
        checkGrants(db, mapping, se);
        total += int(copies.size());
        work.append({&se, copies});
    }
    int handled = 0;
    for (const auto &[se, copies] : work) {
        for (qsizetype start = 0; start < copies.size(); start += batchSize) {
            if (cancel && cancel->load()) {
                outcome.cancelled = true;
                return outcome;
            }
            const QList<MappedCopy> batch = copies.mid(start, batchSize);
            // Each run locks and checks its copies again (runAudited).
            const QList<MappedCopy> applied = runAudited([&] {
                db::Transaction transaction(db);
                const QList<MappedCopy> takenBack =
                    applyBatch(db, mapping, *se, batch, plan, outcome.batchId,
                               reason.trimmed().left(255), ticket.trimmed().left(64));
                transaction.commit();
                return takenBack;
            });
            // On a Galera node, read back: a conflict from another node after the check above
            // can roll the batch back with no error, and the COMMIT then succeeds with nothing
            // in it (decision 0065). Only what stayed counts as done.
            const bool readBack = !applied.isEmpty() && db::isClusterNode(db);
            const QSet<qint64> kept =
                readBack ? recordedIn(db, businessTable(db, mapping, *se), outcome.batchId, applied)
                         : QSet<qint64>();
            for (const MappedCopy &copy : applied)
                (!readBack || kept.contains(copy.targetId) ? outcome.done : outcome.notKept)
                    << copy;
            outcome.skipped += int(batch.size() - applied.size());
            handled += int(batch.size());
            if (progress)
                progress(handled, total);
        }
    }
    return outcome;
}

MappedFourEyes mappedFourEyes(const QSqlDatabase &db, const MappedCompensationPlan &plan)
{
    MappedFourEyes check;
    check.moneyFen = plan.moneyFen();
    check.thresholdFen = fourEyesThresholdFen(db);
    check.soloFen = soloCompensatedFen(db);
    CompensationPlan asOwn;
    asOwn.moneyFen = check.moneyFen;
    check.needsRequest = needsSecondOperator(asOwn, check.thresholdFen, check.soloFen);
    return check;
}

} // namespace payops::mapping
