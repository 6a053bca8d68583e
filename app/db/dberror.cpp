#include "dberror.h"

#include "log/logging.h"

#include <QRegularExpression>

namespace payops::db {

Error::Error(const QString &message, int serverCode)
    : std::runtime_error(message.toStdString())
    , m_serverCode(serverCode)
{
}

Error Error::fromSql(const QString &statement, const QSqlError &error)
{
    const int code = error.nativeErrorCode().toInt();
    QString detail = error.databaseText().trimmed();
    if (detail.isEmpty())
        detail = error.driverText().trimmed();
    Error failure(statement + QStringLiteral(": ") + detail, code);
    failure.m_fromServer = true;
    failure.m_serverText = detail;
    return failure;
}

Error Error::within(const QString &context) const
{
    Error wrapped(context + QStringLiteral(": ") + message(), m_serverCode);
    wrapped.m_fromServer = m_fromServer;
    wrapped.m_serverText = m_serverText;
    wrapped.m_context = m_context.isEmpty() ? context : context + QStringLiteral(": ") + m_context;
    return wrapped;
}

bool Error::isConnectionFailure() const
{
    // 2002/2003 cannot connect, 2006 server gone away, 2013 lost during query,
    // 2055 lost at reading, 1927 connection killed, 4031 disconnected for inactivity.
    switch (m_serverCode) {
    case 2002:
    case 2003:
    case 2005:
    case 2006:
    case 2013:
    case 2055:
    case 1927:
    case 4031:
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
    case 1044:
    case 1045:
    case 1142:
    case 1143:
    case 1227:
    case 1370:
    case 1419:
        return true;
    default:
        return false;
    }
}

namespace {

// The name the server quotes after `marker`: 'x', `x`, 'db.x' or `db`.`x`, without the
// database or table in front (MySQL 8 writes a key as 'table.key').
QString nameAfter(const QString &text, const QString &marker)
{
    const qsizetype at = marker.isEmpty() ? 0 : text.indexOf(marker, 0, Qt::CaseInsensitive);
    if (at < 0)
        return QString();
    static const QRegularExpression quoted(
        QStringLiteral("[`']([^`']+)[`'](?:\\.[`']([^`']+)[`'])?"));
    const QRegularExpressionMatch match = quoted.match(text, at + marker.size());
    if (!match.hasMatch())
        return QString();
    QString name = match.captured(2).isEmpty() ? match.captured(1) : match.captured(2);
    return name.mid(name.lastIndexOf(QLatin1Char('.')) + 1);
}

enum class Denied { Read, Change, Use };

// What the refused command wanted to do, from the command the server names first
// ("SELECT command denied").
Denied deniedAction(const QString &serverText)
{
    const QString command = serverText.section(QLatin1Char(' '), 0, 0).toUpper();
    if (command == QLatin1String("SELECT") || command == QLatin1String("SHOW"))
        return Denied::Read;
    static const QStringList changes{QStringLiteral("INSERT"), QStringLiteral("UPDATE"),
                                     QStringLiteral("DELETE"), QStringLiteral("REPLACE"),
                                     QStringLiteral("ALTER"),  QStringLiteral("DROP"),
                                     QStringLiteral("CREATE"), QStringLiteral("TRUNCATE")};
    return changes.contains(command) ? Denied::Change : Denied::Use;
}

// Whole sentences per action, so that a translation never has to glue a verb into one.
QString tableDenied(Denied action, const QString &table)
{
    if (table.isEmpty()) {
        switch (action) {
        case Denied::Read:
            return Error::tr("the database refused: you may not read this table");
        case Denied::Change:
            return Error::tr("the database refused: you may not change this table");
        case Denied::Use:
            return Error::tr("the database refused: you may not use this table");
        }
    }
    switch (action) {
    case Denied::Read:
        return Error::tr("the database refused: you may not read table %1").arg(table);
    case Denied::Change:
        return Error::tr("the database refused: you may not change table %1").arg(table);
    case Denied::Use:
        break;
    }
    return Error::tr("the database refused: you may not use table %1").arg(table);
}

QString columnDenied(Denied action, const QString &column, const QString &table)
{
    switch (action) {
    case Denied::Read:
        return Error::tr("the database refused: you may not read column %1 of table %2")
            .arg(column, table);
    case Denied::Change:
        return Error::tr("the database refused: you may not change column %1 of table %2")
            .arg(column, table);
    case Denied::Use:
        break;
    }
    return Error::tr("the database refused: you may not use column %1 of table %2")
        .arg(column, table);
}

} // namespace

QString describeServerError(int serverCode, const QString &serverText)
{
    switch (serverCode) {
    case 1044:
        return Error::tr("the database refused: this account may not use the database");
    case 1045:
        return Error::tr("access denied (wrong user or password)");
    case 1049:
        return Error::tr("the database does not exist");
    case 1142:
        return tableDenied(deniedAction(serverText),
                           nameAfter(serverText, QStringLiteral("for table")));
    case 1143:
        return columnDenied(deniedAction(serverText),
                            nameAfter(serverText, QStringLiteral("for column")),
                            nameAfter(serverText, QStringLiteral("in table")));
    case 1227:
    case 1419:
        return Error::tr(
            "the database refused: this account lacks a privilege the operation needs");
    case 1370:
        return Error::tr("the database refused: you may not run %1")
            .arg(nameAfter(serverText, QStringLiteral("for routine")));
    case 1644: // SIGNAL in a payops trigger: its text is a sentence of our own (English, from the
               // schema)
        return Error::tr("the database refused: %1").arg(serverText);
    case 1146:
        return Error::tr("table %1 is missing from the database (run payops migrate?)")
            .arg(nameAfter(serverText, QStringLiteral("Table")));
    case 1054:
        return Error::tr(
                   "the database has no column %1: its schema is not the one this program expects")
            .arg(nameAfter(serverText, QString()));
    case 1062: {
        const QString key = nameAfter(serverText, QStringLiteral("for key"));
        return key.isEmpty() ? Error::tr("that row already exists (a duplicate key)")
                             : Error::tr("that row already exists (duplicate key %1)").arg(key);
    }
    case 1451:
    case 1452:
        return Error::tr("the change conflicts with related rows (a foreign key)");
    case 1048:
    case 1264:
    case 1406: {
        const QString column = nameAfter(serverText, QStringLiteral("column"));
        return column.isEmpty() ? Error::tr("a value does not fit its column")
                                : Error::tr("a value does not fit column %1").arg(column);
    }
    case 3819:
    case 4025:
        return Error::tr("a value breaks one of the database's checks");
    case 1205:
        return Error::tr("lock wait timeout: another session holds the rows; try again");
    case 1213:
        return Error::tr("a deadlock with another session undid the change; try again");
    case 1317:
        return Error::tr("the statement was interrupted");
    case 1969:
    case 3024:
        return Error::tr("the statement took longer than the server allows");
    case 1040:
        return Error::tr("the database server has too many connections");
    case 1053:
        return Error::tr("the database server is shutting down");
    case 1290:
    case 1792:
        return Error::tr("the database is read-only");
    case 2002:
    case 2003:
    case 2005:
        return Error::tr("cannot reach the database server (is it running?)");
    case 1927:
    case 2006:
    case 2013:
    case 2055:
    case 4031:
        return Error::tr("lost the connection to the database");
    case 0:
        return Error::tr("the database driver failed (the log has its message)");
    default:
        return Error::tr("the database refused the operation (error %1)").arg(serverCode);
    }
}

QString userMessage(const Error &error)
{
    if (!error.isFromServer())
        return error.message();
    logDetail(QStringLiteral("database error %1: %2")
                  .arg(QString::number(error.serverCode()), error.message()));
    const QString sentence = describeServerError(error.serverCode(), error.serverText());
    return error.context().isEmpty() ? sentence
                                     : Error::tr("%1: %2").arg(error.context(), sentence);
}

QString userMessage(const std::exception &error)
{
    if (const auto *failure = dynamic_cast<const Error *>(&error))
        return userMessage(*failure);
    return QString::fromStdString(error.what());
}

} // namespace payops::db
