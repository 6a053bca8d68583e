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
    parser.setApplicationDescription(
        tr("%1\n\nUsage: payops %2 %3").arg(m_summary, m_name, m_usage));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  tr("Show this help."));
    const QCommandLineOption logLevel(QStringLiteral("log-level"),
                                      tr("trace, debug, info, warn, error or off (default: "
                                         "PAYOPS_LOG_LEVEL, else info)."),
                                      QStringLiteral("level"));
    parser.addOption(help);
    parser.addOption(logLevel);
    addOptions(parser);

    QStringList withProgram = arguments;
    withProgram.prepend(QStringLiteral("payops ") + m_name);
    if (!parser.parse(withProgram)) {
        setupLogging(QStringLiteral("payops"), 2);
        return fail(UsageOrConnection,
                    tr("%1 (see payops %2 --help)").arg(parser.errorText(), m_name));
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
    const bool connectionFailed =
        error.isConnectionFailure() || code == 1044 || code == 1045 || code == 1049;
    return fail(connectionFailed ? UsageOrConnection : Refused, db::userMessage(error));
}

void Command::say(const QString &line) const
{
    QTextStream out(stdout);
    out << line << Qt::endl;
}

bool Command::noArguments(const QCommandLineParser &parser) const
{
    if (parser.positionalArguments().isEmpty())
        return true;
    fail(UsageOrConnection, tr("unexpected argument \"%1\" (see payops %2 --help)")
                                .arg(parser.positionalArguments().constFirst(), m_name));
    return false;
}

QCommandLineOption Command::dbOption()
{
    return QCommandLineOption(QStringLiteral("db"),
                              tr("Database: mysql://USER[:PASS]@HOST[:PORT]/DB or "
                                 "mysql://USER@localhost/DB?socket=/path. Default: PAYOPS_DB. "
                                 "The password may come from PAYOPS_DB_PASSWORD."),
                              QStringLiteral("dsn"));
}

std::optional<Dsn> Command::dsnFrom(const QCommandLineParser &parser) const
{
    QString error;
    auto dsn = Dsn::fromOptionOrEnvironment(parser.value(dbOption()),
                                            QProcessEnvironment::systemEnvironment(), &error);
    if (!dsn)
        fail(UsageOrConnection, error);
    else if (const QString warning = Dsn::commandLinePasswordWarning(parser.value(dbOption()));
             !warning.isEmpty())
        spdlog::warn("{}", warning.toStdString());
    return dsn;
}

QCommandLineOption Command::readDbOption()
{
    return QCommandLineOption(
        QStringLiteral("read-db"),
        tr("Read from this database instead, usually a replica of --db; the password may come "
           "from PAYOPS_READ_DB_PASSWORD. Default: PAYOPS_READ_DB."),
        QStringLiteral("dsn"));
}

bool Command::readDsnFrom(const QCommandLineParser &parser, std::optional<Dsn> *dsn) const
{
    QString error;
    *dsn = Dsn::readFromOptionOrEnvironment(parser.value(readDbOption()),
                                            QProcessEnvironment::systemEnvironment(), &error);
    if (!error.isEmpty()) {
        fail(UsageOrConnection, tr("--read-db: %1").arg(error));
        return false;
    }
    if (const QString warning = Dsn::commandLinePasswordWarning(parser.value(readDbOption()));
        !warning.isEmpty())
        spdlog::warn("{}", warning.toStdString());
    return true;
}

std::optional<Dsn> Command::readingDsnFrom(const QCommandLineParser &parser) const
{
    std::optional<Dsn> read;
    if (!readDsnFrom(parser, &read))
        return std::nullopt;
    return read ? read : dsnFrom(parser);
}

QCommandLineOption Command::mappingOption()
{
    return QCommandLineOption(QStringLiteral("mapping"),
                              tr("The team's own tables, described by a TOML mapping file "
                                 "(docs/mapping.md). Default: PAYOPS_MAPPING; without one, "
                                 "payops's own tables."),
                              QStringLiteral("file"));
}

bool Command::mappingFrom(const QCommandLineParser &parser,
                          std::optional<mapping::Mapping> *mapping) const
{
    const QString path = mapping::mappingPathFrom(parser.value(mappingOption()));
    if (path.isEmpty())
        return true;
    try {
        *mapping = mapping::loadMapping(path);
        return true;
    } catch (const mapping::MappingError &error) {
        fail(UsageOrConnection, error.message());
        return false;
    }
}

} // namespace payops::cli
