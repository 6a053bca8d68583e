#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops {

// A 漏单 turned into an action: the statement line's payment, recorded as the callback the
// platform's notice would have been once a second account confirms it. The rules (copied from
// the line, another account confirms, each step audited) are the database's own: triggers of
// migration 0013. Confirmed, it waits in the backlog as a RECORDED callback and the drain
// applies it exactly once, as it applies every callback.
struct MissingPaymentDraft
{
    qint64 id = 0;
    qint64 statementId = 0;
    qint64 lineNo = 0;
    QByteArray payNo;
    qint64 orderId = 0;
    qint64 amountFen = 0;
    QString channel;
    QDateTime paidAt; // UTC, the platform's; invalid when the line had none
    QString status;   // DRAFT, CONFIRMED, DISCARDED
    QString reason;
    QString draftedBy;
    QDateTime draftedAt; // UTC
    QString decidedBy;
    QDateTime decidedAt;   // UTC; invalid while a draft
    qint64 callbackId = 0; // the recorded callback, once confirmed
};

// Drafts the payment of a statement line. orderId is only read when the line names no order
// of ours (its merchant order number is not an id); otherwise the line's order is taken.
// Returns the draft's id. Throws db::Error, whose message says which rule refused it.
qint64 draftMissingPayment(const QSqlDatabase &db, qint64 statementId, qint64 lineNo,
                           qint64 orderId, const QString &reason);

// Confirms (records the callback) or discards a draft. Throws db::Error: a draft decided
// already, the account that drafted it, a pay_no recorded meanwhile.
void confirmMissingPayment(const QSqlDatabase &db, qint64 draftId, const QString &reason);
void discardMissingPayment(const QSqlDatabase &db, qint64 draftId, const QString &reason);

// The newest drafts first, for a statement (0: of every statement). Throws db::Error.
QList<MissingPaymentDraft> loadMissingPaymentDrafts(const QSqlDatabase &db, qint64 statementId,
                                                    int limit = 500);

} // namespace payops
