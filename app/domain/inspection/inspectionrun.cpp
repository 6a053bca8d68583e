#include "inspectionrun.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QJsonDocument>
#include <QSqlQuery>
#include <QTimeZone>

namespace payops {
namespace {

constexpr auto kColumns = "id, started_at, finished_at, run_by, source, clean, duplicate_groups, "
                          "duplicate_extra_copies, money_at_risk_fen, "
                          "unmatched, unmatched_with_order, double_payment_orders, "
                          "double_payment_callbacks, refund_owed_fen, backlog, findings";

InspectionRun runFrom(const QSqlQuery &query)
{
    InspectionRun run;
    run.id = query.value(0).toLongLong();
    run.startedAt = db::utcDateTime(query.value(1));
    run.finishedAt = db::utcDateTime(query.value(2));
    run.runBy = query.value(3).toString();
    run.source = query.value(4).toString();
    run.clean = query.value(5).toBool();
    run.duplicateGroups = query.value(6).toLongLong();
    run.duplicateExtraCopies = query.value(7).toLongLong();
    run.moneyAtRiskFen = query.value(8).toLongLong();
    run.unmatched = query.value(9).toLongLong();
    run.unmatchedWithOrder = query.value(10).toLongLong();
    run.doublePaymentOrders = query.value(11).toLongLong();
    run.doublePaymentCallbacks = query.value(12).toLongLong();
    run.refundOwedFen = query.value(13).toLongLong();
    run.backlog = query.value(14).toLongLong();
    run.findingsJson = query.value(15).toString();
    return run;
}

} // namespace

InspectionRun InspectionRun::of(const InspectionReport &report, const QDateTime &startedAt,
                                const QString &source)
{
    InspectionRun run;
    run.startedAt = startedAt;
    run.source = source;
    run.clean = report.findings.clean();
    run.duplicateGroups = report.duplicateGroups();
    run.duplicateExtraCopies = report.extraCopies();
    run.moneyAtRiskFen = report.moneyAtRiskFen();
    run.unmatched = report.findings.unmatched.callbacks;
    run.unmatchedWithOrder = report.findings.unmatched.withOrder;
    run.doublePaymentOrders = report.findings.doublePayments.orders;
    run.doublePaymentCallbacks = report.findings.doublePayments.callbacks;
    run.refundOwedFen = report.findings.doublePayments.refundOwedFen;
    run.backlog = report.findings.backlog;
    run.findingsJson =
        QString::fromUtf8(QJsonDocument(report.toJson()).toJson(QJsonDocument::Compact));
    return run;
}

QDateTime serverTime(const QSqlDatabase &db)
{
    return db::utcDateTime(db::scalar(db, QStringLiteral("SELECT UTC_TIMESTAMP(3)")));
}

StoredRun storeInspectionRun(const QSqlDatabase &db, const InspectionRun &run)
{
    StoredRun stored;
    try {
        QSqlQuery insert = db::exec(
            db,
            QStringLiteral(
                "INSERT INTO inspection_run (started_at, finished_at, run_by, source, clean, "
                "duplicate_groups, "
                "duplicate_extra_copies, money_at_risk_fen, unmatched, unmatched_with_order, "
                "double_payment_orders, "
                "double_payment_callbacks, refund_owed_fen, backlog, findings) "
                "VALUES (?, UTC_TIMESTAMP(3), CURRENT_USER(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            {run.startedAt.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")), run.source,
             run.clean ? 1 : 0, run.duplicateGroups, run.duplicateExtraCopies, run.moneyAtRiskFen,
             run.unmatched, run.unmatchedWithOrder, run.doublePaymentOrders,
             run.doublePaymentCallbacks, run.refundOwedFen, run.backlog, run.findingsJson});
        stored.id = insert.lastInsertId().toLongLong();
        if (!stored.stored())
            stored.notStored = StoredRun::tr("the database gave the stored run no id");
    } catch (const db::Error &error) {
        stored.notStored = error.isAccessDenied()
                               ? StoredRun::tr("this account may not record inspections (it needs "
                                               "payops_operator or payops_finance)")
                               : db::userMessage(error);
    }
    return stored;
}

QList<InspectionRun> loadInspectionRuns(const QSqlDatabase &db, qint64 beforeId, int limit)
{
    // The primary key's range, newest first: a page costs its rows, however long the history.
    const QString where = beforeId > 0 ? QStringLiteral(" WHERE id < ?") : QString();
    QVariantList values;
    if (beforeId > 0)
        values << beforeId;
    values << limit;
    QSqlQuery query = db::exec(db,
                               QStringLiteral("SELECT ") + QLatin1String(kColumns) +
                                   QStringLiteral(" FROM inspection_run") + where +
                                   QStringLiteral(" ORDER BY id DESC LIMIT ?"),
                               values);
    QList<InspectionRun> runs;
    while (query.next())
        runs << runFrom(query);
    return runs;
}

std::optional<InspectionRun> previousInspectionRun(const QSqlDatabase &db, qint64 beforeId)
{
    const QList<InspectionRun> runs = loadInspectionRuns(db, beforeId, 1);
    if (runs.isEmpty())
        return std::nullopt;
    return runs.first();
}

} // namespace payops
