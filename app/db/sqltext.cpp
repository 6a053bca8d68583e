#include "sqltext.h"

#include "connection.h"

#include <QHash>
#include <QSqlDriver>
#include <QSqlField>
#include <QStringList>

#include <cmath>

namespace payops::db {
namespace {

// NULL as a prepared statement binds it (Qt's QSqlResultPrivate::isVariantNull): no value, a
// type without a value, null bytes, an invalid date or time. A null QString is the exception:
// an empty text that happened to be default-constructed (exec()).
bool bindsAsNull(const QVariant &value)
{
    if (value.typeId() == QMetaType::QString)
        return false;
    if (value.isNull())
        return true;
    switch (value.typeId()) {
    case QMetaType::QByteArray:
        return value.toByteArray().isNull();
    case QMetaType::QDateTime:
        return !value.toDateTime().isValid();
    case QMetaType::QDate:
        return !value.toDate().isValid();
    case QMetaType::QTime:
        return !value.toTime().isValid();
    default:
        return false;
    }
}

// Text goes through the driver's byte path, mysql_real_escape_string, which knows the
// connection's character set and sql_mode; its text path only doubles quotes.
QString textLiteral(const QSqlDriver *driver, const QString &text)
{
    QByteArray bytes = text.toUtf8();
    if (bytes.isNull())
        bytes = QByteArray(""); // a null QString is an empty text, not NULL
    // Braces: with parentheses clang reads this line as a function declaration.
    QSqlField field{QString(), QMetaType(QMetaType::QByteArray)};
    field.setValue(bytes);
    return driver->formatValue(field);
}

// A value that is not NULL as a literal, or nothing for a type not written here. A repeated
// text is escaped once when `escaped` is given.
std::optional<QString> valueLiteral(const QSqlDriver *driver, const QVariant &value,
                                    QHash<QString, QString> *escaped)
{
    switch (value.typeId()) {
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::Long:
    case QMetaType::ULong:
    case QMetaType::LongLong:
    case QMetaType::ULongLong:
    case QMetaType::Short:
    case QMetaType::UShort:
        return value.toString();
    case QMetaType::Bool:
        return value.toBool() ? QStringLiteral("1") : QStringLiteral("0");
    case QMetaType::Double: {
        const double number = value.toDouble();
        if (!std::isfinite(number))
            return std::nullopt;
        return QString::number(number, 'g', 17);
    }
    case QMetaType::QByteArray:
        // Bytes as a hex literal: the driver's escaping hands its result back through
        // QString::fromUtf8, which would replace every byte that is not UTF-8 (a raw body in
        // GBK) before the statement reaches the server.
        return QStringLiteral("X'") + QString::fromLatin1(value.toByteArray().toHex()) +
               QLatin1Char('\'');
    case QMetaType::QString: {
        const QString text = value.toString();
        if (!escaped)
            return textLiteral(driver, text);
        auto known = escaped->constFind(text);
        if (known == escaped->constEnd())
            known = escaped->insert(text, textLiteral(driver, text));
        return *known;
    }
    // As a prepared statement binds them: the date and time as they are, no time zone.
    case QMetaType::QDateTime:
        return QLatin1Char('\'') +
               value.toDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")) +
               QLatin1Char('\'');
    case QMetaType::QDate:
        return QLatin1Char('\'') + value.toDate().toString(QStringLiteral("yyyy-MM-dd")) +
               QLatin1Char('\'');
    case QMetaType::QTime:
        return QLatin1Char('\'') + value.toTime().toString(QStringLiteral("HH:mm:ss.zzz")) +
               QLatin1Char('\'');
    default:
        return std::nullopt;
    }
}

QString anyLiteral(const QSqlDriver *driver, const QVariant &value,
                   QHash<QString, QString> *escaped)
{
    if (bindsAsNull(value))
        return QStringLiteral("NULL");
    if (auto text = valueLiteral(driver, value, escaped))
        return *text;
    QSqlField field(QString(), value.metaType());
    field.setValue(value);
    return driver->formatValue(field);
}

// Where the `?` placeholders are: not inside '...' or "..." (backslash escapes and doubled
// quotes), `...`, a -- or # comment to the end of its line, or a /* */ comment.
QList<qsizetype> placeholders(const QString &sql)
{
    QList<qsizetype> at;
    QChar quote; // the quote open at i, if any
    for (qsizetype i = 0; i < sql.size(); ++i) {
        const QChar c = sql.at(i);
        if (!quote.isNull()) {
            if (c == u'\\' && quote != u'`')
                ++i;
            else if (c == quote && i + 1 < sql.size() && sql.at(i + 1) == quote)
                ++i;
            else if (c == quote)
                quote = QChar();
            continue;
        }
        const QChar next = i + 1 < sql.size() ? sql.at(i + 1) : QChar();
        if (c == u'\'' || c == u'"' || c == u'`') {
            quote = c;
        } else if (c == u'?') {
            at << i;
        } else if (c == u'#' ||
                   (c == u'-' && next == u'-' && i + 2 < sql.size() && sql.at(i + 2).isSpace())) {
            i = sql.indexOf(u'\n', i);
            if (i < 0)
                break;
        } else if (c == u'/' && next == u'*') {
            i = sql.indexOf(QStringLiteral("*/"), i + 2);
            if (i < 0)
                break;
            ++i;
        }
    }
    return at;
}

} // namespace

std::optional<QString> withBindsInline(const QSqlDatabase &db, const QString &sql,
                                       const QVariantList &binds)
{
    const QList<qsizetype> at = placeholders(sql);
    if (at.size() != binds.size())
        return std::nullopt;
    const QSqlDriver *driver = db.driver();
    QString text;
    text.reserve(sql.size() + 24 * binds.size());
    qsizetype from = 0;
    for (qsizetype i = 0; i < binds.size(); ++i) {
        const QVariant &bind = binds.at(i);
        std::optional<QString> literal =
            bindsAsNull(bind) ? QStringLiteral("NULL") : valueLiteral(driver, bind, nullptr);
        if (!literal)
            return std::nullopt;
        text += QStringView(sql).mid(from, at.at(i) - from);
        text += *literal;
        from = at.at(i) + 1;
    }
    text += QStringView(sql).mid(from);
    return text;
}

QString valueRows(const QSqlDatabase &db, const QList<QVariantList> &rows, const QString &rowTail)
{
    const QSqlDriver *driver = db.driver();
    // A batch repeats its reason, ticket and batch id in every row: escape each text once.
    QHash<QString, QString> escaped;
    QString sql;
    for (const QVariantList &row : rows) {
        sql += sql.isEmpty() ? QStringLiteral("(") : QStringLiteral(",(");
        for (qsizetype i = 0; i < row.size(); ++i) {
            if (i > 0)
                sql += QLatin1Char(',');
            sql += anyLiteral(driver, row.at(i), &escaped);
        }
        sql += rowTail + QLatin1Char(')');
    }
    return sql;
}

QString literal(const QSqlDatabase &db, const QVariant &value)
{
    return anyLiteral(db.driver(), value, nullptr);
}

QString idList(const QList<qint64> &ids)
{
    QStringList text;
    text.reserve(ids.size());
    for (qint64 id : ids)
        text << QString::number(id);
    return text.join(QLatin1Char(','));
}

} // namespace payops::db
