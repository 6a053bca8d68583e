// The WeChat Pay trade bill (交易账单, bill_type ALL) as a merchant downloads it: a header row
// of the published column names, one row per transaction with a backtick before every field,
// then a totals header (总交易单数,...) and a totals row. Columns are found by name, so that
// the columns WeChat added in 2018 (订单金额, 申请退款金额, 费率备注) and any it adds later
// change nothing.

#include "domain/money/money.h"
#include "domain/statement/statementtable.h"
#include "domain/statement/statementtext.h"

namespace payops {

namespace {

class WeChatTable final : public StatementTable
{
public:
    explicit WeChatTable(StatementLineSource &source);
    void describe(StatementHeader &header) const override
    {
        header.channel = QStringLiteral("wechat");
    }
    bool next(StatementLine &line, QList<StatementLineError> &errors) override;

private:
    bool readLine(StatementLine &line, QList<StatementLineError> &errors);
    void readTotals(QList<StatementLineError> &errors);
    std::optional<qint64> amount(qsizetype column, QList<StatementLineError> &errors) const;

    qsizetype m_time = -1;
    qsizetype m_payNo = -1;
    qsizetype m_orderNo = -1;
    qsizetype m_status = -1;
    qsizetype m_settled = -1; // 应结订单金额: the order less free coupons
    qsizetype m_total = -1;   // 订单金额: what the customer's order was, the callback's amount
    qsizetype m_refund = -1;
    qint64 m_rows = 0;
    bool m_atEnd = false;
};

WeChatTable::WeChatTable(StatementLineSource &source)
    : StatementTable(source)
{
    m_prefix = QLatin1Char('`');
    m_title = StatementText::tr("a WeChat bill");
    readRecord();
    takeHeader();
    m_time = requireColumn(u"交易时间");
    m_payNo = requireColumn(u"微信订单号");
    m_orderNo = requireColumn(u"商户订单号");
    m_status = requireColumn(u"交易状态");
    m_settled = column(u"应结订单金额");
    if (m_settled < 0)
        m_settled = column(u"总金额"); // its name in bills from before November 2018
    if (m_settled < 0)
        requireColumn(u"应结订单金额");
    m_refund = requireColumn(u"退款金额");
    m_total = column(u"订单金额");
}

bool WeChatTable::next(StatementLine &line, QList<StatementLineError> &errors)
{
    while (!m_atEnd) {
        if (!readRecord())
            refuseTruncated(StatementText::tr("its totals rows (总交易单数, ...)"));
        if (field(0) == u"总交易单数") {
            readTotals(errors);
            m_atEnd = true;
            break;
        }
        if (recordIsEmpty())
            continue;
        ++m_rows;
        if (readLine(line, errors))
            return true;
    }
    return false;
}

bool WeChatTable::readLine(StatementLine &line, QList<StatementLineError> &errors)
{
    if (!startLine(line, m_payNo, errors))
        return false;
    line.orderId = merchantOrderId(field(m_orderNo));
    line.orderNo = merchantOrderNo(field(m_orderNo));
    line.status = field(m_status).toString();
    if (line.status.isEmpty()) {
        lineError(errors, StatementText::tr("has no 交易状态 (trade status)"));
        return false;
    }
    line.paidAt = beijingTimeToUtc(field(m_time));
    if (!line.paidAt.isValid()) {
        lineError(errors, StatementText::tr(
                              "has a 交易时间 that is not a time such as 2026-12-01 10:00:00: %1")
                              .arg(field(m_time)));
        return false;
    }
    // A refund line lists the refunded amount; it leaves the merchant, so it counts negative.
    const bool refund = line.status == QLatin1String("REFUND");
    qsizetype amountColumn = m_settled;
    if (refund)
        amountColumn = m_refund;
    else if (m_total >= 0 && !field(m_total).isEmpty())
        amountColumn = m_total;
    const std::optional<qint64> fen = amount(amountColumn, errors);
    if (!fen)
        return false;
    line.amountFen = refund ? -qAbs(*fen) : *fen;
    return true;
}

std::optional<qint64> WeChatTable::amount(qsizetype column, QList<StatementLineError> &errors) const
{
    const std::optional<qint64> fen = yuanToFen(field(column));
    if (!fen) {
        lineError(errors,
                  StatementText::tr("has a %1 that is not yuan with at most two decimals: %2")
                      .arg(headerName(column), field(column)));
    }
    return fen;
}

// The totals tell how many transactions the bill has: a file cut short inside its table, or
// lines lost on the way, show as a difference. It is reported as an error of the totals line
// rather than refusing the file, so that the lines that are there still reconcile.
void WeChatTable::readTotals(QList<StatementLineError> &errors)
{
    const qsizetype countColumn = 0; // 总交易单数, the totals header's first name
    if (!readRecord())
        refuseTruncated(StatementText::tr("the totals row under its totals header"));
    const std::optional<qint64> count = parseWholeNumber(field(countColumn));
    if (!count) {
        lineError(errors, StatementText::tr(
                              "has a 总交易单数 (number of transactions) that is not a number: %1")
                              .arg(field(countColumn)));
    } else if (*count != m_rows) {
        lineError(errors, StatementText::tr(
                              "says the bill has %1 transactions (总交易单数), the file lists %2: "
                              "lines are missing or were added")
                              .arg(QString::number(*count), QString::number(m_rows)));
    }
    while (readRecord())
        lineError(errors, StatementText::tr("follows the totals row and is not read"));
}

} // namespace

std::unique_ptr<StatementTable> openWeChatTable(StatementLineSource &source)
{
    return std::make_unique<WeChatTable>(source);
}

} // namespace payops
