// The Alipay business detail (业务明细) as a merchant downloads it: GBK text, comment lines
// starting with '#' before the table (the account, the period) and after it (the end marker,
// the totals, the export time), the published column names, every field padded with a tab.
// Columns are found by name; a UTF-8 copy of the file reads the same.

#include "domain/money/money.h"
#include "domain/statement/statementtable.h"
#include "domain/statement/statementtext.h"

namespace payops {

namespace {

const QString kEndMarker = QStringLiteral("业务明细列表结束");

// "[2026年12月01日 00:00:00]" after `label` in a comment line, in Beijing time, as UTC;
// invalid when the line does not say it.
QDateTime declaredTime(QStringView comment, QStringView label)
{
    qsizetype at = comment.indexOf(label);
    if (at < 0)
        return {};
    at += label.size();
    while (at < comment.size() &&
           (comment[at] == u'：' || comment[at] == u':' || comment[at] == u'['))
        ++at;
    const QStringView text = comment.sliced(at);
    if (text.size() < 20 || text[4] != u'年' || text[7] != u'月' || text[10] != u'日')
        return {};
    // Rewritten as "2026-12-01 00:00:00", the form the table's times have.
    QString time = text.first(20).toString();
    time.remove(10, 1);
    time[4] = QLatin1Char('-');
    time[7] = QLatin1Char('-');
    return beijingTimeToUtc(time);
}

// The N of "#交易合计：N笔，..." when the comment is that total; -1 otherwise.
qint64 declaredCount(QStringView comment, QStringView label)
{
    qsizetype at = comment.indexOf(label);
    if (at < 0)
        return -1;
    at += label.size();
    if (at < comment.size() && (comment[at] == u'：' || comment[at] == u':'))
        ++at;
    const qsizetype end = comment.indexOf(u'笔', at);
    if (end < 0)
        return -1;
    const std::optional<qint64> count = parseWholeNumber(comment.sliced(at, end - at));
    return count.value_or(-1);
}

class AlipayTable final : public StatementTable
{
public:
    explicit AlipayTable(StatementLineSource &source);
    void describe(StatementHeader &header) const override;
    bool next(StatementLine &line, QList<StatementLineError> &errors) override;

private:
    bool readLine(StatementLine &line, QList<StatementLineError> &errors);
    void readTotals(QList<StatementLineError> &errors);

    QDateTime m_periodStart;
    QDateTime m_periodEnd;
    qsizetype m_payNo = -1;
    qsizetype m_orderNo = -1;
    qsizetype m_kind = -1; // 业务类型: 交易 or 退款
    qsizetype m_created = -1;
    qsizetype m_finished = -1;
    qsizetype m_amount = -1;
    qint64 m_payments = 0;
    qint64 m_refunds = 0;
    bool m_atEnd = false;
};

AlipayTable::AlipayTable(StatementLineSource &source)
    : StatementTable(source)
{
    m_title = StatementText::tr("an Alipay business detail");
    while (true) {
        if (!readRecord())
            refuseTruncated(StatementText::tr("its table"));
        if (!recordText().startsWith(QLatin1Char('#')))
            break;
        if (!m_periodStart.isValid())
            m_periodStart = declaredTime(recordText(), u"起始日期");
        if (!m_periodEnd.isValid())
            m_periodEnd = declaredTime(recordText(), u"终止日期");
    }
    takeHeader();
    m_payNo = requireColumn(u"支付宝交易号");
    m_orderNo = requireColumn(u"商户订单号");
    m_kind = requireColumn(u"业务类型");
    m_amount = requireColumn(u"订单金额（元）");
    m_created = column(u"创建时间");
    m_finished = column(u"完成时间");
    if (m_created < 0 && m_finished < 0)
        requireColumn(u"完成时间");
}

void AlipayTable::describe(StatementHeader &header) const
{
    header.channel = QStringLiteral("alipay");
    header.periodStart = m_periodStart;
    header.periodEnd = m_periodEnd;
}

bool AlipayTable::next(StatementLine &line, QList<StatementLineError> &errors)
{
    while (!m_atEnd) {
        if (!readRecord())
            refuseTruncated(StatementText::tr("its end marker (#---业务明细列表结束---)"));
        if (recordText().startsWith(QLatin1Char('#'))) {
            if (recordText().contains(kEndMarker)) {
                readTotals(errors);
                m_atEnd = true;
            }
            continue;
        }
        if (recordIsEmpty())
            continue;
        if (readLine(line, errors))
            return true;
    }
    return false;
}

bool AlipayTable::readLine(StatementLine &line, QList<StatementLineError> &errors)
{
    const QStringView kind = field(m_kind);
    if (kind == u"交易")
        ++m_payments;
    else if (kind == u"退款")
        ++m_refunds;
    if (!startLine(line, m_payNo, errors))
        return false;
    line.orderId = merchantOrderId(field(m_orderNo));
    line.orderNo = merchantOrderNo(field(m_orderNo));
    const bool refund = kind == u"退款";
    if (kind.isEmpty()) {
        lineError(errors, StatementText::tr("has no 业务类型 (交易 or 退款)"));
        return false;
    }
    if (kind == u"交易")
        line.status = QStringLiteral("SUCCESS");
    else if (refund)
        line.status = QStringLiteral("REFUND");
    else
        line.status = kind.toString(); // the platform's own word

    const qsizetype timeColumn = field(m_finished).isEmpty() ? m_created : m_finished;
    line.paidAt = beijingTimeToUtc(field(timeColumn));
    if (!line.paidAt.isValid()) {
        lineError(
            errors,
            StatementText::tr("has a %1 that is not a time such as 2026-12-01 10:00:00: %2")
                .arg(headerName(timeColumn >= 0 ? timeColumn : m_finished), field(timeColumn)));
        return false;
    }
    const std::optional<qint64> fen = yuanToFen(field(m_amount));
    if (!fen) {
        lineError(errors,
                  StatementText::tr(
                      "has an 订单金额（元） that is not yuan with at most two decimals: %1")
                      .arg(field(m_amount)));
        return false;
    }
    // Refund lines may write the amount with or without its minus; it leaves the merchant.
    line.amountFen = refund ? -qAbs(*fen) : *fen;
    return true;
}

// After the end marker: "#交易合计：N笔，..." and "#退款合计：N笔，...". A count that differs from
// the lines read is an error of that line, and the lines that are there still reconcile.
void AlipayTable::readTotals(QList<StatementLineError> &errors)
{
    while (readRecord()) {
        const struct
        {
            QStringView label;
            qint64 read;
        } totals[] = {{u"交易合计", m_payments}, {u"退款合计", m_refunds}};
        for (const auto &total : totals) {
            const qint64 declared = declaredCount(recordText(), total.label);
            if (declared >= 0 && declared != total.read) {
                lineError(errors, StatementText::tr(
                                      "says the file has %1 lines of %2, it lists %3: lines are "
                                      "missing or were added")
                                      .arg(QString::number(declared), total.label.first(2),
                                           QString::number(total.read)));
            }
        }
    }
}

} // namespace

std::unique_ptr<StatementTable> openAlipayTable(StatementLineSource &source)
{
    return std::make_unique<AlipayTable>(source);
}

} // namespace payops
