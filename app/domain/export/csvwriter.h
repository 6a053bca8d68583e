#pragma once

#include <QCoreApplication>
#include <QSaveFile>
#include <QString>
#include <QStringList>

namespace payops {

// The one CSV writer of every export: what Excel opens correctly with Chinese text, and what
// a spreadsheet cannot be tricked into running.
//
// - UTF-8 with a byte-order mark (without it Excel reads the file in the system's code page
//   and Chinese becomes mojibake), CRLF line ends.
// - RFC 4180 quoting: a cell is quoted when it holds a comma, a double quote, CR or LF, and a
//   quote inside it is doubled.
// - Formula injection (OWASP "CSV Injection"): a cell that starts with `=`, `+`, `-`, `@`, a
//   tab or CR is prefixed with a single quote, so that a spreadsheet shows it as text. A
//   plain number (`-12.30`, `42`) is left as it is: it cannot be a formula, and Excel must
//   still read a negative refund as a number to sum it.
//
// Rows go straight to a QSaveFile: nothing is held in memory, and the file appears under its
// name only at commit(), whole; a writer destroyed without commit() leaves nothing behind.
class CsvWriter final
{
    Q_DECLARE_TR_FUNCTIONS(payops::CsvWriter)

public:
    // Opens `path` for writing and writes the byte-order mark. Throws std::runtime_error
    // ("cannot write PATH: reason") when the file cannot be created.
    explicit CsvWriter(const QString &path);
    Q_DISABLE_COPY_MOVE(CsvWriter)

    void writeRow(const QStringList &cells);
    // Moves the finished file into place. Throws std::runtime_error when it cannot.
    void commit();
    const QString &path() const { return m_path; }

    // One cell as it is written: neutralised, then quoted when needed.
    static QByteArray encodeCell(const QString &cell);
    // A cell a spreadsheet would read as a formula, with the single quote in front; any other
    // cell unchanged.
    static QString neutralised(const QString &cell);
    // -?digits with an optional fraction: what a spreadsheet reads as a number and nothing else.
    static bool isPlainNumber(const QString &cell);

private:
    [[noreturn]] void fail() const;

    QString m_path;
    QSaveFile m_file;
};

} // namespace payops
