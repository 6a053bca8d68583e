#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "roleaccounts.h"

namespace payops::cli {
namespace {

// MariaDB lets only a role's admins grant it: the account that created it (the one that ran
// the migrations) and those it granted the role WITH ADMIN OPTION; not even root otherwise.
// Setting another account's default role needs UPDATE on the mysql schema on top. Both are
// checked before anything changes, so a refusal leaves the account as it was.
class GrantCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::GrantCommand)

public:
    GrantCommand()
        : Command(QStringLiteral("grant"),
                  tr("Give an account a payops role and make it the account's default role, or "
                     "take it away "
                     "with --revoke. Run it as an account that administers the roles."),
                  QStringLiteral(
                      "--db DSN --role operator|finance|endpoint --account USER@HOST [--revoke]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(m_role);
        parser.addOption(m_account);
        parser.addOption(m_revoke);
    }

    int execute(const QCommandLineParser &parser) override
    {
        if (!noArguments(parser))
            return UsageOrConnection;
        const std::optional<QString> role = payopsRole(parser.value(m_role));
        if (!role)
            return fail(UsageOrConnection,
                        tr("--role must be operator, finance or endpoint, not \"%1\"")
                            .arg(parser.value(m_role)));
        if (!parser.isSet(m_account))
            return fail(UsageOrConnection,
                        tr("--account is required, e.g. --account \"'alice'@'%'\""));
        const AccountParse parsed = parseAccountName(parser.value(m_account));
        if (!parsed.account)
            return fail(UsageOrConnection, parsed.error);
        const AccountName &account = *parsed.account;
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("grant"));
            const QSqlDatabase db = connection.database();
            const QString self = db::scalar(db, QStringLiteral("SELECT CURRENT_USER()")).toString();
            if (connection.isMariaDb()) {
                if (!administers(db, *role))
                    return fail(Refused, notAdmin(self, *role));
                if (!maySetDefaultRoles(db))
                    return fail(Refused, noDefaultRoleRight(self, *role));
            }
            return parser.isSet(m_revoke) ? revoke(connection, *role, account, self)
                                          : grant(connection, *role, account, self);
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }

private:
    int grant(const db::Connection &connection, const QString &role, const AccountName &account,
              const QString &self) const
    {
        const QSqlDatabase db = connection.database();
        // Without NO_AUTO_CREATE_USER (payops' sessions leave it out) MariaDB's GRANT would
        // create a mistyped account, without a password, instead of refusing it.
        if (connection.isMariaDb())
            db::execDirect(
                db,
                QStringLiteral(
                    "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',NO_AUTO_CREATE_USER')"));
        // MariaDB keeps one default role per account: another one is replaced, and the account
        // then needs SET ROLE for it. Said, not refused: the DBA asked for this role.
        const std::optional<QString> previousDefault =
            readDefaultRole(db, account, connection.isMariaDb());
        try {
            db::execDirect(db, grantRoleSql(role, account));
        } catch (const db::Error &error) {
            return failStatement(error, self, role, account);
        }
        try {
            db::execDirect(db, defaultRoleSql(role, account, connection.isMariaDb()));
        } catch (const db::Error &error) {
            // Only MySQL gets here (MariaDB's right was checked): say what is half done.
            return fail(Refused, tr("granted %1 to %2, but could not make it the default role: %3")
                                     .arg(role, account.sql(), db::userMessage(error)));
        }
        say(tr("granted %1 to %2; it is the account's default role, active at login without SET "
               "ROLE")
                .arg(role, account.sql()));
        if (previousDefault && !previousDefault->isEmpty() && *previousDefault != role)
            say(tr("%1 was its default role before and is no longer active at login; it takes SET "
                   "ROLE %1 now")
                    .arg(*previousDefault));
        return Success;
    }

