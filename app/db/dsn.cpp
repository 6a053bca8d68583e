#include "dsn.h"

#include <QRegularExpression>
#include <QStringList>
#include <QUrl>
#include <QUrlQuery>

#include <algorithm>

namespace payops {

bool isPlainIdentifier(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9_$]{1,64}$"));
    return pattern.match(name).hasMatch();
}

namespace {

// The password as written, between the first ':' after the scheme and the last '@', found
// without trusting the URL syntax: in a DSN that does not parse, QUrl may not find it.
QString writtenPassword(const QString &text)
{
    const qsizetype scheme = text.indexOf(QLatin1String("://"));
    const qsizetype colon = text.indexOf(QLatin1Char(':'), scheme < 0 ? 0 : scheme + 3);
    const qsizetype at = text.lastIndexOf(QLatin1Char('@'));
    if (colon < 0 || at < colon)
        return QString();
    return text.mid(colon + 1, at - colon - 1);
}

// Error texts quote parts of the DSN; none may carry its password, however malformed.
QString withoutPassword(QString message, const QString &text, const QUrl &url)
{
    for (const QString &secret : {writtenPassword(text), url.password(QUrl::FullyEncoded),
                                  url.password(QUrl::FullyDecoded)}) {
        if (!secret.isEmpty())
            message.replace(secret, QStringLiteral("***"));
    }
    return message;
}

// QUrl's error text goes on to quote the source and its user info: only the reason is kept.
QString urlProblem(const QUrl &url)
{
    const QString text = url.errorString();
    const qsizetype source = text.indexOf(QLatin1String("; source was"));
    return source > 0 ? text.left(source) : Dsn::tr("it is not a URL");
}

// Where the list of servers is in `text` (after the user info, before the path): the start and
// the length; a length of -1 when there is no authority to find.
std::pair<qsizetype, qsizetype> serverListSpan(const QString &text)
{
    const qsizetype scheme = text.indexOf(QLatin1String("://"));
    if (scheme < 0)
        return {0, -1};
    qsizetype end = text.size();
    for (const QChar stop : {QLatin1Char('/'), QLatin1Char('?'), QLatin1Char('#')}) {
        const qsizetype at = text.indexOf(stop, scheme + 3);
        if (at >= 0)
            end = std::min(end, at);
    }
    const qsizetype at = text.lastIndexOf(QLatin1Char('@'), end - 1);
    const qsizetype start = at > scheme ? at + 1 : scheme + 3;
    return {start, end - start};
}

// One HOST[:PORT] of a list, read as QUrl reads the first.
std::optional<Dsn::Server> parseServer(const QString &text)
{
    const QUrl url(QStringLiteral("mysql://u@") + text + QStringLiteral("/d"), QUrl::StrictMode);
    if (text.isEmpty() || !url.isValid() || url.host().isEmpty() || url.port() == 0)
        return std::nullopt;
    return Dsn::Server{url.host(QUrl::FullyDecoded), url.port() > 0 ? url.port() : 3306};
}

// The text alone: a password that is not in it stays empty.
std::optional<Dsn> parseText(const QString &text, QString *error)
{
    QString trimmed = text.trimmed();
    // A list of servers: QUrl reads the first, and each later one is read on its own.
    QList<Dsn::Server> laterServers;
    QString badServer;
    if (const auto [start, length] = serverListSpan(trimmed); length > 0) {
        const QStringList servers = trimmed.mid(start, length).split(QLatin1Char(','));
        laterServers = Dsn::parseServers(servers.mid(1), &badServer).value_or(laterServers);
        trimmed = trimmed.left(start) + servers.first() + trimmed.mid(start + length);
    }
    const QUrl url(trimmed, QUrl::StrictMode);
    const auto fail = [error, &trimmed, &url](const QString &why) {
        if (error)
            *error = withoutPassword(
                Dsn::tr("invalid DSN: %1 (expected mysql://USER[:PASS]@HOST[:PORT]/DB"
                        " or mysql://USER@localhost/DB?socket=/path/to.sock)")
                    .arg(why),
                trimmed, url);
        return std::nullopt;
    };
    if (trimmed.isEmpty())
        return fail(Dsn::tr("it is empty"));
    if (!badServer.isNull())
        return fail(Dsn::tr("'%1' in the list of servers is not HOST[:PORT]").arg(badServer));
    if (!url.isValid())
        return fail(urlProblem(url));
    // QUrl keeps a Unicode noncharacter written as it is, but decodes one written %-encoded to
    // U+FFFD, so such a DSN could not be written back as itself. An IRI may not hold one either
    // (RFC 3987).
    const QList<uint> codePoints = trimmed.toUcs4();
    if (std::any_of(codePoints.begin(), codePoints.end(),
                    [](uint c) { return QChar::isNonCharacter(c); }))
        return fail(Dsn::tr("it is not a URL"));
    if (url.scheme() != QLatin1String("mysql"))
        return fail(Dsn::tr("scheme must be mysql://, not '%1'").arg(url.scheme()));
    if (!url.fragment().isNull())
        return fail(Dsn::tr("unexpected '#' part"));

    Dsn dsn;
    dsn.user = url.userName(QUrl::FullyDecoded);
    if (dsn.user.isEmpty())
        return fail(Dsn::tr("no user"));
    dsn.password = url.password(QUrl::FullyDecoded);
    dsn.host = url.host(QUrl::FullyDecoded);
    if (dsn.host.isEmpty())
        return fail(Dsn::tr("no host"));

    // StrictMode already refused a port that is not a number; 0 is the one it lets through.
    if (url.port() == 0)
        return fail(Dsn::tr("port is not a number from 1 to 65535"));
    if (url.port() > 0)
        dsn.port = url.port();

    QString path = url.path(QUrl::FullyDecoded);
    if (path.startsWith(QLatin1Char('/')))
        path.remove(0, 1);
    if (path.isEmpty())
        return fail(Dsn::tr("no database name"));
    if (!isPlainIdentifier(path))
        return fail(Dsn::tr("database name '%1' must be 1-64 letters, digits, _ or $").arg(path));
    dsn.database = path;

    const QUrlQuery query(url);
    for (const auto &[key, value] : query.queryItems(QUrl::FullyDecoded)) {
        if (key == QLatin1String("socket")) {
            if (!value.startsWith(QLatin1Char('/')))
                return fail(Dsn::tr("socket must be an absolute path"));
            dsn.socket = value;
        } else if (key == QLatin1String("ssl-ca")) {
            dsn.sslCa = value;
        } else if (key == QLatin1String("ssl-cert")) {
            dsn.sslCert = value;
        } else if (key == QLatin1String("ssl-key")) {
            dsn.sslKey = value;
        } else if (key == QLatin1String("connect-timeout")) {
            bool ok = false;
            dsn.connectTimeoutSeconds = value.toInt(&ok);
            if (!ok || dsn.connectTimeoutSeconds < 1 || dsn.connectTimeoutSeconds > 600)
                return fail(Dsn::tr("connect-timeout must be 1-600 seconds"));
        } else {
            return fail(Dsn::tr("unknown option '%1' (known: socket, ssl-ca, ssl-cert, "
                                "ssl-key, connect-timeout)")
                            .arg(key));
        }
    }
    if (!dsn.socket.isEmpty() && dsn.host != QLatin1String("localhost"))
        return fail(Dsn::tr("a socket needs host 'localhost'"));
    if (!dsn.socket.isEmpty() && !laterServers.isEmpty())
        return fail(Dsn::tr("a socket takes one server, not a list"));
    dsn.laterServers = laterServers;
    return dsn;
}

constexpr const char kPasswordVariable[] = "PAYOPS_DB_PASSWORD";

} // namespace

