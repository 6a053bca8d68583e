#include "connection.h"

#include "dberror.h"
#include "localinfile.h"
#include "log/logging.h"
#include "sqltext.h"

#include <QAtomicInteger>
#include <QDeadlineTimer>
#include <QHash>
#include <QRandomGenerator>
#include <QSet>
#include <QSqlDriver>
#include <QSqlField>
#include <QSqlQuery>
#include <QStringList>
#include <QThread>

#include <algorithm>
#include <mutex>
#include <optional>

namespace payops::db {
namespace {

QAtomicInteger<quint64> g_connectionCounter;

// Qt's table of named connections is guarded by a QReadWriteLock whose contended path lives
// inside libQt6Core. Taking this lock around every add and remove keeps that path unused: the
// endpoint's workers open and close their connections at the same moments (start, a database
// restart, shutdown), and ThreadSanitizer, which cannot see into an uninstrumented Qt, then
// sees the ordering through this lock instead of reporting Qt's own free list as a race.
std::mutex g_registryMutex;
// What each open Connection was opened with and what it reached, by connection name.
struct OpenConnection
{
    Dsn dsn; // for dsnOf()
    // A Galera node: exec() keeps binds prepared there (decision 0071).
    bool galeraNode = false;
    // ... and cared for as one (isClusterNode), unless PAYOPS_GALERA_UNGUARDED turned it off.
    bool clusterCare = false;
};
QHash<QString, OpenConnection> g_open;

// What `read` returns of `db`'s entry; `absent` when it is no open Connection's. Under the lock,
// and without copying the entry: exec() asks at every statement.
template <typename T>
T readOpenConnection(const QSqlDatabase &db, T absent, T (*read)(const OpenConnection &))
{
    const std::lock_guard lock(g_registryMutex);
    const auto found = g_open.constFind(db.connectionName());
    return found == g_open.constEnd() ? absent : read(*found);
}

QSqlDatabase addDatabase(const QString &name, const Dsn &dsn)
{
    const std::lock_guard lock(g_registryMutex);
    g_open.insert(name, OpenConnection{dsn});
    return QSqlDatabase::addDatabase(QStringLiteral("QMYSQL"), name);
}

// Closes and forgets `db`, which must be the last handle on the connection `name`.
void removeDatabase(QSqlDatabase &db, const QString &name)
{
    db.close();
    db = QSqlDatabase();
    const std::lock_guard lock(g_registryMutex);
    QSqlDatabase::removeDatabase(name);
    g_open.remove(name);
}

QString connectOptions(const Dsn &dsn)
{
    // MYSQL_OPT_RECONNECT stays off on purpose: a silent reconnect drops GET_LOCK locks and
    // open transactions while the caller believes it still holds them.
    QStringList options;
    options << QStringLiteral("MYSQL_OPT_CONNECT_TIMEOUT=%1").arg(dsn.connectTimeoutSeconds);
    if (!dsn.socket.isEmpty())
        options << QStringLiteral("UNIX_SOCKET=") + dsn.socket;
    if (!dsn.sslCa.isEmpty())
        options << QStringLiteral("SSL_CA=") + dsn.sslCa;
    if (!dsn.sslCert.isEmpty())
        options << QStringLiteral("SSL_CERT=") + dsn.sslCert;
    if (!dsn.sslKey.isEmpty())
        options << QStringLiteral("SSL_KEY=") + dsn.sslKey;
    return options.join(QLatin1Char(';'));
}

QString describeConnectFailure(const Dsn &dsn, const QSqlError &error)
{
    const int code = error.nativeErrorCode().toInt();
    // An address, as host:port is, and the log line below has it too: not translated.
    const QString where = dsn.socket.isEmpty()
                              ? QStringLiteral("%1:%2").arg(dsn.host, QString::number(dsn.port))
                              : QStringLiteral("socket %1").arg(dsn.socket);
    switch (code) {
    case 1045:
        return Connection::tr("access denied for user '%1' at %2 (wrong user or password)")
            .arg(dsn.user, where);
    case 1044:
        return Connection::tr("user '%1' may not use database '%2'").arg(dsn.user, dsn.database);
    case 1049:
        return Connection::tr("database '%1' does not exist at %2").arg(dsn.database, where);
    case 2002:
    case 2003:
    case 2005:
        return Connection::tr("cannot reach the database server at %1 (is it running?)").arg(where);
    default:
        break;
    }
    QString text = error.databaseText().trimmed();
    if (text.isEmpty())
        text = error.driverText().trimmed();
    logDetail(QStringLiteral("cannot connect to %1 as '%2': error %3: %4")
                  .arg(where, dsn.user, QString::number(code), text));
    return Connection::tr("cannot connect to %1 as '%2': %3")
        .arg(where, dsn.user, describeServerError(code, text));
}

// False for a read-only server, and for one that does not answer the question.
bool takesWrites(const QSqlDatabase &db)
{
    QSqlQuery readOnly(db);
    return readOnly.exec(QStringLiteral("SELECT @@read_only")) && readOnly.next() &&
           !readOnly.value(0).toBool();
}

// True on a Galera node. A server built without Galera has no such variable: no row.
bool wsrepOn(const QSqlDatabase &db)
{
    QSqlQuery wsrep = exec(db, QStringLiteral("SHOW SESSION VARIABLES LIKE 'wsrep_on'"));
    return wsrep.next() && wsrep.value(1).toString() == QLatin1String("ON");
}

// Later servers of a list that did not answer, by host:port, with when to ask them again.
std::mutex g_unansweredMutex;
QHash<QString, QDeadlineTimer> g_unanswered;

// The first later server that takes writes too, if any. A former primary brought back writable
// is first in the list again while the promoted replica takes the writes: two primaries, each
// with a share of the payments. A later server that does not answer is asked again only after a
// minute, so that a replica down for maintenance does not cost every connect its timeout.
std::optional<Dsn::Server> secondPrimary(const Dsn &dsn, const QList<Dsn::Server> &later)
{
    for (const Dsn::Server &server : later) {
        const QString key = server.host + QLatin1Char(':') + QString::number(server.port);
        {
            const std::lock_guard lock(g_unansweredMutex);
            if (!g_unanswered.value(key, QDeadlineTimer(0)).hasExpired())
                continue;
        }
        Dsn one = dsn;
        one.host = server.host;
        one.port = server.port;
        one.laterServers.clear();
        try {
            Connection probe(one, QStringLiteral("primary-probe"));
            // Every node of a Galera cluster takes writes, and certification orders them.
            if (takesWrites(probe.database()) && !wsrepOn(probe.database()))
                return server;
        } catch (const Error &) {
            const std::lock_guard lock(g_unansweredMutex);
            g_unanswered.insert(key, QDeadlineTimer(60 * 1000));
        }
    }
    return std::nullopt;
}

} // namespace

Connection::Connection(const Dsn &dsn, const QString &purpose)
    : m_dsn(dsn)
    , m_name(QStringLiteral("payops-%1-%2").arg(purpose, QString::number(++g_connectionCounter)))
{
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QMYSQL")))
        throw Error(Connection::tr("the Qt MySQL driver (QMYSQL) is not installed; "
                                   "install libqt6sql6-mysql"));
    m_db = addDatabase(m_name, dsn);
    m_db.setUserName(dsn.user);
    m_db.setPassword(dsn.password);
    m_db.setDatabaseName(dsn.database);
    m_db.setConnectOptions(connectOptions(dsn));
    // A list of servers is tried in order, and a server that does not take writes (a replica
    // not promoted yet, a former primary brought back read-only) is passed over: the first
    // server that opens and takes writes is the primary.
    QList<Dsn::Server> servers{{dsn.host, dsn.port}};
    servers += dsn.laterServers;
    QStringList failures;
    int code = 0;
    qsizetype chosen = 0;
    for (; chosen < servers.size(); ++chosen) {
        const Dsn::Server &server = servers.at(chosen);
        Dsn one = dsn;
        one.host = server.host;
        one.port = server.port;
        m_db.setHostName(server.host);
        m_db.setPort(server.port);
        if (!m_db.open()) {
            failures << describeConnectFailure(one, m_db.lastError());
            code = m_db.lastError().nativeErrorCode().toInt();
            continue;
        }
        if (servers.size() > 1 && !takesWrites(m_db)) {
            failures << Connection::tr("%1:%2 does not take writes (a replica, or read-only)")
                            .arg(server.host, QString::number(server.port));
            code = 0;
            m_db.close();
            continue;
        }
        failures.clear();
        break;
    }
    if (failures.isEmpty() && servers.size() > 1) {
        if (const auto other = secondPrimary(dsn, servers.mid(chosen + 1))) {
            failures << Connection::tr(
                            "%1:%2 and %3:%4 both take writes: two primaries. Set read_only = ON "
                            "on the one that is not the primary (after a failover, the former "
                            "primary), or take it out of the list")
                            .arg(servers.at(chosen).host, QString::number(servers.at(chosen).port),
                                 other->host, QString::number(other->port));
        }
    }
    if (!failures.isEmpty()) {
        removeDatabase(m_db, m_name);
        throw Error(failures.join(QStringLiteral("; ")), code);
    }
    refuseLocalFiles(m_db);
    try {
        // Every time payops writes or compares is UTC; strict mode turns silent truncation
        // into an error.
        execDirect(m_db, QStringLiteral("SET NAMES utf8mb4"));
        execDirect(m_db, QStringLiteral("SET time_zone = '+00:00'"));
        execDirect(
            m_db,
            QStringLiteral("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
                           "NO_ENGINE_SUBSTITUTION,NO_ZERO_DATE,NO_ZERO_IN_DATE'"));
        if (dsn.readOnlySession)
            execDirect(m_db, QStringLiteral("SET SESSION TRANSACTION READ ONLY"));
        if (dsn.lockWaitSeconds > 0)
            execDirect(m_db, QStringLiteral("SET SESSION innodb_lock_wait_timeout = %1")
                                 .arg(dsn.lockWaitSeconds));
        QSqlQuery info = exec(m_db, QStringLiteral("SELECT CONNECTION_ID(), VERSION()"));
        info.next();
        m_serverConnectionId = info.value(0).toLongLong();
        m_isMariaDb =
            info.value(1).toString().contains(QLatin1String("MariaDB"), Qt::CaseInsensitive);
        // The environment variable exists so that a test can show the defect the care for a
        // cluster node prevents.
        if (wsrepOn(m_db)) {
            const bool unguarded = qEnvironmentVariableIsSet("PAYOPS_GALERA_UNGUARDED");
            const std::lock_guard lock(g_registryMutex);
            OpenConnection &opened = g_open[m_name];
            opened.galeraNode = true;
            opened.clusterCare = !unguarded;
        }
    } catch (...) {
        removeDatabase(m_db, m_name);
        throw;
    }
}

Connection::~Connection()
{
    removeDatabase(m_db, m_name);
}

bool isClusterNode(const QSqlDatabase &db)
{
    return readOpenConnection<bool>(
        db, false, [](const OpenConnection &opened) { return opened.clusterCare; });
}

namespace {

bool onGaleraNode(const QSqlDatabase &db)
{
    return readOpenConnection<bool>(db, false,
                                    [](const OpenConnection &opened) { return opened.galeraNode; });
}

} // namespace

Error rolledBackByAnotherNode(const QString &what)
{
    return Error(QStringLiteral("a transaction from another cluster node rolled %1 back").arg(what),
                 1213);
}

void waitBeforeRetry(int tries)
{
    const int longestWaitMs = std::min(5 * tries + 2, 100);
    QThread::msleep(QRandomGenerator::global()->bounded(1, longestWaitMs));
}

std::optional<Dsn> dsnOf(const QSqlDatabase &db)
{
    return readOpenConnection<std::optional<Dsn>>(
        db, std::nullopt, [](const OpenConnection &opened) { return std::optional(opened.dsn); });
}

namespace {

// On a Galera node, a conflicting transaction from another node that aborts this one while a
// statement opens a table with triggers has been seen to come back as error 1711 ("Unknown
// trigger has an error in its body: 'Query was empty'") or 1710 ("Trigger 'point_log_change_log'
// has an error in its body: 'You have an error in your SQL syntax'"), the trigger's load cut
// short, rather than as 1213; since statements go as text, the same sentences have come back
// under another number too, so the sentence counts as well as the number. payops's triggers
// parse everywhere else, so on a cluster node it is the deadlock all the same, and callers that
// retry one run it again.
Error statementFailed(const QSqlDatabase &db, const QString &sql, const QSqlError &error)
{
    const Error failure = Error::fromSql(sql.left(120).simplified(), error);
    const bool triggerLoadCutShort =
        failure.serverCode() == 1710 || failure.serverCode() == 1711 ||
        failure.serverText().contains(QLatin1String("has an error in its body"));
    if (triggerLoadCutShort && isClusterNode(db))
        return rolledBackByAnotherNode(QStringLiteral("this transaction"));
    return failure;
}

// `sql` as exec() sends it, its binds in the text; nothing where exec() prepares it instead (a
// bind with no literal form, or a Galera node).
std::optional<QString> asText(const QSqlDatabase &db, const QString &sql, const QVariantList &binds)
{
    // Binds go into the text where they can: a prepared statement costs a round trip more (the
    // prepare, then the execute), and every path of a callback runs a dozen statements. On a
    // Galera node they are still prepared (decision 0071): with them in the text, a storm with
    // the care for a cluster node turned off no longer showed the defect that care prevents.
    // PAYOPS_GALERA_UNGUARDED turns the care for a cluster node off (isClusterNode says no) so
    // that a test can show the defect it prevents; binds stay prepared there all the same.
    if (binds.isEmpty())
        return sql;
    if (onGaleraNode(db))
        return std::nullopt;
    return withBindsInline(db, sql, binds);
}

} // namespace

QSqlQuery exec(const QSqlDatabase &db, const QString &sql, const QVariantList &binds)
{
    QSqlQuery query(db);
    query.setForwardOnly(true);
    const std::optional<QString> inlined = asText(db, sql, binds);
    if (inlined) {
        if (!query.exec(*inlined))
            throw statementFailed(db, sql, query.lastError());
        return query;
    }
    if (!query.prepare(sql))
        throw statementFailed(db, sql, query.lastError());
    for (const QVariant &value : binds) {
        // A null QString is an empty text that happened to be default-constructed, never a
        // deliberate NULL (that is QVariant()); binding it as NULL would break NOT NULL columns.
        if (value.typeId() == QMetaType::QString && value.toString().isNull())
            query.addBindValue(QStringLiteral(""));
        else
            query.addBindValue(value);
    }
    if (!query.exec())
        throw statementFailed(db, sql, query.lastError());
    return query;
}

void execDirect(const QSqlDatabase &db, const QString &sql)
{
    exec(db, sql);
}

void execTogether(const QSqlDatabase &db, const QStringList &statements,
                  const std::function<void(qsizetype, QSqlQuery &)> &onResult)
{
    QSqlQuery query(db);
    query.setForwardOnly(true);
    if (!query.exec(statements.join(QStringLiteral(";\n"))))
        throw statementFailed(db, statements.value(0), query.lastError());
    for (qsizetype i = 0; i < statements.size(); ++i) {
        // Each result read (or let go) before the next: the driver walks them in order.
        if (i > 0 && !query.nextResult())
            throw statementFailed(db, statements.at(i), query.lastError());
        if (onResult)
            onResult(i, query);
    }
}

QVariant scalar(const QSqlDatabase &db, const QString &sql, const QVariantList &binds)
{
    QSqlQuery query = exec(db, sql, binds);
    return query.next() ? query.value(0) : QVariant();
}

Transaction::Transaction(const QSqlDatabase &db)
    : m_db(db)
    , m_cluster(isClusterNode(db))
{
    if (m_cluster)
        execDirect(m_db, QStringLiteral("SET autocommit = 0"));
    execDirect(m_db, QStringLiteral("START TRANSACTION"));
}

Transaction::~Transaction()
{
    if (!m_open)
        return;
    QSqlQuery rollback(m_db);
    rollback.exec(QStringLiteral("ROLLBACK")); // best effort: a lost connection rolls back anyway
    if (m_cluster)
        rollback.exec(QStringLiteral("SET autocommit = 1"));
}

void Transaction::commit()
{
    execDirect(m_db, QStringLiteral("COMMIT"));
    m_open = false;
    restoreAutocommit();
}

void Transaction::commitWith(const QStringList &statements)
{
    execTogether(m_db, statements + QStringList{QStringLiteral("COMMIT")});
    m_open = false;
    restoreAutocommit();
}

void Transaction::commitWith(const QString &sql, const QVariantList &binds)
{
    if (const std::optional<QString> text = asText(m_db, sql, binds)) {
        commitWith(QStringList{*text});
        return;
    }
    exec(m_db, sql, binds);
    commit();
}

void Transaction::rollback()
{
    if (!m_open)
        return;
    m_open = false;
    execDirect(m_db, QStringLiteral("ROLLBACK"));
    restoreAutocommit();
}

void Transaction::restoreAutocommit()
{
    if (m_cluster)
        execDirect(m_db, QStringLiteral("SET autocommit = 1"));
}

QString quoteIdentifier(const QString &name)
{
    QString escaped = name;
    escaped.replace(QLatin1Char('`'), QStringLiteral("``"));
    return QLatin1Char('`') + escaped + QLatin1Char('`');
}

QDateTime utcDateTime(const QVariant &value)
{
    const QDateTime stored = value.toDateTime();
    return stored.isValid() ? QDateTime(stored.date(), stored.time(), Qt::UTC) : QDateTime();
}

} // namespace payops::db
