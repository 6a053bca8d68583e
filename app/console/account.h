#pragma once

#include "domain/privileges.h"

#include <QSqlDatabase>
#include <QString>

namespace payops::console {

// Who the console is connected as, and what that account may do.
struct Account
{
    QString user; // the authenticated account, CURRENT_USER(), e.g. op3@%
    Privileges privileges;
};

// Asks the server, once after connecting: the console shows the account and disables the
// actions its grants do not allow. Throws db::Error.
Account probeAccount(const QSqlDatabase &db);

} // namespace payops::console
