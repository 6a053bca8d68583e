#pragma once

#include <QSqlError>
#include <QString>

#include <stdexcept>

namespace payops::db {

// A failed database operation, with the server's error number kept so that callers can tell
// a lost connection (retry later, answer 503) from a refused statement (a bug or a grant).
class Error : public std::runtime_error
{
public:
    Error(const QString &message, int serverCode = 0);
    static Error fromSql(const QString &what, const QSqlError &error);

    QString message() const { return QString::fromStdString(what()); }
    int serverCode() const { return m_serverCode; }

    // The server went away, could not be reached, or the client lost the connection.
    bool isConnectionFailure() const;
    bool isDuplicateKey() const { return m_serverCode == 1062; }
    bool isAccessDenied() const;
    bool isLockWaitTimeout() const { return m_serverCode == 1205; }
    bool isDeadlock() const { return m_serverCode == 1213; }

private:
    int m_serverCode;
};

} // namespace payops::db
