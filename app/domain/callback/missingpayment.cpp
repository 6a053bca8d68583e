#include "missingpayment.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"

#include <QCoreApplication>
#include <QSqlQuery>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct MissingPayment
{
    Q_DECLARE_TR_FUNCTIONS(payops::MissingPayment)
};

// The draft's triggers write its audit entry (migration 0013): each statement here is an
// audited action.
void decide(const QSqlDatabase &db, qint64 draftId, const QString &status, const QString &reason)
{
    // The trigger refuses what is not DRAFT; a draft that does not exist changes no row.
    // decided_account: the account the server authenticated, as this statement sees it.
    QSqlQuery update = runAudited([&] {
        return db::exec(db,
                        QStringLiteral("UPDATE missing_payment_draft SET status = ?, reason = ?, "
                                       "decided_account = CURRENT_USER() WHERE id = ?"),
                        {status, reason, draftId});
    });
    if (update.numRowsAffected() != 1)
        throw db::Error(MissingPayment::tr("no missing-payment draft %1").arg(draftId));
}

} // namespace

qint64 draftMissingPayment(const QSqlDatabase &db, qint64 statementId, qint64 lineNo,
                           qint64 orderId, const QString &reason)
{
    QSqlQuery insert = runAudited([&] {
        return db::exec(db,
                        QStringLiteral("INSERT INTO missing_payment_draft (statement_id, "
                                       "line_no, order_id, reason, drafted_account) "
                                       "VALUES (?, ?, ?, ?, CURRENT_USER())"),
                        {statementId, lineNo, orderId, reason});
    });
    return insert.lastInsertId().toLongLong();
}

void confirmMissingPayment(const QSqlDatabase &db, qint64 draftId, const QString &reason)
{
    decide(db, draftId, QStringLiteral("CONFIRMED"), reason);
}

void discardMissingPayment(const QSqlDatabase &db, qint64 draftId, const QString &reason)
{
    decide(db, draftId, QStringLiteral("DISCARDED"), reason);
}

QList<MissingPaymentDraft> loadMissingPaymentDrafts(const QSqlDatabase &db, qint64 statementId,
                                                    int limit)
{
    QSqlQuery query =
        db::exec(db,
                 QStringLiteral("SELECT id, statement_id, line_no, pay_no, order_id, amount_fen, "
                                "channel, paid_at, status, reason, "
                                "drafted_by, drafted_at, decided_by, decided_at, callback_id FROM "
                                "missing_payment_draft "
                                "WHERE (? = 0 OR statement_id = ?) ORDER BY id DESC LIMIT %1")
                     .arg(limit),
                 {statementId, statementId});
    QList<MissingPaymentDraft> drafts;
    while (query.next()) {
        MissingPaymentDraft draft;
        draft.id = query.value(0).toLongLong();
        draft.statementId = query.value(1).toLongLong();
        draft.lineNo = query.value(2).toLongLong();
        draft.payNo = query.value(3).toByteArray();
        draft.orderId = query.value(4).toLongLong();
        draft.amountFen = query.value(5).toLongLong();
        draft.channel = query.value(6).toString();
        draft.paidAt = db::utcDateTime(query.value(7));
        draft.status = query.value(8).toString();
        draft.reason = query.value(9).toString();
        draft.draftedBy = query.value(10).toString();
        draft.draftedAt = db::utcDateTime(query.value(11));
        draft.decidedBy = query.value(12).toString();
        draft.decidedAt = db::utcDateTime(query.value(13));
        draft.callbackId = query.value(14).toLongLong();
        drafts << draft;
    }
    return drafts;
}

} // namespace payops
