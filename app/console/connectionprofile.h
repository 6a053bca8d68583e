#pragma once

#include "db/dsn.h"
#include "domain/mapping/mapping.h"

#include <QCoreApplication>
#include <QList>
#include <QProcessEnvironment>
#include <QString>

#include <optional>

namespace payops::db {
struct StandaloneContext;
}

namespace payops::console {

// A saved way to reach a database. Never holds the password: that lives in the system
// keychain, or nowhere when the machine has none.
struct ConnectionProfile
{
    Q_DECLARE_TR_FUNCTIONS(payops::console::ConnectionProfile)

public:
    QString name;
    QString host = QStringLiteral("localhost");
    int port = 3306;
    QString socket;
    // Optional: the servers that take over after a failover, "HOST[:PORT], ...", tried after
    // host:port in order, as a DSN's list of servers (docs/servers.md, "Failover").
    QString failover;
    QString user;
    QString database;
    QString sslCa;
    QString sslCert;
    QString sslKey;
    QString mapping; // a mapping file of the team's own tables (docs/mapping.md); empty: none
    // Optional: a replica the pages read from (--read-db), the same database and TLS files on
    // another server, perhaps as another account. Unused while neither host nor socket is set.
    QString readHost;
    int readPort = 3306;
    QString readSocket;
    QString readUser;

    // What is wrong with the profile as a whole, in one line; empty when nothing is.
    QString problem() const;
    Dsn toDsn(const QString &password) const;
    // The read database, or nullopt when the profile has none.
    std::optional<Dsn> toReadDsn(const QString &password) const;
    // The keychain entry of this profile's password, and of its read database's.
    QString keychainKey() const
    {
        return QStringLiteral("%1@%2/%3").arg(user, socket.isEmpty() ? host : socket, database);
    }
    QString readKeychainKey() const
    {
        return QStringLiteral("%1@%2/%3")
            .arg(readUser, readSocket.isEmpty() ? readHost : readSocket, database);
    }
};

// What the console is connected to: a database, and the mapping of the team's own tables when
// the pages read those instead of payops's own.
// A DSN alone converts to a target on payops's own tables.
struct Target
{
    Target(Dsn database, std::optional<mapping::Mapping> tables = std::nullopt)
        : dsn(std::move(database))
        , mapping(std::move(tables))
    {
    }

    Dsn dsn;
    std::optional<mapping::Mapping> mapping;
    // Where the pages read from when it is not `dsn`: usually a replica (--read-db), in sessions
    // that refuse writes (Dsn::asReadOnly). Actions
    // (switch, drain, compensate, approve) always run on `dsn`, the primary.
    std::optional<Dsn> readDsn;

    // Where reads go: the read database in a read-only session when there is one, else `dsn`.
    Dsn readingDsn() const { return readDsn ? readDsn->asReadOnly() : dsn; }
};

// The mapping the console starts with: --mapping when given, else PAYOPS_MAPPING; none when
// neither is set. A file that cannot be used gives nullopt and *error its one line.
std::optional<mapping::Mapping> startupMapping(const QString &mappingOption, QString *error);

// The database the console opens at start without asking: --db when given, else PAYOPS_DB,
// with PAYOPS_DB_PASSWORD, as every payops binary reads them. None when neither is set or the
// sandbox is asked for (then the connection dialog or the sandbox chooses). A DSN that does not
// parse gives nullopt and *error one line.
std::optional<Dsn> startupDsn(const QString &dbOption, bool sandbox,
                              const QProcessEnvironment &environment, QString *error);

QList<ConnectionProfile> loadProfiles();
// Adds or replaces (by name).
void saveProfile(const ConnectionProfile &profile);
void removeProfile(const QString &name);

// A standalone job (console::Worker::submitStandalone) for the connection dialog: opens a
// connection with the worker's DSN and closes it again, returning that DSN once it is known
// to work. It can take the whole connect timeout. Throws db::Error with the reason.
Dsn probeConnection(const db::StandaloneContext &context);

} // namespace payops::console
