#include "reconciliationview.h"

#include "db/connection.h"
#include "domain/mapping/mappedorders.h"

#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>

namespace payops::console {
namespace {

// `act` on the statement, then its view as it left it.
Job<ReconciliationView> thenView(qint64 statementId, std::function<void(const QSqlDatabase &)> act,
                                 std::optional<mapping::Mapping> mapping = std::nullopt)
{
    return
        [statementId, act = std::move(act), mapping = std::move(mapping)](const QSqlDatabase &db) {
            act(db);
            return loadReconciliationView(db, statementId, mapping);
        };
}

} // namespace

QList<StoredStatement> loadStatements(const QSqlDatabase &db, int limit)
{
    QSqlQuery query = db::exec(
        db,
        QStringLiteral("SELECT id FROM platform_statement ORDER BY id DESC LIMIT %1").arg(limit));
    QList<qint64> ids;
    while (query.next())
        ids << query.value(0).toLongLong();
    QList<StoredStatement> statements;
    for (qint64 id : ids)
        statements << readStoredStatement(db, id);
    return statements;
}

ReconciliationView loadReconciliationView(const QSqlDatabase &db, qint64 statementId,
                                          const std::optional<mapping::Mapping> &mapping)
{
    ReconciliationView view;
    view.statement = readStoredStatement(db, statementId);
    QSqlQuery run =
        db::exec(db,
                 QStringLiteral("SELECT id, finished_at, started_by, missing_ours, "
                                "missing_platform, amount_mismatch, status_mismatch, "
                                "duplicate_platform, double_payment FROM reconciliation_run WHERE "
                                "statement_id = ? AND finished_at IS NOT NULL "
                                "ORDER BY id DESC LIMIT 1"),
                 {statementId});
    if (run.next()) {
        view.runId = run.value(0).toLongLong();
        view.reconciledAt = db::utcDateTime(run.value(1));
        view.reconciledBy = run.value(2).toString();
        for (int kind = 0; kind < kFindingKinds; ++kind)
            view.counts[kind] = run.value(3 + kind).toLongLong();
        readStoredFindings(db, mapping::paymentSide(db, mapping), view.runId,
                           [&view](const ReconciliationFinding &finding) {
                               view.findings << finding;
                               return view.findings.size() < kFindingRows;
                           });
    }
    readStatementErrors(db, statementId, [&view](const StatementLineError &error) {
        view.errors.append(error);
        return view.errors.size() < kErrorRows;
    });
    view.drafts = loadMissingPaymentDrafts(db, statementId);
    return view;
}

Job<StatementFileImport>
statementFileImportJob(QString path, StatementFormat format,
                       std::shared_ptr<std::atomic<bool>> cancel,
                       std::function<void(const StatementImportProgress &)> progress,
                       std::optional<mapping::Mapping> mapping)
{
    StatementImportOptions options;
    options.format = format;
    options.sourceName = QFileInfo(path).fileName();
    options.cancel = cancel.get();
    options.progress = std::move(progress);
    return [path = std::move(path), options = std::move(options), cancel = std::move(cancel),
            mapping = std::move(mapping)](const QSqlDatabase &db) {
        StatementFileImport result;
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            result.outcome = StatementFileImport::Outcome::CannotOpen;
            result.problem = file.errorString();
            return result;
        }
        try {
            result.imported = importStatement(db, file, options);
            if (result.imported.cancelled) {
                result.outcome = StatementFileImport::Outcome::Cancelled;
                return result;
            }
            result.findings = reconcileStatement(db, result.imported.statement.id,
                                                 mapping::paymentSide(db, mapping))
                                  .total();
            result.view = loadReconciliationView(db, result.imported.statement.id, mapping);
            result.outcome = StatementFileImport::Outcome::Reconciled;
        } catch (const StatementError &error) {
            result.outcome = StatementFileImport::Outcome::Unreadable;
            result.problem = QString::fromUtf8(error.what());
        }
        return result;
    };
}

Job<ReconciliationView> reconcileAgainJob(qint64 statementId,
                                          std::optional<mapping::Mapping> mapping)
{
    return thenView(
        statementId,
        [statementId, mapping](const QSqlDatabase &db) {
            reconcileStatement(db, statementId, mapping::paymentSide(db, mapping));
        },
        mapping);
}

Job<ReconciliationView> draftPaymentJob(qint64 statementId, qint64 lineNo, qint64 orderId,
                                        QString reason)
{
    return thenView(statementId, [statementId, lineNo, orderId,
                                  reason = std::move(reason)](const QSqlDatabase &db) {
        draftMissingPayment(db, statementId, lineNo, orderId, reason);
    });
}

Job<ReconciliationView> confirmDraftJob(qint64 statementId, qint64 draftId, QString reason)
{
    return thenView(statementId, [draftId, reason = std::move(reason)](const QSqlDatabase &db) {
        confirmMissingPayment(db, draftId, reason);
    });
}

Job<ReconciliationView> discardDraftJob(qint64 statementId, qint64 draftId, QString reason)
{
    return thenView(statementId, [draftId, reason = std::move(reason)](const QSqlDatabase &db) {
        discardMissingPayment(db, draftId, reason);
    });
}

} // namespace payops::console
