#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "roleaccounts.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <algorithm>

namespace payops::cli {
namespace {

// Columns on a terminal: CJK characters take two cells, so that the Chinese headers line up
// with the names below them.
qsizetype terminalWidth(const QString &text)
{
    qsizetype width = 0;
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const bool wide = (u >= 0x1100 && u <= 0x115F) || (u >= 0x2E80 && u <= 0xA4CF) ||
                          (u >= 0xAC00 && u <= 0xD7A3) || (u >= 0xF900 && u <= 0xFAFF) ||
                          (u >= 0xFE30 && u <= 0xFE4F) || (u >= 0xFF00 && u <= 0xFF60) ||
                          (u >= 0xFFE0 && u <= 0xFFE6);
        width += wide ? 2 : 1;
    }
    return width;
}

// Who holds which payops role, read from the server's own grant tables: an account's grants
// are server-wide, so no payops table could know them.
class AccountsCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::AccountsCommand)

public:
    AccountsCommand()
        : Command(QStringLiteral("accounts"),
                  tr("List the accounts that hold payops_operator, payops_finance or "
                     "payops_endpoint, whether it is their "
                     "default role and whether they may grant it."),
                  QStringLiteral("--db DSN [--json]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(m_json);
    }

    int execute(const QCommandLineParser &parser) override
    {
        if (!noArguments(parser))
            return UsageOrConnection;
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("accounts"));
            QList<RoleHolder> holders;
            try {
                holders = readRoleHolders(connection.database(), connection.isMariaDb());
            } catch (const db::Error &error) {
                if (!error.isAccessDenied())
                    throw;
                return fail(Refused, connection.isMariaDb()
                                         ? tr("this account may not read mysql.roles_mapping and "
                                              "mysql.user, where MariaDB keeps who "
                                              "holds which role; run payops accounts as a DBA "
                                              "account such as root, or grant it: "
                                              "GRANT SELECT ON mysql.roles_mapping TO ...; GRANT "
                                              "SELECT ON mysql.user TO ...;")
                                         : tr("this account may not read mysql.role_edges and "
                                              "mysql.default_roles, where MySQL keeps who "
                                              "holds which role; run payops accounts as a DBA "
                                              "account such as root"));
            }
            if (parser.isSet(m_json))
                printJson(holders);
            else
                printTable(holders);
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }

private:
    void printTable(const QList<RoleHolder> &holders) const
    {
        if (holders.isEmpty()) {
            say(tr("no account holds a payops role (payops grant gives one)"));
            return;
        }
        const QString yes = tr("yes");
        const QString no = tr("no");
        const QStringList header{tr("ROLE"), tr("ACCOUNT"), tr("DEFAULT"), tr("ADMIN")};
        QList<QStringList> rows{header};
        for (const RoleHolder &holder : holders)
            rows << QStringList{holder.role, holder.account(), holder.isDefault ? yes : no,
                                holder.admin ? yes : no};
        QList<qsizetype> widths(header.size(), 0);
        for (const QStringList &row : rows) {
            for (qsizetype i = 0; i < row.size(); ++i)
                widths[i] = std::max(widths[i], terminalWidth(row[i]));
        }
        for (const QStringList &row : rows) {
            QString line;
            for (qsizetype i = 0; i < row.size(); ++i) {
                line += row[i];
                if (i + 1 < row.size())
                    line += QString(widths[i] + 2 - terminalWidth(row[i]), QLatin1Char(' '));
            }
            say(line);
        }
    }

    static void printJson(const QList<RoleHolder> &holders)
    {
        QJsonArray list;
        for (const RoleHolder &holder : holders) {
            list << QJsonObject{{QStringLiteral("role"), holder.role},
                                {QStringLiteral("user"), holder.user},
                                {QStringLiteral("host"), holder.host},
                                {QStringLiteral("account"), holder.account()},
                                {QStringLiteral("default"), holder.isDefault},
                                {QStringLiteral("admin"), holder.admin}};
        }
        const QJsonObject object{{QStringLiteral("holders"), list}};
        QTextStream(stdout) << QJsonDocument(object).toJson(QJsonDocument::Compact) << Qt::endl;
    }

    const QCommandLineOption m_json{QStringLiteral("json"),
                                    tr("Print the holders as one JSON object.")};
};

} // namespace

std::unique_ptr<Command> makeAccountsCommand()
{
    return std::make_unique<AccountsCommand>();
}

} // namespace payops::cli
