#include "dberror.h"

namespace payops::db {

Error::Error(const QString &message, int serverCode)
    : std::runtime_error(message.toStdString())
    , m_serverCode(serverCode)
{
}

Error Error::fromSql(const QString &what, const QSqlError &error)
{
    const int code = error.nativeErrorCode().toInt();
    QString detail = error.databaseText().trimmed();
    if (detail.isEmpty())
        detail = error.driverText().trimmed();
    return Error(what + QStringLiteral(": ") + detail, code);
}

bool Error::isConnectionFailure() const
{
    // 2002/2003 cannot connect, 2006 server gone away, 2013 lost during query,
    // 2055 lost at reading, 1927 connection killed, 4031 disconnected for inactivity.
    switch (m_serverCode) {
    case 2002: case 2003: case 2005: case 2006: case 2013: case 2055: case 1927: case 4031:
    case 1053: // server shutdown in progress
        return true;
    default:
        return false;
    }
}

bool Error::isAccessDenied() const
{
    // 1044 database access, 1045 login, 1142 table, 1143 column, 1227 needs a privilege,
    // 1370 routine, 1419 trigger/SUPER, 1644 raised by a payops trigger refusing a change.
    switch (m_serverCode) {
    case 1044: case 1045: case 1142: case 1143: case 1227: case 1370: case 1419:
        return true;
    default:
        return false;
    }
}

} // namespace payops::db
