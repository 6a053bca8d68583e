#include "command.h"

#include "cli.h"
#include "db/dberror.h"
#include "log/logging.h"

#include <QTextStream>

#include <spdlog/spdlog.h>

#include <cstdio>

namespace payops::cli {

Command::Command(QString name, QString summary, QString usage)
    : m_name(std::move(name))
    , m_summary(std::move(summary))
    , m_usage(std::move(usage))
{
}

int Command::run(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(m_summary + QStringLiteral("\n\nUsage: payops ") + m_name
                                     + QLatin1Char(' ') + m_usage);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help."));
    const QCommandLineOption logLevel(QStringLiteral("log-level"),
                                      QStringLiteral("trace, debug, info, warn, error or off (default: "
                                                     "PAYOPS_LOG_LEVEL, else info)."),
                                      QStringLiteral("level"));
    parser.addOption(help);
    parser.addOption(logLevel);
    addOptions(parser);

    QStringList withProgram = arguments;
    withProgram.prepend(QStringLiteral("payops ") + m_name);
    if (!parser.parse(withProgram)) {
        setupLogging(QStringLiteral("payops"), 2);
        return fail(UsageOrConnection, parser.errorText() + QStringLiteral(" (see payops ") + m_name + QStringLiteral(" --help)"));
    }
    if (parser.isSet(help)) {
        QTextStream(stdout) << parser.helpText();
        return Success;
    }
    const LogLevelChoice level = chooseLogLevel(parser.value(logLevel));
    setupLogging(QStringLiteral("payops"), level.level);
    if (!level.error.isEmpty())
        return fail(UsageOrConnection, level.error);
    return execute(parser);
}

int Command::fail(int exitCode, const QString &message) const
{
    spdlog::error("{}", message.toStdString());
    return exitCode;
}

int Command::failDatabase(const db::Error &error) const
{
    const int code = error.serverCode();
    const bool connectionFailed = error.isConnectionFailure() || code == 1044 || code == 1045 || code == 1049;
    return fail(connectionFailed ? UsageOrConnection : Refused, db::userMessage(error));
}

void Command::say(const QString &line) const
{
    QTextStream out(stdout);
    out << line << Qt::endl;
}

QCommandLineOption Command::dbOption()
{
    return QCommandLineOption(QStringLiteral("db"),
                              QStringLiteral("Database: mysql://USER[:PASS]@HOST[:PORT]/DB or "
                                             "mysql://USER@localhost/DB?socket=/path. Default: PAYOPS_DB. "
                                             "The password may come from PAYOPS_DB_PASSWORD."),
                              QStringLiteral("dsn"));
}

std::optional<Dsn> Command::dsnFrom(const QCommandLineParser &parser) const
{
    QString error;
    auto dsn = Dsn::fromOptionOrEnvironment(parser.value(dbOption()), QProcessEnvironment::systemEnvironment(), &error);
    if (!dsn)
        fail(UsageOrConnection, error);
    return dsn;
}

} // namespace payops::cli
