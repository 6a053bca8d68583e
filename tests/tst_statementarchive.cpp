#include "domain/statement/statementarchive.h"
#include "domain/statement/statementimport.h"
#include "domain/statement/statementreader.h"
#include "packed.h"
#include "testmain.h"

#include <QBuffer>
#include <QFile>

#include <memory>

using namespace payops;

// Statements packed as the platforms' download APIs give them: Alipay's ZIP (the business
// detail beside its summary, GBK names), WeChat Pay's gzip. The archives under data/statements
// are made by make_archives.py there, from the plain statements beside them.
namespace {

QString dataPath(const char *name)
{
    return QStringLiteral(PAYOPS_STATEMENT_DATA "/") + QLatin1String(name);
}

QByteArray fileBytes(const char *name)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", name);
    return file.readAll();
}

// Every line and unreadable line a reader gives, one text line each, to compare two reads.
QStringList readThrough(QIODevice &device)
{
    StatementReader reader(device, StatementFormat::Auto);
    QStringList read{statementFormatName(reader.header().format)};
    QList<StatementLineError> errors;
    StatementLine line;
    while (reader.next(line, errors))
        read << QStringLiteral("%1 %2 %3 %4 %5 %6")
                    .arg(line.lineNo)
                    .arg(QString::fromLatin1(line.payNo))
                    .arg(line.orderId)
                    .arg(line.amountFen)
                    .arg(line.status, line.paidAt.toString(Qt::ISODate));
    for (const StatementLineError &error : std::as_const(errors))
        read << QStringLiteral("error %1 %2").arg(error.lineNo).arg(error.message);
    return read;
}

QStringList readPlain(const char *name)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", name);
    return readThrough(file);
}

struct PackedRead
{
    QString entryName;
    QStringList read;
};

PackedRead readPacked(QIODevice &file)
{
    StatementContent content = openStatementContent(file);
    if (!content.unpacked)
        qFatal("not taken for a packed statement");
    return {content.entryName, readThrough(*content.unpacked)};
}

PackedRead readPacked(const QByteArray &bytes)
{
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    return readPacked(buffer);
}

// The StatementError that opening and reading `bytes` through raises; empty when none.
QString refusalOf(const QByteArray &bytes)
{
    try {
        readPacked(bytes);
    } catch (const StatementError &error) {
        return QString::fromStdString(error.what());
    }
    return QString();
}

// The hash of what `bytes` unpack to, as the import's first pass takes it; its refusal if any.
QString hashRefusalOf(const QByteArray &bytes)
{
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    try {
        const StatementContent content = openStatementContent(buffer);
        statementFileSha256(*content.unpacked);
    } catch (const StatementError &error) {
        return QString::fromStdString(error.what());
    }
    return QString();
}

// The offset of the first local file header's data, where a ZIP's first entry starts.
qsizetype firstEntryData(const QByteArray &zip)
{
    const auto le16 = [&zip](qsizetype at) {
        return qsizetype(uchar(zip[at])) | qsizetype(uchar(zip[at + 1])) << 8;
    };
    return 30 + le16(26) + le16(28);
}

} // namespace

