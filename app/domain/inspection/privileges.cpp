#include "privileges.h"

#include "domain/callback/callbacklog.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/paymentapplier.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensation.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QStringList>

namespace payops {
namespace {

// EXPLAIN makes the server check every privilege a statement needs (the columns of an
// ON DUPLICATE KEY UPDATE included, which a plain INSERT of the same row would not show) and
// then changes nothing. Each placeholder is bound to NULL, so the actions' own statements are
// asked about as they are written.
bool allowed(const QSqlDatabase &db, const QStringList &statements)
{
    for (const QString &statement : statements) {
        try {
            db::exec(db, QStringLiteral("EXPLAIN ") + statement,
                     QVariantList(statement.count(QLatin1Char('?'))));
        } catch (const db::Error &error) {
            // 1146: a table of a migration this database has not had yet; nothing to allow.
            if (error.isAccessDenied() || error.serverCode() == 1146)
                return false;
            throw;
        }
    }
    return true;
}

} // namespace

Privileges probePrivileges(const QSqlDatabase &db)
{
    Privileges privileges;
    const bool audits = mayAppendAudit(db);
    privileges.flipSwitch = audits && allowed(db, {flipSwitchStatement()});
    privileges.drain = audits && allowed(db, paymentStatements() << finishCallbackStatement());
    privileges.compensate = audits && allowed(db, compensationStatements());
    privileges.decideRequests = allowed(
        db, {QStringLiteral("UPDATE compensation_request SET status = status WHERE id = 0")});
    privileges.draftPayments =
        allowed(db, {QStringLiteral("INSERT INTO missing_payment_draft (statement_id, line_no) "
                                    "SELECT 0, 0 FROM DUAL WHERE 1 = 0")});
    privileges.decidePayments = allowed(
        db, {QStringLiteral("UPDATE missing_payment_draft SET status = status WHERE id = 0")});
    return privileges;
}

} // namespace payops
