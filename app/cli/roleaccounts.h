#pragma once

#include <QCoreApplication>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace payops::cli {

// A server account as `payops grant --account` takes it: user@host, each part bare or quoted
// with ', " or ` as a DBA would type it in SQL; a bare user is user@'%', as in SQL.
struct AccountName
{
    QString user;
    QString host;

    // 'user'@'host' for GRANT and SET DEFAULT ROLE, which take no binds. Safe to splice:
    // parseAccountName() admits no quote, backslash, space or control character.
    QString sql() const;
};

struct AccountParse
{
    std::optional<AccountName> account;
    QString error; // one sentence when account is empty
};

// Refuses anything but user names of letters, digits and _ . - $ (at most 80) and host
// patterns of letters, digits and _ . - % : / (at most 255), so no text can leave the quotes.
AccountParse parseAccountName(const QString &text);

// payops' role for a --role value: operator -> payops_operator, finance -> payops_finance,
// endpoint -> payops_endpoint.
std::optional<QString> payopsRole(const QString &name);

// One holder of a payops role: an account, or a role when Host is empty (roles may hold roles).
struct RoleHolder
{
    QString user;
    QString host;
    QString role;
    bool isDefault = false; // the role is active at login without SET ROLE
    bool admin = false;     // may grant the role to others (WITH ADMIN OPTION)

    QString account() const; // 'user'@'host', or 'user' for a role
};

// Who holds payops_operator, payops_finance or payops_endpoint: mysql.roles_mapping on MariaDB,
// mysql.role_edges on MySQL. Throws db::Error (access denied when the account may not read the
// mysql schema).
QList<RoleHolder> readRoleHolders(const QSqlDatabase &db, bool mariaDb);

// MariaDB's one default role of `account` (empty for none), or nullopt where it cannot be
// read: on MySQL (a set of default roles), or when this account may not read mysql.user.
std::optional<QString> readDefaultRole(const QSqlDatabase &db, const AccountName &account,
                                       bool mariaDb);

// The statements that give `account` the role and make it its default role, and that take it
// away again. MariaDB and MySQL differ in SET DEFAULT ROLE (FOR / TO).
QString grantRoleSql(const QString &role, const AccountName &account);
QString revokeRoleSql(const QString &role, const AccountName &account);
QString defaultRoleSql(const QString &role, const AccountName &account, bool mariaDb);
QString noDefaultRoleSql(const AccountName &account, bool mariaDb);

} // namespace payops::cli
