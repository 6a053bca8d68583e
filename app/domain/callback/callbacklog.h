#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"

#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QVariant>

#include <optional>

namespace payops {

// pay_callback_log: one row per pay_no (uk_pay_no), holding the first answer for replays.
struct StoredCallback
{
    qint64 id = 0;
    QString status; // RECORDED, PROCESSING, PROCESSED, UNMATCHED, REJECTED, IGNORED; a gateway's
                    // FORWARDING, FORWARDED
    CallbackRequest content;
    int responseCode = 200;
    QByteArray responseBody;
};

std::optional<StoredCallback> findCallback(const QSqlDatabase &db, const QByteArray &payNo);
// The stored callbacks of these pay_nos, in one statement; a pay_no not stored is absent.
QHash<QByteArray, StoredCallback> findCallbacks(const QSqlDatabase &db,
                                                const QList<QByteArray> &payNos);
// findCallbacks as a statement (at least one pay_no) and the callbacks of its result, for a
// transaction that sends it with others.
QString findCallbacksStatement(const QSqlDatabase &db, const QList<QByteArray> &payNos);
QHash<QByteArray, StoredCallback> storedCallbacks(QSqlQuery &result);

// The order number of a pay_callback_log row (of `table`, an alias, when given) in SQL: its
// out_trade_no, or its order_id in decimal where it has none.
QString orderNoColumn(const QString &table = {});

// The columns storedCallback reads, in its order, for a query that picks stored callbacks its
// own way (the drains' claims). The content is rebuilt from the decoded columns, never from
// the raw body: a WeChat Pay body is ciphertext, an Alipay body a form.
QString storedCallbackColumns();
StoredCallback storedCallback(const QSqlQuery &query);

// The answer a resend of a stored callback gets: the first answer again when the content is
// the same, 409 when it differs. nullopt when the resend supersedes the stored one: a
// SUCCESS following a recorded non-SUCCESS notice of the same payment (e.g. WAIT_BUYER_PAY).
// A notice following a stored success of the same payment (TRADE_CLOSED after a full refund)
// is answered as ignored, and nothing is stored.
std::optional<CallbackAnswer> answerForResend(const StoredCallback &stored,
                                              const CallbackRequest &request);

// The callback's paid_at (RFC 3339, any offset) as UTC text for pay_callback_log.platform_paid_at,
// or a null QVariant when it has none or one no DATETIME holds (which CallbackRequest::parse
// refuses).
QVariant platformPaidAt(const QString &paidAt);

// A body's digest as pay_callback_log.body_sha256 keeps it: SHA-256 in lower-case hex.
QString sha256Hex(const QByteArray &bytes);

// Inserts the row (status and answer as given) and returns its id. A pay_no already present
// throws db::Error with isDuplicateKey(): uk_pay_no is the defence.
// gateway marks a row a gateway forwards rather than pays.
qint64 insertCallback(const QSqlDatabase &db, const CallbackRequest &request, const QString &status,
                      const QString &instance, const CallbackAnswer &answer, bool gateway = false);

// insertCallback for many callbacks in one statement (a record-only batch), to send with
// others (db::execTogether): every row gets the same status and answer. One pay_no already
// present fails the whole statement (uk_pay_no). At least one request.
QString insertCallbacksStatement(const QSqlDatabase &db, const QList<CallbackRequest> &requests,
                                 const QString &status, const QString &instance,
                                 const CallbackAnswer &answer, bool gateway = false);

// Replaces a stored non-SUCCESS notice with its SUCCESS successor, still under uk_pay_no.
// Returns the id, or 0 when the row is no longer a non-SUCCESS notice.
qint64 upgradeCallback(const QSqlDatabase &db, const CallbackRequest &request,
                       const QString &instance);

// Returns false when no row `id` was there to finish.
bool finishCallback(const QSqlDatabase &db, qint64 id, const QString &status, const QString &reason,
                    const QString &instance, const CallbackAnswer &answer);
// The statement finishCallback runs (probePrivileges asks the server about it).
QString finishCallbackStatement();

// On a Galera node, a drain's first write in its transaction: marks the rows it claimed (all
// with status `from`) PROCESSING. A conflict from another node that rolls the transaction back
// without an error takes the mark with it (docs/decisions/0065-galera-roll-back-without-error.md),
// and finishClaimedCallback then finds it gone. False when not every row was there to mark.
bool markClaimed(const QSqlDatabase &db, const QList<qint64> &ids, const QString &from);
// finishCallback of a row markClaimed marked; false when the mark is gone.
bool finishClaimedCallback(const QSqlDatabase &db, qint64 id, const QString &status,
                           const QString &reason, const QString &instance,
                           const CallbackAnswer &answer);

} // namespace payops
