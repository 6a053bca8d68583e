#pragma once

#include <QCoreApplication>
#include <QList>
#include <QProcessEnvironment>
#include <QString>

#include <optional>

namespace payops {

// Where a binary connects: mysql://USER[:PASS]@HOST[:PORT]/DB[?socket=/path&...].
// The password may come from PAYOPS_DB_PASSWORD instead of the text. A primary and the replica
// that takes over from it are written as one list, mysql://USER@HOST1[:PORT1],HOST2[:PORT2]/DB:
// each connection goes to the first of them that answers and takes writes (db::Connection).
// A failover then needs no restart (docs/servers.md, "Failover").
struct Dsn
{
    Q_DECLARE_TR_FUNCTIONS(payops::Dsn)

public:
    QString user;
    QString password;
    QString host;
    int port = 3306;
    QString database;
    // The servers after host:port in a list of several, in the order they are tried.
    struct Server
    {
        QString host;
        int port = 3306;
        bool operator==(const Server &) const = default;
    };
    QList<Server> laterServers;
    QString socket; // unix socket path; when set, host and port are not used
    QString sslCa;
    QString sslCert;
    QString sslKey;
    int connectTimeoutSeconds = 5;
    // Sessions opened with it refuse every write (SET SESSION TRANSACTION READ ONLY): a read
    // database given as --read-db is a replica, where a privileged account could otherwise
    // write past read_only and break replication with a transaction the primary never had.
    bool readOnlySession = false;
    // Sessions opened with it wait for a row lock no longer than this many seconds
    // (innodb_lock_wait_timeout); 0 keeps the server's (50 s by default). Set by
    // payops-callbackd from --lock-timeout, for every connection it opens.
    int lockWaitSeconds = 0;

    // The same DSN with readOnlySession set.
    Dsn asReadOnly() const
    {
        Dsn copy = *this;
        copy.readOnlySession = true;
        return copy;
    }

    // Servers written HOST[:PORT], each as in a list of several; nullopt with *bad the first
    // that does not parse.
    static std::optional<QList<Server>> parseServers(const QStringList &texts, QString *bad);
    // Parses the text; on failure returns nullopt and sets *error to one line naming the fault.
    static std::optional<Dsn> parse(const QString &text, QString *error);
    // What every binary's --db means: `option` when given, else PAYOPS_DB, with the password
    // from PAYOPS_DB_PASSWORD when the text has none, both read from `environment`. On
    // failure (none given, or it does not parse) nullopt and *error one line.
    static std::optional<Dsn> fromOptionOrEnvironment(const QString &option,
                                                      const QProcessEnvironment &environment,
                                                      QString *error);

    // --read-db: `option` when given, else PAYOPS_READ_DB, with the password from
    // PAYOPS_READ_DB_PASSWORD. nullopt with *error empty when neither is set.
    static std::optional<Dsn> readFromOptionOrEnvironment(const QString &option,
                                                          const QProcessEnvironment &environment,
                                                          QString *error);

    // What every binary warns at start when its --db option holds a password, which every user
    // of the machine can read (ps, /proc/PID/cmdline); empty when it holds none.
    static QString commandLinePasswordWarning(const QString &dbOption);

    // The same DSN with another database name (tests, sandbox setup).
    Dsn withDatabase(const QString &name) const;

    // A form safe for logs and screens: the password is never shown.
    QString toDisplayString() const;
    // A form that parses back to this DSN, password included only when includePassword.
    QString toString(bool includePassword = false) const;
};

// True for names MySQL and MariaDB accept unquoted: letters, digits, _ and $, at most 64.
bool isPlainIdentifier(const QString &name);

} // namespace payops
