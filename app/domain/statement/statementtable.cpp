#include "statementtable.h"

#include "domain/statement/statementtext.h"

#include <algorithm>
#include <limits>

namespace payops {

namespace {

bool isPadding(QChar c)
{
    return c == QLatin1Char(' ') || c == QLatin1Char('\t');
}

QStringView trimmed(QStringView text)
{
    qsizetype from = 0;
    qsizetype to = text.size();
    while (from < to && isPadding(text[from]))
        ++from;
    while (to > from && isPadding(text[to - 1]))
        --to;
    return text.sliced(from, to - from);
}

// `count` digits of `text` from `at`, as a number; -1 when one of them is no digit.
int digitsAt(QStringView text, qsizetype at, int count)
{
    int value = 0;
    for (int i = 0; i < count; ++i) {
        const char16_t c = text[at + i].unicode();
        if (c < u'0' || c > u'9')
            return -1;
        value = value * 10 + (c - u'0');
    }
    return value;
}

// "yyyy-MM-dd?HH:mm:ss" at the start of `text`, `separators` naming the characters allowed
// between date and time. Invalid when it is not that, or not a real date or time.
QDateTime dateTimeAt(QStringView text, QStringView separators)
{
    if (text.size() < 19 || text[4] != QLatin1Char('-') || text[7] != QLatin1Char('-') ||
        !separators.contains(text[10]) || text[13] != QLatin1Char(':') ||
        text[16] != QLatin1Char(':')) {
        return {};
    }
    const QDate date(digitsAt(text, 0, 4), digitsAt(text, 5, 2), digitsAt(text, 8, 2));
    const QTime time(digitsAt(text, 11, 2), digitsAt(text, 14, 2), digitsAt(text, 17, 2));
    if (!date.isValid() || !time.isValid())
        return {};
    return QDateTime(date, time, Qt::UTC);
}

} // namespace

StatementTable::StatementTable(StatementLineSource &source)
    : m_source(source)
{
}

StatementTable::~StatementTable() = default;

bool StatementTable::readRecord()
{
    do {
        if (!m_source.readLine(m_text))
            return false;
    } while (trimmed(m_text).isEmpty());
    m_recordLine = m_source.lineNo();
    while (!splitCsvRecord(m_text, m_cells, m_spans)) {
        if (!m_source.readLine(m_more) || m_text.size() > StatementLineSource::kMaxLineBytes) {
            refuseStatement(StatementText::tr("line %1 opens a quoted field (\") that is never "
                                              "closed: the file is damaged or not CSV")
                                .arg(m_recordLine));
        }
        m_text.append(QLatin1Char('\n')).append(m_more);
    }
    return true;
}

QStringView StatementTable::field(qsizetype column) const
{
    if (column < 0 || column >= m_spans.size())
        return {};
    const CsvSpan &span = m_spans[column];
    QStringView value = trimmed(QStringView(m_cells).sliced(span.start, span.length));
    if (!m_prefix.isNull() && value.startsWith(m_prefix))
        value = trimmed(value.sliced(1));
    return value;
}

bool StatementTable::recordIsEmpty() const
{
    for (qsizetype i = 0; i < m_spans.size(); ++i) {
        if (!field(i).isEmpty())
            return false;
    }
    return true;
}

void StatementTable::takeHeader()
{
    m_header.clear();
    for (qsizetype i = 0; i < m_spans.size(); ++i)
        m_header.append(field(i).toString());
}

bool StatementTable::startLine(StatementLine &line, qsizetype payNoColumn,
                               QList<StatementLineError> &errors) const
{
    line.lineNo = m_recordLine;
    if (m_spans.size() != m_header.size()) {
        lineError(errors,
                  StatementText::tr("has %1 fields where the header row has %2 (a comma inside a "
                                    "value that is not quoted?)")
                      .arg(QString::number(m_spans.size()), QString::number(m_header.size())));
        return false;
    }
    const QStringView payNo = field(payNoColumn);
    if (payNo.isEmpty()) {
        lineError(errors, StatementText::tr("has no transaction id (pay_no)"));
        return false;
    }
    if (payNo.size() > 64 && payNo.toUcs4().size() > 64) { // UTF-16 units are never fewer
        lineError(errors, StatementText::tr("has a transaction id longer than 64 characters: %1")
                              .arg(payNo.left(70)));
        return false;
    }
    line.payNo = payNo.toUtf8();
    return true;
}

qsizetype StatementTable::requireColumn(QStringView name, const QString &hint) const
{
    const qsizetype at = column(name);
    if (at < 0) {
        QString message =
            (hint.isEmpty()
                 ? StatementText::tr("not %1: its header row (line %2) has no %3 column")
                 : StatementText::tr("not %1: its header row (line %2) has no %3 column (%4)"))
                .arg(m_title, QString::number(m_recordLine), name);
        if (!hint.isEmpty())
            message = message.arg(hint);
        refuseStatement(message);
    }
    return at;
}

void StatementTable::refuseTruncated(const QString &what) const
{
    refuseStatement(StatementText::tr("the file (%1) ends at line %2 without %3: it is truncated, "
                                      "download it again")
                        .arg(m_title, QString::number(m_source.lineNo()), what));
}

void StatementTable::lineError(QList<StatementLineError> &errors, const QString &message) const
{
    errors.append({m_recordLine, message});
}

std::optional<qint64> parseWholeNumber(QStringView text)
{
    const bool negative = text.startsWith(QLatin1Char('-'));
    const QStringView digits = negative ? text.sliced(1) : text;
    if (digits.isEmpty())
        return std::nullopt;
    constexpr qint64 limit = std::numeric_limits<qint64>::max();
    qint64 value = 0;
    for (const QChar c : digits) {
        const int digit = c.unicode() - u'0';
        if (digit < 0 || digit > 9 || value > (limit - digit) / 10)
            return std::nullopt;
        value = value * 10 + digit;
    }
    return negative ? -value : value;
}

qint64 merchantOrderId(QStringView text)
{
    // A merchant order number that is not one of our ids (letters, a prefix) is kept out of
    // matching by order rather than refused: the platforms accept any merchant number.
    if (text.startsWith(QLatin1Char('-')))
        return 0;
    const std::optional<qint64> id = parseWholeNumber(text);
    return id && *id > 0 ? *id : 0;
}

QByteArray merchantOrderNo(QStringView text)
{
    // As pay_callback_log.out_trade_no holds it: what no platform takes is matched by nothing.
    const bool fits =
        !text.isEmpty() && text.size() <= 64 &&
        std::all_of(text.cbegin(), text.cend(), [](QChar c) { return c > u' ' && c <= u'~'; });
    return fits ? text.toLatin1() : QByteArray();
}

QDateTime beijingTimeToUtc(QStringView text)
{
    if (text.size() != 19)
        return {};
    const QDateTime wallClock = dateTimeAt(text, u" ");
    return wallClock.isValid() ? wallClock.addSecs(-8 * 3600) : QDateTime();
}

QDateTime rfc3339ToUtc(QStringView text)
{
    QDateTime utc = dateTimeAt(text, u"Tt ");
    if (!utc.isValid())
        return {};
    qsizetype at = 19;
    if (at < text.size() && text[at] == QLatin1Char('.')) {
        int milliseconds = 0;
        int digits = 0;
        for (++at; at < text.size() && text[at].isDigit() && digits < 9; ++at, ++digits) {
            if (digits < 3)
                milliseconds = milliseconds * 10 + (text[at].unicode() - u'0');
        }
        if (digits == 0)
            return {};
        for (; digits < 3; ++digits)
            milliseconds *= 10;
        utc = utc.addMSecs(milliseconds);
    }
    const QStringView offset = text.sliced(at);
    if (offset == u"Z" || offset == u"z")
        return utc;
    if (offset.size() != 6 || offset[3] != QLatin1Char(':') ||
        (offset[0] != QLatin1Char('+') && offset[0] != QLatin1Char('-'))) {
        return {};
    }
    const int hours = digitsAt(offset, 1, 2);
    const int minutes = digitsAt(offset, 4, 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59)
        return {};
    const int seconds = (hours * 60 + minutes) * 60;
    return utc.addSecs(offset[0] == QLatin1Char('+') ? -seconds : seconds);
}

} // namespace payops
