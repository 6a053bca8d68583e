#include "csvwriter.h"

#include <stdexcept>

namespace payops {

CsvWriter::CsvWriter(const QString &path)
    : m_path(path)
    , m_file(path)
{
    if (!m_file.open(QIODevice::WriteOnly))
        fail();
    m_file.write("\xEF\xBB\xBF");
}

void CsvWriter::writeRow(const QStringList &cells)
{
    QByteArray line;
    for (qsizetype i = 0; i < cells.size(); ++i) {
        if (i > 0)
            line += ',';
        line += encodeCell(cells.at(i));
    }
    line += "\r\n";
    // A full disk shows here first; QSaveFile keeps the error for commit() too.
    if (m_file.write(line) != line.size())
        fail();
}

void CsvWriter::commit()
{
    if (!m_file.commit())
        fail();
}

void CsvWriter::fail() const
{
    throw std::runtime_error(
        CsvWriter::tr("cannot write %1: %2").arg(m_path, m_file.errorString()).toStdString());
}

bool CsvWriter::isPlainNumber(const QString &cell)
{
    qsizetype i = cell.startsWith(QLatin1Char('-')) ? 1 : 0;
    const qsizetype digitsStart = i;
    while (i < cell.size() && cell.at(i).isDigit() && cell.at(i).unicode() < 128)
        ++i;
    if (i == digitsStart)
        return false;
    if (i == cell.size())
        return true;
    if (cell.at(i) != QLatin1Char('.'))
        return false;
    const qsizetype fractionStart = ++i;
    while (i < cell.size() && cell.at(i).isDigit() && cell.at(i).unicode() < 128)
        ++i;
    return i > fractionStart && i == cell.size();
}

QString CsvWriter::neutralised(const QString &cell)
{
    if (cell.isEmpty() || isPlainNumber(cell))
        return cell;
    switch (cell.at(0).unicode()) {
    case '=':
    case '+':
    case '-':
    case '@':
    case '\t':
    case '\r':
        return QLatin1Char('\'') + cell;
    default:
        return cell;
    }
}

QByteArray CsvWriter::encodeCell(const QString &cell)
{
    const QString text = neutralised(cell);
    const bool quote = text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) ||
                       text.contains(QLatin1Char('\r')) || text.contains(QLatin1Char('\n'));
    if (!quote)
        return text.toUtf8();
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return '"' + quoted.toUtf8() + '"';
}

} // namespace payops
