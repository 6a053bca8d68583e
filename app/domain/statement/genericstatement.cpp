// The generic statement: a CSV file with a header row naming its columns (docs/operations.md,
// "Platform statements"), for a platform payops has no reader of its own for, or for a file
// made by hand.

#include "domain/money/money.h"
#include "domain/statement/statementtable.h"
#include "domain/statement/statementtext.h"

namespace payops {

namespace {

class GenericTable final : public StatementTable
{
public:
    explicit GenericTable(StatementLineSource &source);
    void describe(StatementHeader &header) const override { header.channel = m_channel; }
    bool next(StatementLine &line, QList<StatementLineError> &errors) override;

private:
    bool readLine(StatementLine &line, QList<StatementLineError> &errors);

    qsizetype m_payNo = -1;
    qsizetype m_orderId = -1;
    qsizetype m_amountFen = -1;
    qsizetype m_amountYuan = -1;
    qsizetype m_status = -1;
    qsizetype m_paidAt = -1;
    qsizetype m_channelColumn = -1;
    QString m_channel;
    bool m_havePending = false; // the first record, read early for the file's channel
    bool m_atEnd = false;
};

GenericTable::GenericTable(StatementLineSource &source)
    : StatementTable(source)
{
    m_title = StatementText::tr("a generic statement");
    readRecord(); // the header row; the reader found it there
    takeHeader();
    const QString needed =
        StatementText::tr("it needs pay_no, order_id, amount_fen or amount, status, paid_at");
    m_payNo = requireColumn(u"pay_no", needed);
    m_orderId = requireColumn(u"order_id", needed);
    m_status = requireColumn(u"status", needed);
    m_paidAt = requireColumn(u"paid_at", needed);
    m_amountFen = column(u"amount_fen");
    m_amountYuan = column(u"amount");
    if ((m_amountFen < 0) == (m_amountYuan < 0)) {
        refuseStatement(
            StatementText::tr("not a generic statement: its header row must name exactly "
                              "one of amount_fen (whole fen) and amount (yuan)"));
    }
    m_channelColumn = column(u"channel");
    // The file's channel is that of its first line; reading it now lets the header say it.
    m_atEnd = !readRecord();
    m_havePending = !m_atEnd;
    if (m_havePending)
        m_channel = field(m_channelColumn).toString();
}

bool GenericTable::next(StatementLine &line, QList<StatementLineError> &errors)
{
    while (!m_atEnd) {
        if (m_havePending)
            m_havePending = false;
        else if (!readRecord())
            break;
        if (readLine(line, errors))
            return true;
    }
    m_atEnd = true;
    return false;
}

bool GenericTable::readLine(StatementLine &line, QList<StatementLineError> &errors)
{
    if (recordIsEmpty() || !startLine(line, m_payNo, errors))
        return false;

    const QStringView orderId = field(m_orderId);
    const std::optional<qint64> id = orderId.isEmpty() ? 0 : parseWholeNumber(orderId);
    if (!id || *id < 0) {
        lineError(errors,
                  StatementText::tr("has an order_id that is not a whole number: %1").arg(orderId));
        return false;
    }
    line.orderId = *id;

    const bool inFen = m_amountFen >= 0;
    const QStringView amount = field(inFen ? m_amountFen : m_amountYuan);
    const std::optional<qint64> fen = inFen ? parseWholeNumber(amount) : yuanToFen(amount);
    if (!fen) {
        lineError(
            errors,
            inFen ? StatementText::tr("has an amount_fen that is not a whole number of fen: %1")
                        .arg(amount)
                  : StatementText::tr("has an amount that is not yuan with at most two decimals "
                                      "(12.30): %1")
                        .arg(amount));
        return false;
    }
    line.amountFen = *fen;

    line.status = field(m_status).toString();
    if (line.status.isEmpty()) {
        lineError(errors, StatementText::tr("has no status"));
        return false;
    }

    const QStringView paidAt = field(m_paidAt);
    line.paidAt = paidAt.isEmpty() ? QDateTime() : rfc3339ToUtc(paidAt);
    if (!paidAt.isEmpty() && !line.paidAt.isValid()) {
        lineError(errors,
                  StatementText::tr("has a paid_at that is not an RFC 3339 time with its offset "
                                    "(2026-12-01T10:00:00+08:00 or 2026-12-01T02:00:00Z): %1")
                      .arg(paidAt));
        return false;
    }

    const QStringView channel = field(m_channelColumn);
    if (channel != m_channel) {
        lineError(errors, StatementText::tr(
                              "is of channel \"%1\" where the file's first line is of \"%2\": "
                              "a statement covers one channel")
                              .arg(channel, m_channel));
        return false;
    }
    return true;
}

} // namespace

std::unique_ptr<StatementTable> openGenericTable(StatementLineSource &source)
{
    return std::make_unique<GenericTable>(source);
}

} // namespace payops
