#include "account.h"

#include "db/connection.h"

namespace payops::console {

Account probeAccount(const QSqlDatabase &db)
{
    return Account{db::scalar(db, QStringLiteral("SELECT CURRENT_USER()")).toString(),
                   probePrivileges(db)};
}

} // namespace payops::console
