#pragma once

#include "dberror.h"
#include "dsn.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QStringList>
#include <QVariantList>

#include <functional>
#include <optional>

namespace payops::db {

// One named QSqlDatabase, opened on the thread that creates it and removed when this object
// goes. Qt allows a connection only on the thread that made it, so every worker thread owns
// one of these; never share it across threads.
class Connection final
{
    Q_DECLARE_TR_FUNCTIONS(payops::db::Connection)

public:
    // Opens at once; throws db::Error with one line naming what failed (bad credentials,
    // unreachable server, unknown database) and never a cascade of Qt warnings.
    Connection(const Dsn &dsn, const QString &purpose);
    ~Connection();
    Q_DISABLE_COPY_MOVE(Connection)

    QSqlDatabase database() const { return m_db; }
    const QString &name() const { return m_name; }
    const Dsn &dsn() const { return m_dsn; }
    // The server-side id of this session, for KILL QUERY from another connection.
    qint64 serverConnectionId() const { return m_serverConnectionId; }
    bool isMariaDb() const { return m_isMariaDb; }

private:
    Dsn m_dsn;
    QString m_name;
    // Held here so that running a query never reads Qt's table of connections.
    QSqlDatabase m_db;
    qint64 m_serverConnectionId = 0;
    bool m_isMariaDb = true;
};

// The DSN the Connection that owns `db` was opened with, to open another one like it (a
// second reader on another thread); nullopt for a QSqlDatabase no Connection made.
std::optional<Dsn> dsnOf(const QSqlDatabase &db);

// True when the Connection that owns `db` reached a Galera node replicating its writes
// (wsrep_on). There a transaction can be rolled back by a conflicting one from another node
// between two of its statements, and the error can reach none of them: Transaction and the
// callback handler then take the care their comments describe.
bool isClusterNode(const QSqlDatabase &db);
// What a caller that found such a roll-back under its transaction (its own first write gone)
// throws: the deadlock it is (1213), so that a caller retrying deadlocks runs it again.
Error rolledBackByAnotherNode(const QString &what);

// The wait of retryingDeadlocks() after run `tries`.
void waitBeforeRetry(int tries);
// Runs `attempt`, and runs it again when it fails with the deadlock (1213), up to `attempts`
// runs in all, then throws that deadlock. Only for an attempt that is one transaction of its
// own, or one statement in autocommit: the deadlock rolled it back whole, so a run again from
// its first statement, reading again what it decides on, is correct. Between runs it waits a
// few random milliseconds, more after each up to a tenth of a second, so that two nodes that keep
// meeting on one row (the audit chain's head) stop meeting in step.
template <typename Attempt> auto retryingDeadlocks(int attempts, Attempt &&attempt)
{
    for (int tries = 1;; ++tries) {
        try {
            return attempt();
        } catch (const Error &error) {
            if (!error.isDeadlock() || tries >= attempts)
                throw;
        }
        waitBeforeRetry(tries);
    }
}

// Runs one statement with positional binds; throws db::Error on failure. A null QString
// binds as an empty string; bind QVariant() for SQL NULL.
QSqlQuery exec(const QSqlDatabase &db, const QString &sql, const QVariantList &binds = {});
// Runs a statement that is not preparable (DDL, SET, GRANT): no binds.
void execDirect(const QSqlDatabase &db, const QString &sql);
// Runs `statements` (no binds) in order in one round trip: Qt's MySQL driver opens every
// connection with CLIENT_MULTI_STATEMENTS. `onResult(i, query)` reads statement i's result as
// it comes. The server stops at the first statement that fails, and its error is thrown.
void execTogether(const QSqlDatabase &db, const QStringList &statements,
                  const std::function<void(qsizetype, QSqlQuery &)> &onResult = {});
// "(a, b, ...), (c, d, ...)": rows of values as SQL literals, each escaped by the driver for
// this connection (mysql_real_escape_string), for multi-row INSERTs. A statement with
// thousands of placeholders costs a server-side prepare and a bind per value on every run,
// which made a compensation batch's inserts several times slower than the changes they
// record. A null QString is an empty text, as with exec(); a QByteArray goes byte for byte (a
// hex literal). `rowTail` ends each row as SQL
// (e.g. ",USER()").
QString valueRows(const QSqlDatabase &db, const QList<QVariantList> &rows,
                  const QString &rowTail = {});
// One value as an SQL literal, escaped as valueRows() escapes it: for statements a refresh runs
// every few seconds, where a bind would cost a server-side prepare each time.
QString literal(const QSqlDatabase &db, const QVariant &value);
// "1,2,3": ids as the inside of an SQL IN list (numbers need no escaping).
QString idList(const QList<qint64> &ids);
// A DATETIME as read back, marked UTC: every payops session sets time_zone = '+00:00', and the
// driver hands the value over without a zone. NULL gives an invalid QDateTime.
QDateTime utcDateTime(const QVariant &value);
// First column of the first row, or an invalid QVariant when there is no row.
QVariant scalar(const QSqlDatabase &db, const QString &sql, const QVariantList &binds = {});

// BEGIN on construction, ROLLBACK on destruction unless commit() ran.
// On a Galera node the transaction runs with autocommit off: a conflict from another node
// can roll it back without the error reaching any statement, and the statements after it
// would then each commit on their own, half a payment without its other half. With
// autocommit off they form a new transaction that only COMMIT makes durable, so a caller
// that checks, before committing, that its own first write is still there (the callback
// handler does) finds out and rolls back.
class Transaction final
{
public:
    explicit Transaction(const QSqlDatabase &db);
    ~Transaction();
    Q_DISABLE_COPY_MOVE(Transaction)
    void commit();
    // Sends `statements` and the COMMIT in one round trip (execTogether): a transaction's last
    // writes need not each wait for their answer before the commit is sent. When one fails,
    // nothing after it ran and the transaction is still open.
    void commitWith(const QStringList &statements);
    // One statement with its binds and the COMMIT: in one round trip where exec() would write
    // the binds into the text, else as exec() and commit() do.
    void commitWith(const QString &sql, const QVariantList &binds);
    void rollback();

private:
    void restoreAutocommit();

    QSqlDatabase m_db;
    bool m_open = true;
    bool m_cluster = false;
};

// Quotes an identifier with backticks for statements that cannot bind names.
QString quoteIdentifier(const QString &name);

} // namespace payops::db