std::optional<Dsn> Dsn::parse(const QString &text, QString *error)
{
    auto dsn = parseText(text, error);
    if (dsn && dsn->password.isEmpty())
        dsn->password = qEnvironmentVariable(kPasswordVariable);
    return dsn;
}

std::optional<Dsn> Dsn::fromOptionOrEnvironment(const QString &option,
                                                const QProcessEnvironment &environment,
                                                QString *error)
{
    const QString text = option.isEmpty() ? environment.value(QStringLiteral("PAYOPS_DB")) : option;
    if (text.isEmpty()) {
        if (error)
            *error = Dsn::tr("no database given: pass --db DSN or set PAYOPS_DB");
        return std::nullopt;
    }
    auto dsn = parseText(text, error);
    if (dsn && dsn->password.isEmpty())
        dsn->password = environment.value(QLatin1String(kPasswordVariable));
    return dsn;
}

std::optional<Dsn> Dsn::readFromOptionOrEnvironment(const QString &option,
                                                    const QProcessEnvironment &environment,
                                                    QString *error)
{
    error->clear();
    const QString text =
        option.isEmpty() ? environment.value(QStringLiteral("PAYOPS_READ_DB")) : option;
    if (text.isEmpty())
        return std::nullopt;
    // A replica's account is seldom the primary's: its password has a variable of its own.
    auto dsn = parseText(text, error);
    if (!dsn)
        return dsn;
    if (dsn->password.isEmpty())
        dsn->password = environment.value(QStringLiteral("PAYOPS_READ_DB_PASSWORD"));
    return dsn->asReadOnly();
}

