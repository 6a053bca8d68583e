#include "statementreader.h"

#include "domain/statement/statementtable.h"
#include "domain/statement/statementtext.h"

#include <QIODevice>

namespace payops {

namespace {

constexpr qsizetype kQuotedLength = 60; // of a first line quoted in an error

QString formatTitle(StatementFormat format)
{
    switch (format) {
    case StatementFormat::WeChat:
        return StatementText::tr("a WeChat bill");
    case StatementFormat::Alipay:
        return StatementText::tr("an Alipay business detail");
    case StatementFormat::Generic:
    case StatementFormat::Auto:
        break;
    }
    return StatementText::tr("a generic statement");
}

QString expectedFirstLine(StatementFormat format)
{
    switch (format) {
    case StatementFormat::WeChat:
        return StatementText::tr("its header row (交易时间,公众账号ID,...)");
    case StatementFormat::Alipay:
        return QStringLiteral("\"#支付宝业务明细查询\"");
    case StatementFormat::Generic:
    case StatementFormat::Auto:
        break;
    }
    return StatementText::tr("a header row naming pay_no");
}

// What a file that is no text at all most likely is, from its first bytes: a finance user
// who downloaded the archive or the Excel version gets told so.
void refuseArchives(const QByteArray &start)
{
    if (start.startsWith("PK\x03\x04"))
        refuseStatement(StatementText::tr(
            "the file is a ZIP archive (or an Excel workbook), not a CSV statement: "
            "unzip it, or download the statement as CSV"));
    if (start.startsWith("\x1F\x8B"))
        refuseStatement(
            StatementText::tr("the file is gzip-compressed: decompress it (gunzip) first"));
    if (start.startsWith("%PDF"))
        refuseStatement(StatementText::tr("the file is a PDF, not a CSV statement"));
}

// The format the first line names: Alipay's "#支付宝..." comment, WeChat's header row, or a
// generic header naming pay_no. Auto when it is none of them.
StatementFormat sniff(const QString &first)
{
    if (first.startsWith(QLatin1Char('#')) && first.contains(u"支付宝"))
        return StatementFormat::Alipay;
    if (first.contains(u"交易时间") && first.contains(u"微信订单号"))
        return StatementFormat::WeChat;
    for (QStringView name : QStringView(first).split(QLatin1Char(','))) {
        name = name.trimmed();
        if (name.startsWith(QLatin1Char('"')) && name.endsWith(QLatin1Char('"')) &&
            name.size() >= 2)
            name = name.sliced(1, name.size() - 2);
        if (name == u"pay_no")
            return StatementFormat::Generic;
    }
    return StatementFormat::Auto;
}

} // namespace

std::optional<StatementFormat> statementFormatFromName(const QString &name)
{
    for (const StatementFormat format : {StatementFormat::Auto, StatementFormat::Generic,
                                         StatementFormat::WeChat, StatementFormat::Alipay}) {
        if (statementFormatName(format) == name)
            return format;
    }
    return std::nullopt;
}

QString statementFormatName(StatementFormat format)
{
    switch (format) {
    case StatementFormat::Auto:
        return QStringLiteral("auto");
    case StatementFormat::Generic:
        return QStringLiteral("generic");
    case StatementFormat::WeChat:
        return QStringLiteral("wechat");
    case StatementFormat::Alipay:
        return QStringLiteral("alipay");
    }
    return QString();
}

StatementReader::StatementReader(QIODevice &device, StatementFormat format)
    : m_source(std::make_unique<StatementLineSource>(device))
{
    refuseArchives(device.peek(4));
    QByteArray first;
    if (!m_source->readFirstLine(first))
        refuseStatement(StatementText::tr("the file is empty: it holds no statement"));

    // WeChat and generic files are UTF-8; Alipay writes GBK (GB18030 is its superset), and a
    // copy saved again as UTF-8 reads as well. The first line decides, since it names the format.
    QStringDecoder utf8(QStringConverter::Utf8);
    QString text = utf8.decode(first);
    const bool isUtf8 = !utf8.hasError();
    if (!isUtf8) {
        QStringDecoder gbk("GB18030");
        text = gbk.decode(first);
    }
    const StatementFormat found = sniff(text);
    if (format == StatementFormat::Auto) {
        if (found == StatementFormat::Auto && !isUtf8) {
            refuseStatement(StatementText::tr(
                "the file is not UTF-8 text, and not an Alipay business detail (GBK): "
                "it is binary or in an encoding payops does not read"));
        }
        if (found == StatementFormat::Auto) {
            refuseStatement(
                StatementText::tr(
                    "not a statement payops knows: the first line is \"%1\"; expected a "
                    "WeChat Pay trade bill, an Alipay business detail, or a CSV whose "
                    "header names pay_no, order_id, amount_fen or amount, status and "
                    "paid_at")
                    .arg(text.left(kQuotedLength)));
        }
        m_header.detected = true;
        format = found;
    } else if (found != format) {
        if (!isUtf8 && format != StatementFormat::Alipay) {
            refuseStatement(
                StatementText::tr(
                    "not %1: the file is not UTF-8 text (saved again in another encoding?)")
                    .arg(formatTitle(format)));
        }
        refuseStatement(
            StatementText::tr("not %1: its first line should be %2, it is \"%3\"")
                .arg(formatTitle(format), expectedFirstLine(format), text.left(kQuotedLength)));
    }
    m_header.format = format;
    m_source->setEncoding(isUtf8 ? StatementLineSource::Encoding::Utf8
                                 : StatementLineSource::Encoding::Gb18030);

    switch (format) {
    case StatementFormat::WeChat:
        m_table = openWeChatTable(*m_source);
        break;
    case StatementFormat::Alipay:
        m_table = openAlipayTable(*m_source);
        break;
    case StatementFormat::Generic:
    case StatementFormat::Auto:
        m_table = openGenericTable(*m_source);
        break;
    }
    m_table->describe(m_header);
}

StatementReader::~StatementReader() = default;

const StatementHeader &StatementReader::header() const
{
    return m_header;
}

bool StatementReader::next(StatementLine &line, QList<StatementLineError> &errors)
{
    line = StatementLine();
    return m_table->next(line, errors);
}

qint64 StatementReader::linesRead() const
{
    return m_source->lineNo();
}

} // namespace payops
