#pragma once

#include "domain/statement/statement.h"
#include "domain/statement/statementsource.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace payops {

// The table of one statement format: its header is read when it is made, its transaction
// lines one by one by next() (see StatementReader). The formats share the reading of CSV
// records and of the values in them, here.
class StatementTable
{
public:
    explicit StatementTable(StatementLineSource &source);
    virtual ~StatementTable();
    StatementTable(const StatementTable &) = delete;
    StatementTable &operator=(const StatementTable &) = delete;

    // Fills in what the file says about itself once its header is read (channel, period).
    virtual void describe(StatementHeader &header) const = 0;
    virtual bool next(StatementLine &line, QList<StatementLineError> &errors) = 0;

protected:
    // The next record that is not blank: one line, or more when a quoted field holds a line
    // break. False at the end of the file.
    bool readRecord();
    const QString &recordText() const { return m_text; }
    qint64 recordLine() const { return m_recordLine; }
    qsizetype fieldCount() const { return m_spans.size(); }
    // A field without the tabs and spaces around it (Alipay pads every field with a tab), and
    // without `prefix` when it starts with it (WeChat writes a backtick before every field).
    // Empty for a column the record lacks, and for column -1 (an optional column not there).
    QStringView field(qsizetype column) const;
    bool recordIsEmpty() const; // blank fields only, as a spreadsheet leaves them
    // The current record taken as the header row: its names, to be found by column().
    void takeHeader();
    qsizetype column(QStringView name) const { return m_header.indexOf(name); }
    // The column of `name`; refuses the file when the header row has none. `hint` follows the
    // message ("it needs ...").
    qsizetype requireColumn(QStringView name, const QString &hint = QString()) const;
    QString headerName(qsizetype column) const { return m_header.value(column); }
    // The checks every format makes first, on the current record: as many fields as the header
    // row, and a pay_no (in `payNoColumn`) of 1 to 64 characters, as the callback contract has
    // it. Sets the line's number and pay_no; false, with the error recorded, when one fails.
    bool startLine(StatementLine &line, qsizetype payNoColumn,
                   QList<StatementLineError> &errors) const;
    void lineError(QList<StatementLineError> &errors, const QString &message) const;
    // Refuses a file that ends before `what` (its totals, its end marker): cut short on the way.
    [[noreturn]] void refuseTruncated(const QString &what) const;

    StatementLineSource &m_source;
    QChar m_prefix;  // '`' in a WeChat bill
    QString m_title; // "a WeChat bill", for errors

private:
    QString m_text;
    QString m_more;
    QString m_cells;
    QList<CsvSpan> m_spans;
    QStringList m_header;
    qint64 m_recordLine = 0;
};

// Values as the statements write them.
std::optional<qint64> parseWholeNumber(QStringView text); // '-'? digits, within 64 bits
qint64 merchantOrderId(QStringView text);                 // a positive whole number, else 0
QByteArray merchantOrderNo(QStringView text); // 1 to 64 visible ASCII characters, else empty
// "2026-12-01 10:00:00" in Beijing time (UTC+8, no daylight saving) as UTC; invalid if it is not
// such a time.
QDateTime beijingTimeToUtc(QStringView text);
// An RFC 3339 date-time with its offset ("2026-12-01T02:00:00Z", "...T10:00:00.250+08:00") as
// UTC, milliseconds kept; invalid if it is not one.
QDateTime rfc3339ToUtc(QStringView text);

std::unique_ptr<StatementTable> openGenericTable(StatementLineSource &source);
std::unique_ptr<StatementTable> openWeChatTable(StatementLineSource &source);
std::unique_ptr<StatementTable> openAlipayTable(StatementLineSource &source);

} // namespace payops
