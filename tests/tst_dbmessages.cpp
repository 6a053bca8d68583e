// Database errors in sentences a person may read, from the error codes MariaDB gives: never the
// statement, the server's wording or its quoting, which go to the log file instead. The same
// sentences from a real server are tst_dberror's.
#include "db/dberror.h"
#include "log/logging.h"
#include "servertext.h"
#include "testmain.h"

#include <QFile>

using namespace payops;
using test::verifyNoServerText;

namespace {

db::Error serverError(int code, const QString &text,
                      const QString &statement = QStringLiteral("SELECT 1"))
{
    return db::Error::fromSql(
        statement, QSqlError(QString(), text, QSqlError::StatementError, QString::number(code)));
}

} // namespace

class TestDbMessages final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sentencesForServerErrors_data()
    {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("serverText");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("1142 MariaDB")
            << 1142
            << QStringLiteral("SELECT command denied to user 'fin'@'localhost' for table "
                              "`t_abc`.`payops_meta`")
            << QStringLiteral("the database refused: you may not read table payops_meta");
        QTest::newRow("1142 MySQL")
            << 1142
            << QStringLiteral("INSERT command denied to user 'fin'@'localhost' for table 'orders'")
            << QStringLiteral("the database refused: you may not change table orders");
        QTest::newRow("1143")
            << 1143
            << QStringLiteral(
                   "UPDATE command denied to user 'op'@'localhost' for column 'status' in "
                   "table 'orders'")
            << QStringLiteral(
                   "the database refused: you may not change column status of table orders");
        QTest::newRow("2013") << 2013 << QStringLiteral("Lost connection to server during query")
                              << QStringLiteral("lost the connection to the database");
        QTest::newRow("2006") << 2006 << QStringLiteral("MySQL server has gone away")
                              << QStringLiteral("lost the connection to the database");
        QTest::newRow("1317") << 1317 << QStringLiteral("Query execution was interrupted")
                              << QStringLiteral("the statement was interrupted");
        QTest::newRow("1205")
            << 1205 << QStringLiteral("Lock wait timeout exceeded; try restarting transaction")
            << QStringLiteral("lock wait timeout: another session holds the rows; try again");
        QTest::newRow("1213")
            << 1213
            << QStringLiteral("Deadlock found when trying to get lock; try restarting transaction")
            << QStringLiteral("a deadlock with another session undid the change; try again");
        QTest::newRow("1062 MariaDB")
            << 1062 << QStringLiteral("Duplicate entry '7-1' for key 'uk_order_tpl'")
            << QStringLiteral("that row already exists (duplicate key uk_order_tpl)");
        QTest::newRow("1062 MySQL")
            << 1062 << QStringLiteral("Duplicate entry '7-1' for key 'user_coupon.uk_order_tpl'")
            << QStringLiteral("that row already exists (duplicate key uk_order_tpl)");
        QTest::newRow("1146")
            << 1146 << QStringLiteral("Table 't_abc.callback_instance' doesn't exist")
            << QStringLiteral(
                   "table callback_instance is missing from the database (run payops migrate?)");
        QTest::newRow("1644") << 1644 << QStringLiteral("ops_audit_log is append-only")
                              << QStringLiteral(
                                     "the database refused: ops_audit_log is append-only");
        QTest::newRow("unknown") << 9999 << QStringLiteral("Something new in SELECT x FROM y")
                                 << QStringLiteral(
                                        "the database refused the operation (error 9999)");
    }
    void sentencesForServerErrors()
    {
        QFETCH(int, code);
        QFETCH(QString, serverText);
        QFETCH(QString, sentence);
        const db::Error error =
            serverError(code, serverText, QStringLiteral("SELECT id FROM orders WHERE x = ?"));
        QCOMPARE(error.serverCode(), code);
        QVERIFY(error.isFromServer());
        QVERIFY(error.message().contains(serverText)); // the log keeps everything
        QCOMPARE(db::userMessage(error), sentence);
        if (code != 1644) // a payops trigger's own words pass through
            verifyNoServerText(db::userMessage(error));
    }

    void ownSentencesAndContextStay()
    {
        QCOMPARE(db::userMessage(
                     db::Error(QStringLiteral("a reason is required to flip the callback switch"))),
                 QStringLiteral("a reason is required to flip the callback switch"));
        const db::Error lost =
            serverError(2013, QStringLiteral("Lost connection to server during query"))
                .within(QStringLiteral("migration 0004_audit_chain.sql failed"));
        QCOMPARE(db::userMessage(lost),
                 QStringLiteral(
                     "migration 0004_audit_chain.sql failed: lost the connection to the database"));
        QVERIFY(lost.isConnectionFailure());
        QCOMPARE(db::userMessage(std::runtime_error("cannot write /nope/audit.csv")),
                 QStringLiteral("cannot write /nope/audit.csv"));
        const std::exception &asException = lost;
        QCOMPARE(db::userMessage(asException), db::userMessage(lost));
    }

    void theStatementGoesToTheLogFile()
    {
        const QString path = logFilePath();
        QVERIFY(!path.isEmpty());
        db::userMessage(serverError(
            1142,
            QStringLiteral(
                "SELECT command denied to user 'x'@'localhost' for table 'audit_probe_7'"),
            QStringLiteral("SELECT secret_column FROM audit_probe_7")));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray log = file.readAll();
        QVERIFY2(log.contains("SELECT secret_column FROM audit_probe_7"),
                 log.right(500).constData());
        QVERIFY(log.contains("command denied"));
    }
};

PAYOPS_TEST_MAIN_CORE(TestDbMessages)
#include "tst_dbmessages.moc"
