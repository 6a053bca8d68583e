#pragma once

#include "db/dsn.h"
#include "domain/mapping/mapping.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <optional>

namespace payops::db {
class Error;
}

namespace payops::cli {

// What every subcommand shares: its parser with --help and --log-level, one-line errors,
// and the --db option with PAYOPS_DB as its fallback.
class Command
{
    Q_DECLARE_TR_FUNCTIONS(payops::cli::Command)

public:
    Command(QString name, QString summary, QString usage);
    virtual ~Command() = default;

    const QString &name() const { return m_name; }
    const QString &summary() const { return m_summary; }
    int run(const QStringList &arguments);

protected:
    virtual void addOptions(QCommandLineParser &parser) = 0;
    virtual int execute(const QCommandLineParser &parser) = 0;

    // One line on stderr (and in the log file); returns the exit code for convenience.
    int fail(int exitCode, const QString &message) const;
    void say(const QString &line) const;
    // One line for a database failure: exit 2 when the connection itself failed (unreachable,
    // login refused, no such database), 1 when the database refused the operation.
    int failDatabase(const db::Error &error) const;

    // For a command that takes no positional argument: false, with the first one named, when
    // one was given (a stray word is more often a mistyped flag than something to ignore).
    bool noArguments(const QCommandLineParser &parser) const;

    static QCommandLineOption dbOption();
    // Parses --db (or PAYOPS_DB); on failure prints the reason and returns nullopt.
    std::optional<Dsn> dsnFrom(const QCommandLineParser &parser) const;

    // --read-db DSN (or PAYOPS_READ_DB): a replica the read commands read instead of --db.
    static QCommandLineOption readDbOption();
    // False, with the reason printed, when --read-db is given and does not parse; `*dsn` stays
    // empty when none is given.
    bool readDsnFrom(const QCommandLineParser &parser, std::optional<Dsn> *dsn) const;
    // What a command that only reads connects to: --read-db when given, else --db.
    std::optional<Dsn> readingDsnFrom(const QCommandLineParser &parser) const;

    // --mapping FILE, with PAYOPS_MAPPING as its fallback: the team's own tables
    // (docs/mapping.md).
    static QCommandLineOption mappingOption();
    // Reads the mapping the options name. `*mapping` stays empty when none is named; false, with
    // the reason printed, when the file cannot be used.
    bool mappingFrom(const QCommandLineParser &parser,
                     std::optional<mapping::Mapping> *mapping) const;

private:
    QString m_name;
    QString m_summary;
    QString m_usage;
};

} // namespace payops::cli