QString Dsn::commandLinePasswordWarning(const QString &dbOption)
{
    const auto dsn = parseText(dbOption, nullptr);
    if (!dsn || dsn->password.isEmpty())
        return {};
    return Dsn::tr(
        "the password in --db can be read by every user of this machine (ps, /proc/PID/cmdline): "
        "leave it out of the DSN and set PAYOPS_DB_PASSWORD instead, which only you and root can "
        "read");
}

Dsn Dsn::withDatabase(const QString &name) const
{
    Dsn copy = *this;
    copy.database = name;
    return copy;
}

QString Dsn::toString(bool includePassword) const
{
    // Every part is handed over decoded and percent-encoded here, so that a '%' in a password or
    // a path stays a '%': QUrl's default (tolerant) setters and QUrlQuery would take "%41" in a
    // value as an encoded 'A', and the DSN would parse back as another one.
    QUrl url;
    url.setScheme(QStringLiteral("mysql"));
    url.setUserName(user, QUrl::DecodedMode);
    if (includePassword && !password.isEmpty())
        url.setPassword(password, QUrl::DecodedMode);
    url.setHost(host, QUrl::DecodedMode);
    if (socket.isEmpty() && port != 3306)
        url.setPort(port);
    url.setPath(QLatin1Char('/') + database, QUrl::DecodedMode);
    QStringList items;
    const auto add = [&items](const char *key, const QString &value) {
        items << QLatin1String(key) + QLatin1Char('=') +
                     QString::fromLatin1(QUrl::toPercentEncoding(value, "/"));
    };
    if (!socket.isEmpty())
        add("socket", socket);
    if (!sslCa.isEmpty())
        add("ssl-ca", sslCa);
    if (!sslCert.isEmpty())
        add("ssl-cert", sslCert);
    if (!sslKey.isEmpty())
        add("ssl-key", sslKey);
    if (connectTimeoutSeconds != 5)
        add("connect-timeout", QString::number(connectTimeoutSeconds));
    if (!items.isEmpty())
        url.setQuery(items.join(QLatin1Char('&')), QUrl::StrictMode);
    QString text = url.toString(QUrl::FullyEncoded);
    // The later servers go after the first, each written as QUrl writes a host and port.
    QString later;
    for (const Server &server : laterServers) {
        QUrl one;
        one.setHost(server.host, QUrl::DecodedMode);
        if (server.port != 3306)
            one.setPort(server.port);
        later += QLatin1Char(',') + one.authority(QUrl::FullyEncoded);
    }
    const auto [start, length] = serverListSpan(text);
    return text.insert(start + length, later);
}

QString Dsn::toDisplayString() const
{
    return toString(false);
}

std::optional<QList<Dsn::Server>> Dsn::parseServers(const QStringList &texts, QString *bad)
{
    QList<Server> servers;
    for (const QString &text : texts) {
        const auto server = parseServer(text);
        if (!server) {
            *bad = text;
            return std::nullopt;
        }
        servers << *server;
    }
    return servers;
}

} // namespace payops