    int revoke(const db::Connection &connection, const QString &role, const AccountName &account,
               const QString &self) const
    {
        const QSqlDatabase db = connection.database();
        // Read first: MariaDB keeps a revoked role as the default role, and the account's next
        // login would then fail to activate it.
        bool wasDefault = false;
        bool held = false;
        for (const RoleHolder &holder : readRoleHolders(db, connection.isMariaDb())) {
            if (holder.user == account.user && holder.host == account.host && holder.role == role) {
                held = true;
                wasDefault = holder.isDefault;
            }
        }
        if (!held) {
            say(tr("%1 does not hold %2; nothing changed").arg(account.sql(), role));
            return Success;
        }
        try {
            db::execDirect(db, revokeRoleSql(role, account));
            if (wasDefault)
                db::execDirect(db, noDefaultRoleSql(account, connection.isMariaDb()));
        } catch (const db::Error &error) {
            return failStatement(error, self, role, account);
        }
        say(wasDefault ? tr("revoked %1 from %2; the account has no default role now")
                             .arg(role, account.sql())
                       : tr("revoked %1 from %2").arg(role, account.sql()));
        return Success;
    }

    // The server's refusals of GRANT and REVOKE, in the words of this command.
    int failStatement(const db::Error &error, const QString &self, const QString &role,
                      const AccountName &account) const
    {
        switch (error.serverCode()) {
        case 1698: // MariaDB: not an admin of the role
        case 1227: // MySQL: neither ROLE_ADMIN nor WITH ADMIN OPTION
            return fail(Refused, notAdmin(self, role));
        case 1133:
            return fail(Refused,
                        tr("there is no account %1 on this server; create it first (CREATE USER %1 "
                           "IDENTIFIED BY '...')")
                            .arg(account.sql()));
        case 1959:
        case 3523: // MySQL: unknown authorization ID
            return fail(Refused,
                        tr("the role %1 does not exist on this server; payops migrate creates it")
                            .arg(role));
        default:
            return failDatabase(error);
        }
    }

    static bool administers(const QSqlDatabase &db, const QString &role)
    {
        return db::scalar(db,
                          QStringLiteral("SELECT COUNT(*) FROM information_schema.APPLICABLE_ROLES"
                                         " WHERE ROLE_NAME = ? AND IS_GRANTABLE = 'YES'"),
                          {role})
                   .toInt() > 0;
    }

    // MariaDB checks the privilege before it looks for the account: for one that cannot exist
    // (a host name with a space), "access denied" means no right and "invalid user" means the
    // right is there, and nothing changes either way.
    static bool maySetDefaultRoles(const QSqlDatabase &db)
    {
        try {
            db::execDirect(
                db, QStringLiteral("SET DEFAULT ROLE NONE FOR 'payops probe'@'no such host'"));
            return true;
        } catch (const db::Error &error) {
            if (error.serverCode() == 1044 || error.isAccessDenied())
                return false;
            return true;
        }
    }

    static QString notAdmin(const QString &self, const QString &role)
    {
        return tr("%1 does not administer the role %2, and MariaDB lets only a role's admins grant "
                  "it: the account "
                  "that ran payops migrate (it created the roles), or one it granted the role WITH "
                  "ADMIN OPTION. "
                  "Run payops grant as that account, or have it run: GRANT %2 TO %3 WITH ADMIN "
                  "OPTION;")
            .arg(self, role, quotedAccount(self));
    }

    static QString noDefaultRoleRight(const QString &self, const QString &role)
    {
        return tr("%1 administers %2 but may not set another account's default role (that needs "
                  "UPDATE on the "
                  "mysql schema); nothing changed. Have %1 run GRANT %2 TO 'root'@'localhost' WITH "
                  "ADMIN OPTION; "
                  "then run payops grant as root")
            .arg(self, role);
    }

    // CURRENT_USER() says root@localhost; GRANT wants 'root'@'localhost'.
    static QString quotedAccount(const QString &currentUser)
    {
        const qsizetype at = currentUser.lastIndexOf(QLatin1Char('@'));
        if (at < 0)
            return currentUser;
        return AccountName{currentUser.left(at), currentUser.mid(at + 1)}.sql();
    }

    const QCommandLineOption m_role{
        QStringLiteral("role"),
        tr("operator, finance or endpoint (payops-callbackd's own account)."),
        QStringLiteral("role")};
    const QCommandLineOption m_account{
        QStringLiteral("account"),
        tr("The account, as in SQL: 'alice'@'%', alice@localhost; a bare name "
           "means any host ('%')."),
        QStringLiteral("user@host")};
    const QCommandLineOption m_revoke{QStringLiteral("revoke"),
                                      tr("Take the role away (and clear it as the default role).")};
};

} // namespace

std::unique_ptr<Command> makeGrantCommand()
{
    return std::make_unique<GrantCommand>();
}

} // namespace payops::cli
