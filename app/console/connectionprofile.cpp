#include "connectionprofile.h"

#include "consolesettings.h"
#include "db/connection.h"
#include "db/dbworker.h"

namespace payops::console {

namespace {

QStringList failoverServers(const QString &failover)
{
    QStringList servers = failover.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (QString &server : servers)
        server = server.trimmed();
    return servers;
}

} // namespace

QString ConnectionProfile::problem() const
{
    if (user.isEmpty() || database.isEmpty())
        return ConnectionProfile::tr("A user and a database are needed.");
    if (failover.trimmed().isEmpty())
        return {};
    if (!socket.isEmpty())
        return ConnectionProfile::tr("A socket reaches one server: give host and port to list "
                                     "servers to fail over to.");
    QString bad;
    if (!Dsn::parseServers(failoverServers(failover), &bad))
        return ConnectionProfile::tr("'%1' in the servers to fail over to is not HOST[:PORT].")
            .arg(bad);
    return {};
}

Dsn ConnectionProfile::toDsn(const QString &password) const
{
    Dsn dsn;
    dsn.host = host.isEmpty() ? QStringLiteral("localhost") : host;
    dsn.port = port;
    dsn.socket = socket;
    if (socket.isEmpty()) {
        QString bad;
        dsn.laterServers =
            Dsn::parseServers(failoverServers(failover), &bad).value_or(dsn.laterServers);
    }
    dsn.user = user;
    dsn.password = password;
    dsn.database = database;
    dsn.sslCa = sslCa;
    dsn.sslCert = sslCert;
    dsn.sslKey = sslKey;
    return dsn;
}

std::optional<Dsn> ConnectionProfile::toReadDsn(const QString &password) const
{
    if (readHost.isEmpty() && readSocket.isEmpty())
        return std::nullopt;
    ConnectionProfile replica = *this;
    replica.host = readHost;
    replica.port = readPort;
    replica.socket = readSocket;
    replica.failover.clear();
    replica.user = readUser.isEmpty() ? user : readUser;
    return replica.toDsn(password).asReadOnly();
}

std::optional<mapping::Mapping> startupMapping(const QString &mappingOption, QString *error)
{
    const QString path = mapping::mappingPathFrom(mappingOption);
    if (path.isEmpty())
        return std::nullopt;
    try {
        return mapping::loadMapping(path);
    } catch (const mapping::MappingError &failure) {
        *error = failure.message();
        return std::nullopt;
    }
}

std::optional<Dsn> startupDsn(const QString &dbOption, bool sandbox,
                              const QProcessEnvironment &environment, QString *error)
{
    error->clear();
    const bool fromEnvironment =
        !sandbox && !environment.value(QStringLiteral("PAYOPS_DB")).isEmpty();
    if (dbOption.isEmpty() && !fromEnvironment)
        return std::nullopt;
    return Dsn::fromOptionOrEnvironment(dbOption, environment, error);
}

QList<ConnectionProfile> loadProfiles()
{
    const auto store = openConsoleSettings();
    QSettings &settings = *store;
    QList<ConnectionProfile> profiles;
    const int n = settings.beginReadArray(QStringLiteral("profiles"));
    for (int i = 0; i < n; ++i) {
        settings.setArrayIndex(i);
        ConnectionProfile p;
        p.name = settings.value(QStringLiteral("name")).toString();
        p.host = settings.value(QStringLiteral("host"), p.host).toString();
        p.port = settings.value(QStringLiteral("port"), 3306).toInt();
        p.socket = settings.value(QStringLiteral("socket")).toString();
        p.failover = settings.value(QStringLiteral("failover")).toString();
        p.user = settings.value(QStringLiteral("user")).toString();
        p.database = settings.value(QStringLiteral("database")).toString();
        p.sslCa = settings.value(QStringLiteral("sslCa")).toString();
        p.sslCert = settings.value(QStringLiteral("sslCert")).toString();
        p.sslKey = settings.value(QStringLiteral("sslKey")).toString();
        p.mapping = settings.value(QStringLiteral("mapping")).toString();
        p.readHost = settings.value(QStringLiteral("readHost")).toString();
        p.readPort = settings.value(QStringLiteral("readPort"), 3306).toInt();
        p.readSocket = settings.value(QStringLiteral("readSocket")).toString();
        p.readUser = settings.value(QStringLiteral("readUser")).toString();
        if (!p.name.isEmpty())
            profiles << p;
    }
    settings.endArray();
    return profiles;
}

namespace {

void writeProfiles(const QList<ConnectionProfile> &profiles)
{
    const auto store = openConsoleSettings();
    QSettings &settings = *store;
    settings.remove(QStringLiteral("profiles"));
    settings.beginWriteArray(QStringLiteral("profiles"), int(profiles.size()));
    for (int i = 0; i < profiles.size(); ++i) {
        const ConnectionProfile &p = profiles.at(i);
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("name"), p.name);
        settings.setValue(QStringLiteral("host"), p.host);
        settings.setValue(QStringLiteral("port"), p.port);
        settings.setValue(QStringLiteral("socket"), p.socket);
        settings.setValue(QStringLiteral("failover"), p.failover);
        settings.setValue(QStringLiteral("user"), p.user);
        settings.setValue(QStringLiteral("database"), p.database);
        settings.setValue(QStringLiteral("sslCa"), p.sslCa);
        settings.setValue(QStringLiteral("sslCert"), p.sslCert);
        settings.setValue(QStringLiteral("sslKey"), p.sslKey);
        settings.setValue(QStringLiteral("mapping"), p.mapping);
        settings.setValue(QStringLiteral("readHost"), p.readHost);
        settings.setValue(QStringLiteral("readPort"), p.readPort);
        settings.setValue(QStringLiteral("readSocket"), p.readSocket);
        settings.setValue(QStringLiteral("readUser"), p.readUser);
    }
    settings.endArray();
}

} // namespace

void saveProfile(const ConnectionProfile &profile)
{
    QList<ConnectionProfile> profiles = loadProfiles();
    bool replaced = false;
    for (ConnectionProfile &p : profiles)
        if (p.name == profile.name) {
            p = profile;
            replaced = true;
        }
    if (!replaced)
        profiles << profile;
    writeProfiles(profiles);
}

void removeProfile(const QString &name)
{
    QList<ConnectionProfile> profiles = loadProfiles();
    profiles.removeIf([&name](const ConnectionProfile &p) { return p.name == name; });
    writeProfiles(profiles);
}

Dsn probeConnection(const db::StandaloneContext &context)
{
    const db::Connection probe(context.dsn, QStringLiteral("dialog"));
    return context.dsn;
}

} // namespace payops::console
