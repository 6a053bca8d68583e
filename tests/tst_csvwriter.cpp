#include "domain/export/csvwriter.h"

#include "testmain.h"

#include <QFile>
#include <QTemporaryDir>

#include <stdexcept>

using namespace payops;

// The one CSV writer of every export: what Excel needs to open it (BOM, CRLF, RFC 4180), and
// what keeps a cell from running as a formula.
class TstCsvWriter final : public QObject
{
    Q_OBJECT

    static QByteArray written(const QList<QStringList> &rows)
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.csv"));
        {
            CsvWriter csv(path);
            for (const QStringList &row : rows)
                csv.writeRow(row);
            csv.commit();
        }
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return file.readAll();
    }

private Q_SLOTS:
    void bomCrlfAndChinese()
    {
        const QByteArray bytes =
            written({{QStringLiteral("订单"), QStringLiteral("金额")},
                     {QStringLiteral("1001"), QStringLiteral("优惠券 满100减20")}});
        QCOMPARE(bytes, QByteArray("\xEF\xBB\xBF") +
                            QStringLiteral("订单,金额\r\n1001,优惠券 满100减20\r\n").toUtf8());
    }

    void quotesOnlyWhenNeeded_data()
    {
        QTest::addColumn<QString>("cell");
        QTest::addColumn<QByteArray>("encoded");
        QTest::newRow("plain") << QStringLiteral("INC-7") << QByteArray("INC-7");
        QTest::newRow("empty") << QString() << QByteArray();
        QTest::newRow("comma") << QStringLiteral("a,b") << QByteArray("\"a,b\"");
        QTest::newRow("quote") << QStringLiteral("say \"hi\"") << QByteArray("\"say \"\"hi\"\"\"");
        QTest::newRow("newline") << QStringLiteral("line 1\nline 2")
                                 << QByteArray("\"line 1\nline 2\"");
        QTest::newRow("crlf inside") << QStringLiteral("a\r\nb") << QByteArray("\"a\r\nb\"");
        QTest::newRow("chinese with comma")
            << QStringLiteral("重复发放，已冻结") << QStringLiteral("重复发放，已冻结").toUtf8();
        QTest::newRow("ascii comma in chinese")
            << QStringLiteral("重复,冻结") << QStringLiteral("\"重复,冻结\"").toUtf8();
        QTest::newRow("spaces kept") << QStringLiteral(" padded ") << QByteArray(" padded ");
    }
    void quotesOnlyWhenNeeded()
    {
        QFETCH(QString, cell);
        QFETCH(QByteArray, encoded);
        QCOMPARE(CsvWriter::encodeCell(cell), encoded);
    }

    void formulaCellsAreNeutralised_data()
    {
        QTest::addColumn<QString>("cell");
        QTest::addColumn<QByteArray>("encoded");
        QTest::newRow("equals") << QStringLiteral("=1+1") << QByteArray("'=1+1");
        QTest::newRow("hyperlink") << QStringLiteral("=HYPERLINK(\"http://x\",\"y\")")
                                   << QByteArray("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
        QTest::newRow("plus") << QStringLiteral("+cmd") << QByteArray("'+cmd");
        QTest::newRow("minus dde")
            << QStringLiteral("-2+3+cmd|' /C calc'!A0") << QByteArray("'-2+3+cmd|' /C calc'!A0");
        QTest::newRow("at") << QStringLiteral("@SUM(A1:A2)") << QByteArray("'@SUM(A1:A2)");
        QTest::newRow("tab") << QStringLiteral("\t=1") << QByteArray("'\t=1");
        QTest::newRow("carriage return") << QStringLiteral("\r=1") << QByteArray("\"'\r=1\"");
        QTest::newRow("minus word") << QStringLiteral("-") << QByteArray("'-");
        QTest::newRow("equals later is fine") << QStringLiteral("a=b") << QByteArray("a=b");
    }
    void formulaCellsAreNeutralised()
    {
        QFETCH(QString, cell);
        QFETCH(QByteArray, encoded);
        QCOMPARE(CsvWriter::encodeCell(cell), encoded);
    }

    // Money and counts stay numbers a spreadsheet sums: a negative refund is not a formula.
    void plainNumbersStayNumbers_data()
    {
        QTest::addColumn<QString>("cell");
        QTest::addColumn<bool>("plain");
        QTest::newRow("integer") << QStringLiteral("42") << true;
        QTest::newRow("negative yuan") << QStringLiteral("-12.30") << true;
        QTest::newRow("yuan") << QStringLiteral("99999999.99") << true;
        QTest::newRow("negative integer") << QStringLiteral("-7") << true;
        QTest::newRow("plus sign") << QStringLiteral("+12.30") << false;
        QTest::newRow("two dots") << QStringLiteral("-1.2.3") << false;
        QTest::newRow("trailing dot") << QStringLiteral("-12.") << false;
        QTest::newRow("minus only") << QStringLiteral("-") << false;
        QTest::newRow("exponent") << QStringLiteral("-1e5") << false;
        QTest::newRow("arithmetic") << QStringLiteral("-1+2") << false;
        QTest::newRow("fullwidth digits") << QStringLiteral("-１２") << false;
    }
    void plainNumbersStayNumbers()
    {
        QFETCH(QString, cell);
        QFETCH(bool, plain);
        QCOMPARE(CsvWriter::isPlainNumber(cell), plain);
        // Every row that is not a plain number starts with a sign here, and is neutralised.
        QCOMPARE(CsvWriter::encodeCell(cell) == cell.toUtf8(), plain);
    }

    void aWholeRow()
    {
        const QByteArray bytes = written({{QStringLiteral("-12.30"), QStringLiteral("=cmd"),
                                           QStringLiteral("a,\"b\""), QStringLiteral("多\n行")}});
        QCOMPARE(bytes, QByteArray("\xEF\xBB\xBF") +
                            QStringLiteral("-12.30,'=cmd,\"a,\"\"b\"\"\",\"多\n行\"\r\n").toUtf8());
    }

    void unwritablePathIsOneClearError()
    {
        try {
            CsvWriter csv(QStringLiteral("/nonexistent-dir/out.csv"));
            QFAIL("a file in a missing folder was opened");
        } catch (const std::runtime_error &error) {
            QVERIFY2(QString::fromUtf8(error.what())
                         .startsWith(QStringLiteral("cannot write /nonexistent-dir/out.csv: ")),
                     error.what());
        }
    }

    void notCommittedLeavesNoFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("partial.csv"));
        {
            CsvWriter csv(path);
            csv.writeRow({QStringLiteral("a")});
        }
        QVERIFY(!QFile::exists(path));
    }
};

PAYOPS_TEST_MAIN_CORE(TstCsvWriter)
#include "tst_csvwriter.moc"
