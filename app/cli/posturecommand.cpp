#include "commands.h"

#include "cli.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/inspection/posture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace payops::cli {
namespace {

// For cron and for the playbook's last step: exit 1 while any defence is missing. Unknown does
// not fail it (see posture.h), 2 means it could not look.
class PostureCommand final : public Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::PostureCommand)

public:
    PostureCommand()
        : Command(QStringLiteral("posture"),
                  tr("List each defence against paying twice as present, missing or unknown, with "
                     "what a "
                     "missing one lets through; exit 1 when any is missing, 2 on an error."),
                  QStringLiteral("(--db DSN | --read-db DSN) [--mapping FILE] [--json]"))
    {
    }

protected:
    void addOptions(QCommandLineParser &parser) override
    {
        parser.addOption(dbOption());
        parser.addOption(readDbOption());
        parser.addOption(mappingOption());
        parser.addOption(m_json);
    }

    int execute(const QCommandLineParser &parser) override
    {
        std::optional<mapping::Mapping> mapping;
        if (!mappingFrom(parser, &mapping))
            return UsageOrConnection;
        const auto dsn = readingDsnFrom(parser);
        if (!dsn)
            return UsageOrConnection;
        QList<Defence> defences;
        try {
            db::Connection connection(*dsn, QStringLiteral("posture"));
            defences = mapping ? inspectMappedPosture(connection.database(), *mapping)
                               : inspectPosture(connection.database());
        } catch (const db::Error &error) {
            // 1 means a missing defence here, so every failure is a 2.
            return fail(UsageOrConnection, db::userMessage(error));
        }
        if (parser.isSet(m_json))
            printJson(defences);
        else
            printText(defences);
        return allPresent(defences) ? Success : Refused;
    }

private:
    void printText(const QList<Defence> &defences) const
    {
        int width = 0;
        for (const Defence &defence : defences)
            width = std::max(width, static_cast<int>(defence.name.size()));
        for (const Defence &defence : defences) {
            QString line =
                QStringLiteral("%1 %2 %3: %4")
                    .arg(defenceStateName(defence.state).leftJustified(7),
                         defence.name.leftJustified(width), defence.title, defence.evidence);
            if (defence.state == DefenceState::Missing)
                line = tr("%1. Lets through: %2").arg(line, defence.letsThrough);
            say(line);
        }
    }

    static void printJson(const QList<Defence> &defences)
    {
        QJsonArray list;
        for (const Defence &defence : defences)
            list << QJsonObject{{QStringLiteral("name"), defence.name},
                                {QStringLiteral("state"), defenceStateName(defence.state)},
                                {QStringLiteral("lets_through"), defence.letsThrough},
                                {QStringLiteral("title"), defence.title},
                                {QStringLiteral("evidence"), defence.evidence}};
        QTextStream(stdout) << QJsonDocument(QJsonObject{{QStringLiteral("defences"), list}})
                                   .toJson(QJsonDocument::Compact)
                            << Qt::endl;
    }

    const QCommandLineOption m_json{QStringLiteral("json"),
                                    tr("Print the defences as one JSON object.")};
};

} // namespace

std::unique_ptr<Command> makePostureCommand()
{
    return std::make_unique<PostureCommand>();
}

} // namespace payops::cli
