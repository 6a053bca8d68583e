#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/mapping/mappingcheck.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace payops::cli {
namespace {

// `payops mapping check`: a mapping tried on the live database before anything reads or writes
// through it. 1 means the mapping is wrong, so every other failure (usage, an unusable file, the
// database) is a 2, as in posture.
class MappingCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::MappingCommand)

public:
    MappingCommand()
        : Command(QStringLiteral("mapping"),
                  tr("Check a mapping file against the team's tables: names, types, state "
                     "values, conditions and indexes; exit 1 on an error in the mapping, 2 when "
                     "it could not check."),
                  QStringLiteral("check --mapping FILE --db DSN [--json]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addPositionalArgument(QStringLiteral("check"), tr("Check the mapping."));
        parser.addOption(dbOption());
        parser.addOption(mappingOption());
        parser.addOption(m_json);
    }

    int execute(const QCommandLineParser &parser) override
    {
        if (parser.positionalArguments() != QStringList{QStringLiteral("check")})
            return fail(UsageOrConnection, tr("say: payops mapping check --mapping FILE --db DSN"));
        std::optional<mapping::Mapping> mapping;
        if (!mappingFrom(parser, &mapping))
            return UsageOrConnection;
        if (!mapping)
            return fail(UsageOrConnection,
                        tr("--mapping FILE is required (or PAYOPS_MAPPING): the file to check"));
        const auto dsn = dsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        mapping::MappingCheck check;
        try {
            db::Connection connection(*dsn, QStringLiteral("mapping"));
            check = mapping::checkMapping(connection.database(), *mapping);
        } catch (const db::Error &error) {
            return fail(UsageOrConnection, db::userMessage(error));
        }
        if (parser.isSet(m_json))
            printJson(check);
        else
            printText(check, mapping->path);
        return check.hasErrors() ? Refused : Success;
    }

private:
    void printText(const mapping::MappingCheck &check, const QString &path) const
    {
        int errors = 0;
        for (const mapping::MappingProblem &problem : check.problems) {
            errors += problem.severity == mapping::Severity::Error;
            say(QStringLiteral("%1 %2: %3")
                    .arg(mapping::severityName(problem.severity).leftJustified(7), problem.where,
                         problem.message));
        }
        const int warnings = static_cast<int>(check.problems.size()) - errors;
        if (errors > 0)
            say(tr("%1: %2 error(s), %3 warning(s): fix the errors before using it")
                    .arg(path, QString::number(errors), QString::number(warnings)));
        else if (warnings > 0)
            say(tr("%1: usable, %2 warning(s)").arg(path, QString::number(warnings)));
        else
            say(tr("%1: usable, nothing to warn about").arg(path));
    }

    static void printJson(const mapping::MappingCheck &check)
    {
        QJsonArray list;
        for (const mapping::MappingProblem &problem : check.problems)
            list << QJsonObject{
                {QStringLiteral("severity"), mapping::severityName(problem.severity)},
                {QStringLiteral("where"), problem.where},
                {QStringLiteral("message"), problem.message}};
        QTextStream(stdout) << QJsonDocument(
                                   QJsonObject{{QStringLiteral("problems"), list},
                                               {QStringLiteral("usable"), !check.hasErrors()}})
                                   .toJson(QJsonDocument::Compact)
                            << Qt::endl;
    }

    const QCommandLineOption m_json{QStringLiteral("json"),
                                    tr("Print the problems as one JSON object.")};
};

} // namespace

std::unique_ptr<Command> makeMappingCommand()
{
    return std::make_unique<MappingCommand>();
}

} // namespace payops::cli
