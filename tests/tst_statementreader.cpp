#include "domain/statement/statementreader.h"
#include "domain/statement/statementtable.h"
#include "testmain.h"

#include <QBuffer>
#include <QFile>

using namespace payops;

namespace {

struct ReadResult
{
    StatementHeader header;
    QList<StatementLine> lines;
    QList<StatementLineError> errors;
    qint64 linesRead = 0;
};

ReadResult readAll(QIODevice &device, StatementFormat format)
{
    ReadResult result;
    StatementReader reader(device, format);
    result.header = reader.header();
    StatementLine line;
    while (reader.next(line, result.errors))
        result.lines.append(line);
    result.linesRead = reader.linesRead();
    return result;
}

QString dataPath(const char *name)
{
    return QStringLiteral(PAYOPS_STATEMENT_DATA "/") + QLatin1String(name);
}

ReadResult readFile(const char *name, StatementFormat format = StatementFormat::Auto)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", name);
    return readAll(file, format);
}

// The StatementError that reading `bytes` through to its end raises; empty when none.
QString refusalOf(const QByteArray &bytes, StatementFormat format = StatementFormat::Auto)
{
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    try {
        readAll(buffer, format);
    } catch (const StatementError &error) {
        return QString::fromStdString(error.what());
    }
    return QString();
}

QString refusalOfFile(const char *name, StatementFormat format = StatementFormat::Auto)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", name);
    return refusalOf(file.readAll(), format);
}

QDateTime utc(const char *text)
{
    return QDateTime::fromString(QLatin1String(text), Qt::ISODateWithMs);
}

void compareLine(const StatementLine &line, qint64 lineNo, const QByteArray &payNo, qint64 orderId,
                 qint64 amountFen, const char *status, const char *paidAt)
{
    QCOMPARE(line.lineNo, lineNo);
    QCOMPARE(line.payNo, payNo);
    QCOMPARE(line.orderId, orderId);
    QCOMPARE(line.amountFen, amountFen);
    QCOMPARE(line.status, QLatin1String(status));
    QCOMPARE(line.paidAt, utc(paidAt));
    QCOMPARE(line.paidAt.timeSpec(), Qt::UTC);
}

// The same file in two encodings reads the same.
void compareReads(const ReadResult &actual, const ReadResult &expected)
{
    QCOMPARE(actual.lines.size(), expected.lines.size());
    for (qsizetype i = 0; i < actual.lines.size(); ++i) {
        QCOMPARE(actual.lines[i].lineNo, expected.lines[i].lineNo);
        QCOMPARE(actual.lines[i].payNo, expected.lines[i].payNo);
        QCOMPARE(actual.lines[i].amountFen, expected.lines[i].amountFen);
        QCOMPARE(actual.lines[i].paidAt, expected.lines[i].paidAt);
    }
    QCOMPARE(actual.errors.size(), expected.errors.size());
    for (qsizetype i = 0; i < actual.errors.size(); ++i)
        QCOMPARE(actual.errors[i].message, expected.errors[i].message);
}

// A generic statement of `lines` lines made while it is read, each line as long as the next,
// so that how far the reader has read ahead of the line it is on can be measured.
class GeneratedStatement final : public QIODevice
{
public:
    static constexpr qint64 kLineBytes = 64;
    explicit GeneratedStatement(qint64 lines)
        : m_lines(lines)
    {
        m_pending = header();
        open(QIODevice::ReadOnly);
    }
    static QByteArray header() { return "pay_no,order_id,amount_fen,status,paid_at\n"; }
    bool isSequential() const override { return true; }
    qint64 generated() const { return m_generated; }

protected:
    qint64 readData(char *data, qint64 maxSize) override
    {
        while (m_pending.size() < maxSize && m_made < m_lines) {
            ++m_made;
            QByteArray line = "P" + QByteArray::number(m_made).rightJustified(12, '0') + "," +
                              QByteArray::number(m_made) + ",100,SUCCESS,2026-12-01T00:00:00Z";
            m_pending += line.leftJustified(kLineBytes - 1, ' ') + '\n';
        }
        if (m_pending.isEmpty())
            return -1;
        const qint64 size = qMin(maxSize, qint64(m_pending.size()));
        memcpy(data, m_pending.constData(), size);
        m_pending.remove(0, size);
        m_generated += size;
        return size;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    qint64 m_lines;
    qint64 m_made = 0;
    qint64 m_generated = 0;
    QByteArray m_pending;
};

} // namespace

class TestStatementReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formatNames()
    {
        for (const char *name : {"auto", "generic", "wechat", "alipay"}) {
            const auto format = statementFormatFromName(QLatin1String(name));
            QVERIFY(format);
            QCOMPARE(statementFormatName(*format), QLatin1String(name));
        }
        QVERIFY(!statementFormatFromName(QStringLiteral("WeChat")));
        QVERIFY(!statementFormatFromName(QString()));
    }

    void times()
    {
        // Beijing has had no daylight saving since 1991: always UTC+8, across a year's end too.
        QCOMPARE(beijingTimeToUtc(u"2026-01-01 07:59:59"), utc("2025-12-31T23:59:59Z"));
        QCOMPARE(beijingTimeToUtc(u"2026-07-01 08:00:00"), utc("2026-07-01T00:00:00Z"));
        QVERIFY(!beijingTimeToUtc(u"2026-02-29 10:00:00").isValid());
        QVERIFY(!beijingTimeToUtc(u"2026-12-01T10:00:00").isValid());
        QVERIFY(!beijingTimeToUtc(u"2026-12-01 10:00").isValid());
        QVERIFY(!beijingTimeToUtc(u"2026-12-01 10:00:00 ").isValid());
        QCOMPARE(rfc3339ToUtc(u"2026-12-01T10:00:00.25+08:00"), utc("2026-12-01T02:00:00.250Z"));
        QCOMPARE(rfc3339ToUtc(u"2026-12-01t02:00:00.123456789z"), utc("2026-12-01T02:00:00.123Z"));
        QCOMPARE(rfc3339ToUtc(u"2026-11-30T20:30:00-05:30"), utc("2026-12-01T02:00:00Z"));
        QVERIFY(!rfc3339ToUtc(u"2026-12-01T10:00:00").isValid());
        QVERIFY(!rfc3339ToUtc(u"2026-12-01T10:00:00+0800").isValid());
        QVERIFY(!rfc3339ToUtc(u"2026-12-01T10:00:00.Z").isValid());
        QVERIFY(!rfc3339ToUtc(u"2026-13-01T10:00:00Z").isValid());
    }

    void weChatWithBomAndCrlf()
    {
        const ReadResult result = readFile("wechat_bom_crlf.csv");
        QCOMPARE(result.header.format, StatementFormat::WeChat);
        QVERIFY(result.header.detected);
        QCOMPARE(result.header.channel, QStringLiteral("wechat"));
        QVERIFY(!result.header.periodStart.isValid());
        QCOMPARE(result.lines.size(), 4);
        compareLine(result.lines[0], 2, "4200002026120100000001", 1001, 9900, "SUCCESS",
                    "2026-12-01T02:00:00Z");
        // Before 08:00 in Beijing is the day before in UTC.
        compareLine(result.lines[1], 3, "4200002026120100000002", 1002, 1, "SUCCESS",
                    "2026-11-30T21:30:00Z");
        // 订单金额 (what the customer's order was) rather than 应结订单金额; a merchant order
        // number that is none of our ids matches no order.
        compareLine(result.lines[2], 5, "4200002026120100000004", 0, 9999, "SUCCESS",
                    "2026-12-01T04:00:00Z");
        compareLine(result.lines[3], 6, "4200002026120100000001", 1001, -9900, "REFUND",
                    "2026-12-01T05:00:00Z");
        QCOMPARE(result.errors.size(), 1);
        QCOMPARE(result.errors[0].lineNo, 4);
        QVERIFY2(result.errors[0].message.contains(QStringLiteral("订单金额")),
                 qPrintable(result.errors[0].message));
        QVERIFY(result.errors[0].message.contains(QStringLiteral("12.3x")));
        QCOMPARE(result.linesRead, 8);
    }

    void weChatWithoutBomTotalsDiffer()
    {
        const ReadResult result = readFile("wechat_nobom.csv", StatementFormat::WeChat);
        QVERIFY(!result.header.detected);
        QCOMPARE(result.header.format, StatementFormat::WeChat);
        QCOMPARE(result.lines.size(), 2);
        compareLine(result.lines[0], 2, "4200002026120200000001", 2001, 1000, "SUCCESS",
                    "2026-12-02T01:00:00Z");
        compareLine(result.lines[1], 5, "4200002026120200000004", 2004, 4000, "REVOKED",
                    "2026-12-02T02:00:00Z");
        QCOMPARE(result.errors.size(), 3);
        QCOMPARE(result.errors[0].lineNo, 3);
        QVERIFY2(result.errors[0].message.contains(QStringLiteral("26 fields")),
                 qPrintable(result.errors[0].message));
        QCOMPARE(result.errors[1].lineNo, 4);
        QVERIFY2(result.errors[1].message.contains(QStringLiteral("2026-12-02 24:10:00")),
                 qPrintable(result.errors[1].message));
        // The totals row says 5, the table has 4 rows (two of them malformed).
        QCOMPARE(result.errors[2].lineNo, 7);
        QVERIFY2(result.errors[2].message.contains(QStringLiteral("5 transactions")),
                 qPrintable(result.errors[2].message));
        QVERIFY(result.errors[2].message.contains(QStringLiteral("lists 4")));
    }

    void weChatSavedAsGbkReadsTheSame()
    {
        const ReadResult utf8 = readFile("wechat_bom_crlf.csv");
        const ReadResult gbk = readFile("wechat_gbk.csv");
        QCOMPARE(gbk.header.format, StatementFormat::WeChat);
        compareReads(gbk, utf8);
    }

    void weChatTruncated()
    {
        const QString refusal = refusalOfFile("wechat_truncated.csv");
        QVERIFY2(refusal.contains(QStringLiteral("truncated")), qPrintable(refusal));
        QVERIFY(refusal.contains(QStringLiteral("总交易单数")));
        // The totals header without its row is cut short as well.
        QFile file(dataPath("wechat_bom_crlf.csv"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QByteArray bytes = file.readAll();
        bytes.truncate(bytes.lastIndexOf("\r\n", bytes.size() - 3) + 2);
        QVERIFY(bytes.endsWith("申请退款总金额\r\n"));
        QVERIFY(refusalOf(bytes).contains(QStringLiteral("without the totals row")));
        QVERIFY(refusalOf(bytes).contains(QStringLiteral("line 7")));
    }

    void alipayGbk()
    {
        const ReadResult result = readFile("alipay_gbk.csv");
        QCOMPARE(result.header.format, StatementFormat::Alipay);
        QVERIFY(result.header.detected);
        QCOMPARE(result.header.channel, QStringLiteral("alipay"));
        QCOMPARE(result.header.periodStart, utc("2026-11-30T16:00:00Z"));
        QCOMPARE(result.header.periodEnd, utc("2026-12-01T16:00:00Z"));
        QCOMPARE(result.lines.size(), 3);
        // Tabs padding the fields are gone; 完成时间 is the time, 创建时间 when it is empty.
        compareLine(result.lines[0], 6, "2026120122001400000000000001", 3001, 9900, "SUCCESS",
                    "2026-12-01T02:00:00Z");
        compareLine(result.lines[1], 7, "2026120122001400000000000002", 3002, 2550, "SUCCESS",
                    "2026-11-30T16:10:00Z");
        compareLine(result.lines[2], 9, "2026120122001400000000000001", 3001, -9900, "REFUND",
                    "2026-12-01T04:00:05Z");
        QCOMPARE(result.errors.size(), 1);
        QCOMPARE(result.errors[0].lineNo, 8);
        QVERIFY2(result.errors[0].message.contains(QStringLiteral("订单金额（元）")),
                 qPrintable(result.errors[0].message));
        QCOMPARE(result.linesRead, 13);
    }

    void alipayUtf8Copy()
    {
        const ReadResult gbk = readFile("alipay_gbk.csv");
        const ReadResult utf8 = readFile("alipay_utf8.csv", StatementFormat::Alipay);
        QVERIFY(!utf8.header.detected);
        QCOMPARE(utf8.header.periodStart, gbk.header.periodStart);
        compareReads(utf8, gbk);
    }

    void alipayTotalsDiffer()
    {
        QFile file(dataPath("alipay_utf8.csv"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QByteArray bytes = file.readAll();
        bytes.replace("#退款合计：1笔", "#退款合计：2笔");
        QBuffer buffer(&bytes);
        QVERIFY(buffer.open(QIODevice::ReadOnly));
        const ReadResult result = readAll(buffer, StatementFormat::Auto);
        QCOMPARE(result.lines.size(), 3);
        QCOMPARE(result.errors.size(), 2);
        QCOMPARE(result.errors[1].lineNo, 12);
        QVERIFY2(result.errors[1].message.contains(QStringLiteral("2 lines of 退款")),
                 qPrintable(result.errors[1].message));
    }

    void alipayTruncated()
    {
        const QString refusal = refusalOfFile("alipay_truncated_gbk.csv");
        QVERIFY2(refusal.contains(QStringLiteral("truncated")), qPrintable(refusal));
        QVERIFY(refusal.contains(QStringLiteral("业务明细列表结束")));
    }

    void genericQuotedAndMalformed()
    {
        const ReadResult result = readFile("generic.csv");
        QCOMPARE(result.header.format, StatementFormat::Generic);
        QVERIFY(result.header.detected);
        QCOMPARE(result.header.channel, QStringLiteral("wechat"));
        QCOMPARE(result.lines.size(), 3);
        compareLine(result.lines[0], 2, "4200009000000001", 5001, 9900, "SUCCESS",
                    "2026-12-01T02:00:00Z");
        compareLine(result.lines[1], 4, "4200009000000003", 5003, 1230, "SUCCESS",
                    "2026-12-01T03:00:00.250Z");
        compareLine(result.lines[2], 6, "4200009000000005", 0, -500, "REFUND",
                    "2026-12-01T05:00:00Z");
        QCOMPARE(result.errors.size(), 3);
        QCOMPARE(result.errors[0].lineNo, 3); // "1,000.00": no thousands separators
        QVERIFY(result.errors[0].message.contains(QStringLiteral("1,000.00")));
        QCOMPARE(result.errors[1].lineNo, 5); // 12.345
        QCOMPARE(result.errors[2].lineNo, 7); // a time without its offset
        QVERIFY(result.errors[2].message.contains(QStringLiteral("offset")));
    }

    void genericInFenWithBomCrlfAndLineBreak()
    {
        const ReadResult result = readFile("generic_fen_bom_crlf.csv", StatementFormat::Generic);
        QCOMPARE(result.header.channel, QString());
        QCOMPARE(result.lines.size(), 3);
        compareLine(result.lines[0], 2, "ali,with,commas", 6001, 9900, "SUCCESS",
                    "2026-12-03T08:00:00Z");
        compareLine(result.lines[1], 3, "a \"quoted\" id", 6002, 100, "CLOSED",
                    "2026-12-03T09:00:00Z");
        // A quoted field holding a line break: one record over two lines, known by its first.
        compareLine(result.lines[2], 5, "line\nbreak", 6004, 250, "SUCCESS",
                    "2026-12-03T11:00:00Z");
        QCOMPARE(result.errors.size(), 1);
        QCOMPARE(result.errors[0].lineNo, 4);
        QVERIFY(result.errors[0].message.contains(QStringLiteral("amount_fen")));
        QCOMPARE(result.linesRead, 6);
    }

    void genericLineChecks()
    {
        const QByteArray header = "pay_no,order_id,amount_fen,status,paid_at,channel\n";
        QBuffer buffer;
        buffer.setData(header + ",1,100,SUCCESS,2026-12-01T00:00:00Z,wechat\n" +
                       QByteArray(65, 'x') + ",2,100,SUCCESS,2026-12-01T00:00:00Z,wechat\n" +
                       "p3,x3,100,SUCCESS,2026-12-01T00:00:00Z,wechat\n" +
                       "p4,4,100,,2026-12-01T00:00:00Z,wechat\n" +
                       "p5,5,100,SUCCESS,2026-12-01T00:00:00Z,alipay\n" + ",,,,,\n" +
                       "p7,7,100,SUCCESS,,wechat\n");
        QVERIFY(buffer.open(QIODevice::ReadOnly));
        const ReadResult result = readAll(buffer, StatementFormat::Auto);
        QCOMPARE(result.header.channel, QStringLiteral("wechat"));
        QCOMPARE(result.lines.size(), 1); // a line without a time is kept, its time unknown
        QCOMPARE(result.lines[0].payNo, QByteArray("p7"));
        QVERIFY(!result.lines[0].paidAt.isValid());
        const QStringList expected{QStringLiteral("no transaction id"),
                                   QStringLiteral("longer than 64"), QStringLiteral("order_id"),
                                   QStringLiteral("no status"), QStringLiteral("one channel")};
        QCOMPARE(result.errors.size(), expected.size());
        for (qsizetype i = 0; i < expected.size(); ++i) {
            QCOMPARE(result.errors[i].lineNo, i + 2);
            QVERIFY2(result.errors[i].message.contains(expected[i]),
                     qPrintable(result.errors[i].message));
        }
    }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("format");
        QTest::addColumn<QString>("says");
        const auto file = [](const char *name) {
            QFile f(dataPath(name));
            if (!f.open(QIODevice::ReadOnly))
                qFatal("cannot open %s", name);
            return f.readAll();
        };
        const int autoFormat = int(StatementFormat::Auto);
        QTest::newRow("empty") << file("empty.csv") << autoFormat << QStringLiteral("empty");
        QTest::newRow("blank lines only")
            << file("blank_lines.csv") << autoFormat << QStringLiteral("empty");
        QTest::newRow("binary further in")
            << file("binary.csv") << autoFormat << QStringLiteral("line 3 holds binary");
        QTest::newRow("unknown header")
            << file("unknown.csv") << autoFormat << QStringLiteral("not a statement payops knows");
        QTest::newRow("not UTF-8 further in")
            << file("not_utf8_generic.csv") << autoFormat << QStringLiteral("line 2 is not UTF-8");
        QTest::newRow("not UTF-8 from the start")
            << QByteArray("\xff\xfe\x41\x00\x42\x00") << autoFormat << QStringLiteral("binary");
        QTest::newRow("zip") << QByteArray("PK\x03\x04\x14\x00", 6) << autoFormat
                             << QStringLiteral("ZIP archive");
        QTest::newRow("gzip") << QByteArray("\x1f\x8b\x08\x00", 4) << autoFormat
                              << QStringLiteral("gzip");
        QTest::newRow("alipay as wechat") << file("alipay_gbk.csv") << int(StatementFormat::WeChat)
                                          << QStringLiteral("not a WeChat bill");
        QTest::newRow("wechat as generic")
            << file("wechat_nobom.csv") << int(StatementFormat::Generic)
            << QStringLiteral("not a generic statement");
        QTest::newRow("generic as alipay") << file("generic.csv") << int(StatementFormat::Alipay)
                                           << QStringLiteral("not an Alipay business detail");
        QTest::newRow("generic without paid_at")
            << QByteArray("pay_no,order_id,amount,status\n") << autoFormat
            << QStringLiteral("no paid_at column");
        QTest::newRow("generic with both amounts")
            << QByteArray("pay_no,order_id,amount,amount_fen,status,paid_at\n") << autoFormat
            << QStringLiteral("exactly one of amount_fen");
        QTest::newRow("wechat without 微信订单号")
            << QStringLiteral("交易时间,微信订单号x,商户订单号,交易状态,应结订单金额,退款金额\r\n")
                   .toUtf8()
            << int(StatementFormat::WeChat) << QStringLiteral("not a WeChat bill");
        QTest::newRow("alipay without its table")
            << QStringLiteral("#支付宝业务明细查询\n#账号：[1]\n").toUtf8() << autoFormat
            << QStringLiteral("without its table");
        QTest::newRow("line over 64 KiB")
            << QByteArray("pay_no,order_id,amount_fen,status,paid_at\n") +
                   QByteArray(70 * 1024, 'a') + "\n"
            << autoFormat << QStringLiteral("line 2 is longer than 64 KiB");
        QTest::newRow("quote never closed")
            << QByteArray("pay_no,order_id,amount_fen,status,paid_at\n\"p1,1,100,SUCCESS,2026-12-"
                          "01T00:00:00Z\n")
            << autoFormat << QStringLiteral("line 2 opens a quoted field");
    }

    void refusals()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, format);
        QFETCH(QString, says);
        const QString refusal = refusalOf(bytes, StatementFormat(format));
        QVERIFY2(refusal.contains(says),
                 qPrintable(QStringLiteral("refused with \"%1\"").arg(refusal)));
    }

    // 200,000 lines read through while they are made: the reader keeps to the line it is on
    // and never reads the file ahead of it (beyond the device's buffer).
    void largeStatementStreams()
    {
        constexpr qint64 lines = 200000;
        GeneratedStatement device(lines);
        StatementReader reader(device, StatementFormat::Auto);
        QList<StatementLineError> errors;
        StatementLine line;
        qint64 count = 0;
        qint64 furthestAhead = 0;
        const qint64 headerBytes = GeneratedStatement::header().size();
        while (reader.next(line, errors)) {
            ++count;
            const qint64 consumed = headerBytes + count * GeneratedStatement::kLineBytes;
            furthestAhead = qMax(furthestAhead, device.generated() - consumed);
            if (count == lines)
                QCOMPARE(line.payNo, QByteArray("P000000200000"));
        }
        QCOMPARE(count, lines);
        QVERIFY(errors.isEmpty());
        QCOMPARE(reader.linesRead(), lines + 1);
        QVERIFY2(furthestAhead <= 2 * StatementLineSource::kMaxLineBytes,
                 qPrintable(QStringLiteral("read %1 bytes ahead").arg(furthestAhead)));
    }
};

PAYOPS_TEST_MAIN_CORE(TestStatementReader)
#include "tst_statementreader.moc"
