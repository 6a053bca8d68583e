#include "sqlscript.h"

namespace payops::db {
namespace {

bool isOnlyComments(const QString &statement)
{
    for (const QString &line : statement.split(QLatin1Char('\n'))) {
        const QString trimmed = line.trimmed();
        if (!trimmed.isEmpty() && !trimmed.startsWith(QLatin1String("--")))
            return false;
    }
    return true;
}

} // namespace

QStringList splitSqlScript(const QString &script)
{
    QStringList statements;
    QString delimiter = QStringLiteral(";");
    QString current;
    QChar quote; // '\'', '"' or '`' while inside one
    bool lineComment = false;
    bool blockComment = false;
    bool atLineStart = true;
    // The look-aheads below compare views: a copy per character made a 14 KB migration cost
    // tens of thousands of allocations.
    const QStringView view(script);

    const auto flush = [&] {
        const QString statement = current.trimmed();
        if (!statement.isEmpty() && !isOnlyComments(statement))
            statements << statement;
        current.clear();
    };

    for (qsizetype i = 0; i < script.size(); ++i) {
        const QChar c = script.at(i);
        if (atLineStart && quote.isNull() && !blockComment) {
            const qsizetype end = script.indexOf(QLatin1Char('\n'), i);
            const QString line = script.mid(i, end == -1 ? -1 : end - i).trimmed();
            if (line.startsWith(QLatin1String("DELIMITER "), Qt::CaseInsensitive)) {
                flush();
                delimiter = line.mid(10).trimmed();
                i = end == -1 ? script.size() : end;
                continue;
            }
        }
        atLineStart = c == QLatin1Char('\n');

        if (lineComment) {
            current += c;
            lineComment = c != QLatin1Char('\n');
            continue;
        }
        if (blockComment) {
            current += c;
            if (c == QLatin1Char('*') && view.mid(i + 1, 1) == QLatin1String("/")) {
                current += QLatin1Char('/');
                ++i;
                blockComment = false;
            }
            continue;
        }
        if (!quote.isNull()) {
            current += c;
            if (c == QLatin1Char('\\') && quote != QLatin1Char('`') && i + 1 < script.size()) {
                current += script.at(++i);
            } else if (c == quote) {
                quote = QChar();
            }
            continue;
        }
        if (c == QLatin1Char('\'') || c == QLatin1Char('"') || c == QLatin1Char('`')) {
            quote = c;
            current += c;
            continue;
        }
        if (view.mid(i, 3) == QLatin1String("-- ") || view.mid(i, 3) == QLatin1String("--\n")) {
            lineComment = true;
            current += c;
            continue;
        }
        if (view.mid(i, 2) == QLatin1String("/*")) {
            blockComment = true;
            current += QStringLiteral("/*");
            ++i;
            continue;
        }
        if (view.mid(i, delimiter.size()) == delimiter) {
            flush();
            i += delimiter.size() - 1;
            continue;
        }
        current += c;
    }
    flush();
    return statements;
}

} // namespace payops::db
