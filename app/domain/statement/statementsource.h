#pragma once

#include <QByteArray>
#include <QString>
#include <QStringDecoder>

class QIODevice;

namespace payops {

// The physical lines of a statement file, one at a time, decoded. A statement is never read
// whole: each line is read into one reused buffer, and a line longer than kMaxLineBytes means
// the file is no statement. Binary content (NUL bytes) and bytes that are not text in the
// file's encoding end the reading with a StatementError naming the line.
class StatementLineSource
{
public:
    static constexpr qsizetype kMaxLineBytes = 64 * 1024;
    enum class Encoding { Utf8, Gb18030 };

    explicit StatementLineSource(QIODevice &device);

    // The first line that is not blank, as bytes without its line ending or a UTF-8 BOM; false
    // when the file holds nothing else. It is read again, decoded, by the first readLine().
    bool readFirstLine(QByteArray &bytes);
    void setEncoding(Encoding encoding);
    // The next line, decoded, without its line ending; false at the end of the file.
    bool readLine(QString &text);
    qint64 lineNo() const { return m_lineNo; } // of the line last read: physical lines consumed

private:
    bool readRaw();

    QIODevice &m_device;
    QByteArray m_buffer;
    qsizetype m_length = 0; // of the line in m_buffer
    bool m_pending = false; // m_buffer holds the first line, not yet returned by readLine
    qint64 m_lineNo = 0;
    Encoding m_encoding = Encoding::Utf8;
    QStringDecoder m_decoder;
};

// Where one field of a CSV record lies in the unquoted record text.
struct CsvSpan
{
    qsizetype start = 0;
    qsizetype length = 0;
};

// Splits one CSV record as RFC 4180 writes it: fields separated by commas, a field that starts
// with a double quote runs to the matching quote, with "" for a quote inside. The fields,
// unquoted, are written to `cells` and located by `spans`. Returns false when the record ends
// inside a quoted field: the field holds a line break, and the next line belongs to it.
bool splitCsvRecord(QStringView record, QString &cells, QList<CsvSpan> &spans);

} // namespace payops
