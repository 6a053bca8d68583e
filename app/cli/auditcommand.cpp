#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditlog.h"

namespace payops::cli {
namespace {

class AuditCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::AuditCommand)

public:
    AuditCommand()
        : Command(QStringLiteral("audit"), tr("Verify that the audit log's hash chain is whole."),
                  QStringLiteral("verify (--db DSN | --read-db DSN)"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addPositionalArgument(QStringLiteral("verify"), tr("Walk the chain."));
        parser.addOption(dbOption());
        parser.addOption(readDbOption());
    }

    int execute(const QCommandLineParser &parser) override
    {
        if (parser.positionalArguments() != QStringList{QStringLiteral("verify")})
            return fail(UsageOrConnection, tr("say: payops audit verify --db DSN"));
        const auto dsn = readingDsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        try {
            db::Connection connection(*dsn, QStringLiteral("audit"));
            const AuditVerification result = verifyAuditChain(connection.database());
            if (!result.intact)
                return fail(Refused,
                            tr("audit log broken at row %1: %2")
                                .arg(QString::number(result.firstBrokenId), result.problem));
            say(tr("audit log intact: %1 row(s); head hash %2")
                    .arg(QString::number(result.rows), result.headHash));
            return Success;
        } catch (const db::Error &error) {
            return failDatabase(error);
        }
    }
};

} // namespace

std::unique_ptr<Command> makeAuditCommand()
{
    return std::make_unique<AuditCommand>();
}

} // namespace payops::cli