class TestStatementArchive : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Alipay's bill download: the detail is read, its summary (汇总) left; the entry's GBK name
    // is read as GBK.
    void alipayZipReadsAsTheDetailInIt()
    {
        QFile file(dataPath("alipay_bill.csv.zip"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const PackedRead packed = readPacked(file);
        QCOMPARE(packed.entryName, QStringLiteral("20880000000000000156_20261201_业务明细.csv"));
        const QStringList plain = readPlain("alipay_gbk.csv");
        QCOMPARE(plain.first(), QStringLiteral("alipay"));
        QCOMPARE(packed.read, plain);
    }

    void weChatGzipReadsAsTheBill()
    {
        const QStringList plain = readPlain("wechat_bom_crlf.csv");
        QCOMPARE(plain.first(), QStringLiteral("wechat"));
        QCOMPARE(readPacked(fileBytes("wechat_bill.csv.gz")).read, plain);
        // Two gzip members one after the other read as one text, as gunzip reads them.
        QCOMPARE(readPacked(fileBytes("wechat_two_members.csv.gz")).read, plain);
    }

    // Stored, not deflated; a UTF-8 name (bit 11); a macOS resource fork beside it is no
    // second statement.
    void storedZipWithAUtf8Name()
    {
        const PackedRead packed = readPacked(fileBytes("generic_stored.zip"));
        QCOMPARE(packed.entryName, QStringLiteral("对账单/generic.csv"));
        QCOMPARE(packed.read, readPlain("generic.csv"));
    }

    void aPlainFileIsReadAsItIs()
    {
        QFile file(dataPath("generic.csv"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const StatementContent content = openStatementContent(file);
        QVERIFY(!content.unpacked);
        QCOMPARE(file.pos(), qint64(0));
    }

    // A statement far larger than one read of the file or of the reader's buffer: the text
    // unpacks across many of both, and every line arrives.
    void aLargeGzipStreamsThrough()
    {
        constexpr int lines = 60000;
        QByteArray text = "pay_no,order_id,amount_fen,status,paid_at\n";
        for (int i = 1; i <= lines; ++i)
            text += "P" + QByteArray::number(i).rightJustified(9, '0') + "," +
                    QByteArray::number(i) + "," + QByteArray::number(i % 977 + 1) +
                    ",SUCCESS,2026-12-01T00:00:00Z\n";
        const QByteArray packed = test::gzipped(text);
        QVERIFY(packed.size() > 64 * 1024);
        QBuffer plain(&text);
        QVERIFY(plain.open(QIODevice::ReadOnly));
        const QStringList expected = readThrough(plain);
        QCOMPARE(expected.size(), lines + 1);
        QCOMPARE(readPacked(packed).read, expected);
    }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("says");
        QTest::newRow("an Excel workbook")
            << fileBytes("workbook.xlsx") << QStringLiteral("an Excel workbook");
        QTest::newRow("two statements")
            << fileBytes("two_statements.zip")
            << QStringLiteral("several CSV statements (december.csv, november.csv)");
        const QByteArray alipay = fileBytes("alipay_bill.csv.zip");
        QTest::newRow("cut short: no directory")
            << alipay.first(alipay.size() / 2) << QStringLiteral("not downloaded whole");
        QTest::newRow("empty archive")
            << QByteArray("PK\x05\x06", 4) + QByteArray(18, '\0') << QStringLiteral("empty");
        QByteArray encrypted = fileBytes("generic_stored.zip");
        const qsizetype directory = encrypted.indexOf("PK\x01\x02");
        encrypted[directory + 8] = char(encrypted[directory + 8] | 0x01);
        QTest::newRow("encrypted") << encrypted << QStringLiteral("is encrypted");
        QByteArray bzip2 = fileBytes("generic_stored.zip");
        bzip2[bzip2.indexOf("PK\x01\x02") + 10] = 12;
        QTest::newRow("bzip2") << bzip2 << QStringLiteral("compressed with method 12");
        QByteArray noCsv = fileBytes("two_statements.zip");
        noCsv.replace("december.csv", "december.txt").replace("november.csv", "november.txt");
        QTest::newRow("no CSV") << noCsv
                                << QStringLiteral("holds no CSV statement (it holds december.txt");
    }

    void refusals()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, says);
        const QString refusal = refusalOf(bytes);
        QVERIFY2(refusal.contains(says),
                 qPrintable(QStringLiteral("refused with \"%1\"").arg(refusal)));
    }

    // Damage inside the packed text shows as it is read: the reader and the import's hashing
    // pass both stop with what is wrong, neither takes the text read so far for the whole.
    void damageInsideIsFound_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("says");
        const QByteArray gzip = fileBytes("wechat_bill.csv.gz");
        QTest::newRow("gzip cut short")
            << gzip.first(gzip.size() - 20) << QStringLiteral("not downloaded whole");
        QByteArray gzipFlipped = gzip;
        gzipFlipped[gzip.size() - 6] = char(gzipFlipped[gzip.size() - 6] ^ 0x55); // its CRC
        QTest::newRow("gzip checksum") << gzipFlipped << QStringLiteral("the archive is damaged");
        // A pay_no of its last line changed: every line still reads, the checksum at the end
        // does not match.
        QByteArray stored = fileBytes("generic_stored.zip");
        const qsizetype payNo = stored.indexOf("4200009000000006");
        QVERIFY(payNo > firstEntryData(stored));
        stored[payNo + 15] = '9';
        QTest::newRow("stored entry changed")
            << stored << QStringLiteral("does not match its checksum");
        QByteArray deflated = fileBytes("alipay_bill.csv.zip");
        const qsizetype detail = deflated.indexOf("PK\x03\x04", 4); // the second entry
        deflated[detail + firstEntryData(deflated.mid(detail)) + 3] ^= 0x5A;
        QTest::newRow("deflated entry changed")
            << deflated << QStringLiteral("the archive is damaged");
    }

    void damageInsideIsFound()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, says);
        const QString whileRead = refusalOf(bytes);
        QVERIFY2(whileRead.contains(says), qPrintable(whileRead));
        const QString whileHashed = hashRefusalOf(bytes);
        QVERIFY2(whileHashed.contains(says), qPrintable(whileHashed));
    }
};

PAYOPS_TEST_MAIN_CORE(TestStatementArchive)
#include "tst_statementarchive.moc"
