// The sentences of the lower layers (db, domain, service) reach the user in the language the
// binaries speak: the same calls give English without a catalogue and Chinese once the embedded
// zh_CN catalogue is installed, exactly as the console and the command line install it.
#include "db/dberror.h"
#include "domain/statement/statementreader.h"
#include "log/translation.h"
#include "service/serviceoptions.h"

#include "testmain.h"

#include <QBuffer>
#include <QSqlError>

using namespace payops;

namespace {

// What the server says when an operator account tries to change a table it may only read.
QString refusedUpdate()
{
    const QSqlError refusal(
        QStringLiteral("QMYSQL: Unable to execute query"),
        QStringLiteral(
            "UPDATE command denied to user 'ops'@'localhost' for table `payops`.`orders`"),
        QSqlError::StatementError, QStringLiteral("1142"));
    return db::userMessage(
        db::Error::fromSql(QStringLiteral("UPDATE orders SET status = 'PAID'"), refusal));
}

// The one error of a generic statement whose only line has no status.
QString lineWithoutStatus()
{
    QByteArray csv("pay_no,order_id,amount_fen,status,paid_at\n"
                   "P-1,1001,9900,,2026-12-01T02:00:00Z\n");
    QBuffer file(&csv);
    file.open(QIODevice::ReadOnly);
    StatementReader reader(file, StatementFormat::Auto);
    StatementLine line;
    QList<StatementLineError> errors;
    while (reader.next(line, errors)) {
    }
    return errors.size() == 1 && errors.first().lineNo == 2 ? errors.first().message : QString();
}

// The whole-file refusal of an empty statement.
QString emptyStatement()
{
    QByteArray nothing;
    QBuffer file(&nothing);
    file.open(QIODevice::ReadOnly);
    try {
        StatementReader reader(file, StatementFormat::Auto);
    } catch (const StatementError &error) {
        return QString::fromStdString(error.what());
    }
    return QString();
}

QString callbackdHelp()
{
    return parseServiceCommandLine({QStringLiteral("payops-callbackd"), QStringLiteral("--help")},
                                   QProcessEnvironment())
        .helpText;
}

} // namespace

class TestLowerMessages : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { installTranslations(QStringLiteral("en")); }

    void englishWithoutCatalogue()
    {
        QCOMPARE(installTranslations(QStringLiteral("en")), QStringLiteral("en"));
        QCOMPARE(refusedUpdate(),
                 QStringLiteral("the database refused: you may not change table orders"));
        QCOMPARE(lineWithoutStatus(), QStringLiteral("has no status"));
        QCOMPARE(emptyStatement(), QStringLiteral("the file is empty: it holds no statement"));
        QVERIFY(callbackdHelp().contains(
            QStringLiteral("The payment-callback endpoint payops operates.")));
    }

    void chineseWithTheEmbeddedCatalogue()
    {
        QCOMPARE(installTranslations(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        QCOMPARE(refusedUpdate(), QStringLiteral("数据库拒绝：你无权修改表 orders"));
        QCOMPARE(lineWithoutStatus(), QStringLiteral("缺少 status"));
        QCOMPARE(emptyStatement(), QStringLiteral("文件为空：没有对账单内容"));
        const QString help = callbackdHelp();
        QVERIFY2(help.contains(QStringLiteral("payops 运维的支付回调接口。")), qPrintable(help));
        // A limit's description comes from a table of plain strings, translated where --help is
        // built.
        QVERIFY2(help.contains(QStringLiteral("连接在没有回调时可保持的秒数；其他请求不计入。")),
                 qPrintable(help));
        // Option names and the wire words stay as they are typed.
        QVERIFY(help.contains(QStringLiteral("--keep-alive-idle")));
    }

    void backToEnglish()
    {
        QCOMPARE(installTranslations(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        QCOMPARE(installTranslations(QStringLiteral("en")), QStringLiteral("en"));
        QCOMPARE(lineWithoutStatus(), QStringLiteral("has no status"));
    }
};

PAYOPS_TEST_MAIN_CORE(TestLowerMessages)
#include "tst_lowermessages.moc"
