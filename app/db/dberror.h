#pragma once

#include <QCoreApplication>
#include <QSqlError>
#include <QString>

#include <stdexcept>

namespace payops::db {

// A failed database operation, with the server's error number kept so that callers can tell
// a lost connection (retry later, answer 503) from a refused statement (a bug or a grant).
class Error : public std::runtime_error
{
    // The sentences of this layer are read by people in their language; the log keeps English
    // only where it writes its own lines.
    Q_DECLARE_TR_FUNCTIONS(payops::db::Error)

public:
    // `message` is a sentence payops wrote itself: it is shown as it is.
    Error(const QString &message, int serverCode = 0);
    // A statement the server or the driver refused. what() keeps the statement and the
    // server's own text for the log; userMessage() never shows either.
    static Error fromSql(const QString &statement, const QSqlError &error);
    // The same failure, said to have happened while doing `context` ("migration 0004 failed").
    Error within(const QString &context) const;

    // For the log: may hold SQL. What a person reads is userMessage(*this).
    QString message() const { return QString::fromStdString(what()); }
    int serverCode() const { return m_serverCode; }
    // True when the server or the driver refused a statement (fromSql), false for payops's own
    // refusals.
    bool isFromServer() const { return m_fromServer; }
    const QString &serverText() const { return m_serverText; }
    const QString &context() const { return m_context; }

    // The server went away, could not be reached, or the client lost the connection.
    bool isConnectionFailure() const;
    bool isDuplicateKey() const { return m_serverCode == 1062; }
    bool isAccessDenied() const;
    // 1290: the server runs read-only (a replica); 1792: the session does (a read database,
    // --read-db). No grant changes either.
    bool isReadOnlyRefusal() const { return m_serverCode == 1290 || m_serverCode == 1792; }
    bool isLockWaitTimeout() const { return m_serverCode == 1205; }
    bool isDeadlock() const { return m_serverCode == 1213; }

private:
    int m_serverCode;
    bool m_fromServer = false;
    QString m_serverText;
    QString m_context;
};

// One sentence for a server or driver error number. It may name the table, column or key the
// server's text mentions, and never quotes that text or a statement.
QString describeServerError(int serverCode, const QString &serverText);

// What a person reads for a failure: on screen, in a dialog, or as a command's one-line error.
// A refused statement becomes describeServerError()'s sentence, and the statement and the
// server's own text go to the log file (never to the screen or stderr).
QString userMessage(const Error &error);
// The same for any exception a database operation may throw: db::Error as above, anything
// else (a file that cannot be written, a sandbox that does not start) by its own text.
QString userMessage(const std::exception &error);

} // namespace payops::db
