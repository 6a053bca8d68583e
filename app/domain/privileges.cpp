#include "privileges.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QStringList>

namespace payops {
namespace {

bool allowed(const QSqlDatabase &db, const QStringList &statements)
{
    for (const QString &statement : statements) {
        try {
            db::execDirect(db, statement);
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
    privileges.flipSwitch = allowed(db, {QStringLiteral("UPDATE callback_switch SET mode = mode, version = version WHERE id = 0"),
                                         QStringLiteral("INSERT INTO ops_audit_log (action) SELECT 'probe' FROM DUAL WHERE 1 = 0")});
    privileges.drain = allowed(db, {QStringLiteral("UPDATE pay_callback_log SET status = status WHERE id = 0"),
                                    QStringLiteral("UPDATE orders SET status = status WHERE id = 0"),
                                    QStringLiteral("INSERT INTO user_coupon (order_id, coupon_template_id) SELECT 0, 0 FROM DUAL WHERE 1 = 0")});
    privileges.compensate = allowed(db, {QStringLiteral("UPDATE user_coupon SET superseded_by = superseded_by WHERE id = 0"),
                                         QStringLiteral("UPDATE point_log SET superseded_by = superseded_by WHERE id = 0"),
                                         QStringLiteral("INSERT INTO compensation (target_table, target_id, action) "
                                                        "SELECT '', 0, '' FROM DUAL WHERE 1 = 0")});
    privileges.decideRequests = allowed(db, {QStringLiteral("UPDATE compensation_request SET status = status WHERE id = 0")});
    privileges.draftPayments = allowed(db, {QStringLiteral("INSERT INTO missing_payment_draft (statement_id, line_no) "
                                                           "SELECT 0, 0 FROM DUAL WHERE 1 = 0")});
    privileges.decidePayments = allowed(db, {QStringLiteral("UPDATE missing_payment_draft SET status = status WHERE id = 0")});
    return privileges;
}

} // namespace payops
