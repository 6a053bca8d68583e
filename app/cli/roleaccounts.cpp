#include "roleaccounts.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QRegularExpression>

namespace payops::cli {
namespace {

struct RoleAccounts
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::RoleAccounts)
};

// Narrower than what the server allows on purpose: these are the names operations teams use,
// and nothing in them needs escaping inside '...'.
const QRegularExpression &userPattern()
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9_.$-]{1,80}$"));
    return pattern;
}

const QRegularExpression &hostPattern()
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9_.%:/-]{1,255}$"));
    return pattern;
}

bool isQuote(QChar c)
{
    return c == QLatin1Char('\'') || c == QLatin1Char('"') || c == QLatin1Char('`');
}

// Takes one part (user or host) from the front of `rest`: quoted up to its closing quote, or
// bare up to the '@' (for the user) or the end (for the host). Empty optional on a quote that
// is not closed.
std::optional<QString> takePart(QStringView &rest, bool isUser)
{
    if (!rest.isEmpty() && isQuote(rest.front())) {
        const QChar quote = rest.front();
        const qsizetype end = rest.indexOf(quote, 1);
        if (end < 0)
            return std::nullopt;
        const QString part = rest.mid(1, end - 1).toString();
        rest = rest.mid(end + 1);
        return part;
    }
    const qsizetype end = isUser ? rest.indexOf(QLatin1Char('@')) : rest.size();
    const QString part = rest.left(end < 0 ? rest.size() : end).toString();
    rest = rest.mid(part.size());
    return part;
}

// SET DEFAULT ROLE r FOR account on MariaDB, TO account on MySQL.
QString forOrTo(bool mariaDb)
{
    return mariaDb ? QStringLiteral("FOR") : QStringLiteral("TO");
}

QString quoted(const QString &text)
{
    return QLatin1Char('\'') + text + QLatin1Char('\'');
}

} // namespace

QString AccountName::sql() const
{
    return quoted(user) + QLatin1Char('@') + quoted(host);
}

AccountParse parseAccountName(const QString &text)
{
    const QString shape =
        RoleAccounts::tr("--account takes an account as user@host, e.g. 'alice'@'%' or "
                         "alice@localhost, not \"%1\"")
            .arg(text);
    QStringView rest(text);
    rest = rest.trimmed();
    const std::optional<QString> user = takePart(rest, true);
    if (!user)
        return {std::nullopt, shape};
    QString host = QStringLiteral("%");
    if (!rest.isEmpty()) {
        if (rest.front() != QLatin1Char('@'))
            return {std::nullopt, shape};
        rest = rest.mid(1);
        const std::optional<QString> hostPart = takePart(rest, false);
        if (!hostPart || !rest.isEmpty())
            return {std::nullopt, shape};
        host = *hostPart;
    }
    if (!userPattern().match(*user).hasMatch())
        return {
            std::nullopt,
            RoleAccounts::tr("--account: the user name \"%1\" may only have letters, digits and "
                             "_ . - $ (at most 80)")
                .arg(*user)};
    if (!hostPattern().match(host).hasMatch())
        return {std::nullopt,
                RoleAccounts::tr("--account: the host \"%1\" may only have letters, digits and "
                                 "_ . - % : / (at most 255)")
                    .arg(host)};
    return {AccountName{*user, host}, QString()};
}

std::optional<QString> payopsRole(const QString &name)
{
    if (name == QLatin1String("operator"))
        return QStringLiteral("payops_operator");
    if (name == QLatin1String("finance"))
        return QStringLiteral("payops_finance");
    if (name == QLatin1String("endpoint"))
        return QStringLiteral("payops_endpoint");
    return std::nullopt;
}

QString RoleHolder::account() const
{
    return host.isEmpty() ? user : quoted(user) + QLatin1Char('@') + quoted(host);
}

QList<RoleHolder> readRoleHolders(const QSqlDatabase &db, bool mariaDb)
{
    // MariaDB keeps one default role per account in mysql.user (a view of mysql.global_priv);
    // MySQL keeps a set of them in mysql.default_roles.
    const QString sql =
        mariaDb
            ? QStringLiteral(
                  "SELECT m.User, m.Host, m.Role, m.Admin_option = 'Y', COALESCE(u.default_role = "
                  "m.Role, 0)"
                  " FROM mysql.roles_mapping m"
                  " LEFT JOIN mysql.user u ON u.User = m.User AND u.Host = m.Host"
                  " WHERE m.Role IN ('payops_operator', 'payops_finance', 'payops_endpoint')"
                  " ORDER BY m.Role, m.User, m.Host")
            : QStringLiteral(
                  "SELECT e.TO_USER, e.TO_HOST, e.FROM_USER, e.WITH_ADMIN_OPTION = 'Y', d.USER IS "
                  "NOT NULL"
                  " FROM mysql.role_edges e"
                  " LEFT JOIN mysql.default_roles d ON d.USER = e.TO_USER AND d.HOST = e.TO_HOST"
                  "  AND d.DEFAULT_ROLE_USER = e.FROM_USER AND d.DEFAULT_ROLE_HOST = e.FROM_HOST"
                  " WHERE e.FROM_USER IN ('payops_operator', 'payops_finance', 'payops_endpoint')"
                  " ORDER BY e.FROM_USER, e.TO_USER, e.TO_HOST");
    QSqlQuery query = db::exec(db, sql);
    QList<RoleHolder> holders;
    while (query.next()) {
        RoleHolder holder;
        holder.user = query.value(0).toString();
        holder.host = query.value(1).toString();
        holder.role = query.value(2).toString();
        holder.admin = query.value(3).toBool();
        holder.isDefault = query.value(4).toBool();
        holders << holder;
    }
    return holders;
}

std::optional<QString> readDefaultRole(const QSqlDatabase &db, const AccountName &account,
                                       bool mariaDb)
{
    if (!mariaDb)
        return std::nullopt;
    try {
        return db::scalar(db,
                          QStringLiteral(
                              "SELECT default_role FROM mysql.user WHERE User = ? AND Host = ?"),
                          {account.user, account.host})
            .toString();
    } catch (const db::Error &) {
        return std::nullopt; // only to warn about a replaced default role; the grant does not need
                             // it
    }
}

QString grantRoleSql(const QString &role, const AccountName &account)
{
    return QStringLiteral("GRANT %1 TO %2").arg(role, account.sql());
}

QString revokeRoleSql(const QString &role, const AccountName &account)
{
    return QStringLiteral("REVOKE %1 FROM %2").arg(role, account.sql());
}

QString defaultRoleSql(const QString &role, const AccountName &account, bool mariaDb)
{
    return QStringLiteral("SET DEFAULT ROLE %1 %2 %3").arg(role, forOrTo(mariaDb), account.sql());
}

QString noDefaultRoleSql(const AccountName &account, bool mariaDb)
{
    return QStringLiteral("SET DEFAULT ROLE NONE %1 %2").arg(forOrTo(mariaDb), account.sql());
}

} // namespace payops::cli
