#include "statementsource.h"

#include "domain/statement/statement.h"
#include "domain/statement/statementtext.h"

#include <QIODevice>

namespace payops {

namespace {

constexpr char kUtf8Bom[] = "\xEF\xBB\xBF";

bool isBlank(QByteArrayView bytes)
{
    for (const char c : bytes) {
        if (c != ' ' && c != '\t')
            return false;
    }
    return true;
}

} // namespace

StatementLineSource::StatementLineSource(QIODevice &device)
    : m_device(device)
    , m_decoder(QStringConverter::Utf8)
{
    // One byte more than the longest line and its line ending, so that a longer line shows.
    m_buffer.resize(kMaxLineBytes + 3);
}

bool StatementLineSource::readRaw()
{
    const qint64 read = m_device.readLine(m_buffer.data(), m_buffer.size());
    if (read <= 0) {
        // A file that fails to be read, or an archive found damaged as it is unpacked, is not
        // a statement that ends here.
        if (!m_device.atEnd())
            refuseStatement(m_lineNo == 0
                                ? StatementText::tr("the file could not be read: %1")
                                      .arg(m_device.errorString())
                                : StatementText::tr("the file could not be read after line %1: %2")
                                      .arg(QString::number(m_lineNo), m_device.errorString()));
        return false;
    }
    ++m_lineNo;
    m_length = read;
    if (m_length == m_buffer.size() - 1 && m_buffer[m_length - 1] != '\n') {
        refuseStatement(StatementText::tr("line %1 is longer than %2 KiB: this is not a statement "
                                          "(a binary file?)")
                            .arg(QString::number(m_lineNo), QString::number(kMaxLineBytes / 1024)));
    }
    if (m_length > 0 && m_buffer[m_length - 1] == '\n')
        --m_length;
    if (m_length > 0 && m_buffer[m_length - 1] == '\r')
        --m_length;
    if (QByteArrayView(m_buffer.constData(), m_length).contains('\0')) {
        refuseStatement(StatementText::tr("line %1 holds binary data (NUL bytes): this is not a "
                                          "statement, or it was damaged")
                            .arg(m_lineNo));
    }
    if (m_lineNo == 1 && QByteArrayView(m_buffer.constData(), m_length).startsWith(kUtf8Bom)) {
        m_buffer.remove(0, 3);
        m_buffer.resize(kMaxLineBytes + 3);
        m_length -= 3;
    }
    return true;
}

bool StatementLineSource::readFirstLine(QByteArray &bytes)
{
    while (readRaw()) {
        const QByteArrayView line(m_buffer.constData(), m_length);
        if (!isBlank(line)) {
            bytes = line.toByteArray();
            m_pending = true;
            return true;
        }
    }
    return false;
}

void StatementLineSource::setEncoding(Encoding encoding)
{
    m_encoding = encoding;
    m_decoder = encoding == Encoding::Utf8 ? QStringDecoder(QStringConverter::Utf8)
                                           : QStringDecoder("GB18030");
}

bool StatementLineSource::readLine(QString &text)
{
    if (m_pending)
        m_pending = false;
    else if (!readRaw())
        return false;
    text = m_decoder.decode(QByteArrayView(m_buffer.constData(), m_length));
    if (m_decoder.hasError()) {
        refuseStatement(StatementText::tr("line %1 is not %2 text: the file is damaged, binary or "
                                          "was saved in another encoding")
                            .arg(QString::number(m_lineNo), m_encoding == Encoding::Utf8
                                                                ? QStringLiteral("UTF-8")
                                                                : QStringLiteral("GBK")));
    }
    return true;
}

bool splitCsvRecord(QStringView record, QString &cells, QList<CsvSpan> &spans)
{
    spans.clear();
    cells.resize(record.size()); // unquoting only shortens; the buffer keeps its capacity
    QChar *const out = cells.data();
    qsizetype w = 0;
    qsizetype r = 0;
    const qsizetype end = record.size();
    const QChar quote = QLatin1Char('"');
    const QChar comma = QLatin1Char(',');
    while (true) {
        CsvSpan span{w, 0};
        if (r < end && record[r] == quote) {
            ++r;
            while (true) {
                if (r == end)
                    return false; // the quoted field goes on on the next line
                if (record[r] == quote) {
                    if (r + 1 < end && record[r + 1] == quote) {
                        out[w++] = quote;
                        r += 2;
                        continue;
                    }
                    ++r;
                    break;
                }
                out[w++] = record[r++];
            }
        }
        // Unquoted text, or what follows a closing quote up to the comma, kept as written.
        while (r < end && record[r] != comma)
            out[w++] = record[r++];
        span.length = w - span.start;
        spans.append(span);
        if (r == end)
            break;
        ++r; // the comma
    }
    cells.truncate(w);
    return true;
}

} // namespace payops
