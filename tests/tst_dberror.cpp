#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "log/logging.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QFile>

using namespace payops;

namespace {

db::Error serverError(int code, const QString &text, const QString &statement = QStringLiteral("SELECT 1"))
{
    return db::Error::fromSql(statement, QSqlError(QString(), text, QSqlError::StatementError, QString::number(code)));
}

// What a person must never read: the statement, the server's wording, its quoting.
void verifyNoServerText(const QString &sentence)
{
    for (const char *word : {"SELECT", "INSERT", "UPDATE", "DELETE", "command denied", "Table '", "doesn't exist",
                             "Duplicate entry", "`", "@'"})
        QVERIFY2(!sentence.contains(QLatin1String(word)), qPrintable(sentence));
}

} // namespace

class TestDbError final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sentencesForServerErrors_data()
    {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("serverText");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("1142 MariaDB") << 1142
                                      << QStringLiteral("SELECT command denied to user 'fin'@'localhost' for table "
                                                        "`t_abc`.`payops_meta`")
                                      << QStringLiteral("the database refused: you may not read table payops_meta");
        QTest::newRow("1142 MySQL") << 1142
                                    << QStringLiteral("INSERT command denied to user 'fin'@'localhost' for table 'orders'")
                                    << QStringLiteral("the database refused: you may not change table orders");
        QTest::newRow("1143") << 1143
                              << QStringLiteral("UPDATE command denied to user 'op'@'localhost' for column 'status' in "
                                                "table 'orders'")
                              << QStringLiteral("the database refused: you may not change column status of table orders");
        QTest::newRow("2013") << 2013 << QStringLiteral("Lost connection to server during query")
                              << QStringLiteral("lost the connection to the database");
        QTest::newRow("2006") << 2006 << QStringLiteral("MySQL server has gone away")
                              << QStringLiteral("lost the connection to the database");
        QTest::newRow("1317") << 1317 << QStringLiteral("Query execution was interrupted")
                              << QStringLiteral("the statement was interrupted");
        QTest::newRow("1205") << 1205 << QStringLiteral("Lock wait timeout exceeded; try restarting transaction")
                              << QStringLiteral("lock wait timeout: another session holds the rows; try again");
        QTest::newRow("1213") << 1213
                              << QStringLiteral("Deadlock found when trying to get lock; try restarting transaction")
                              << QStringLiteral("a deadlock with another session undid the change; try again");
        QTest::newRow("1062 MariaDB") << 1062 << QStringLiteral("Duplicate entry '7-1' for key 'uk_order_tpl'")
                                      << QStringLiteral("that row already exists (duplicate key uk_order_tpl)");
        QTest::newRow("1062 MySQL") << 1062
                                    << QStringLiteral("Duplicate entry '7-1' for key 'user_coupon.uk_order_tpl'")
                                    << QStringLiteral("that row already exists (duplicate key uk_order_tpl)");
        QTest::newRow("1146") << 1146 << QStringLiteral("Table 't_abc.callback_instance' doesn't exist")
                              << QStringLiteral("table callback_instance is missing from the database (run payops migrate?)");
        QTest::newRow("1644") << 1644 << QStringLiteral("ops_audit_log is append-only")
                              << QStringLiteral("the database refused: ops_audit_log is append-only");
        QTest::newRow("unknown") << 9999 << QStringLiteral("Something new in SELECT x FROM y")
                                 << QStringLiteral("the database refused the operation (error 9999)");
    }
    void sentencesForServerErrors()
    {
        QFETCH(int, code);
        QFETCH(QString, serverText);
        QFETCH(QString, sentence);
        const db::Error error = serverError(code, serverText, QStringLiteral("SELECT id FROM orders WHERE x = ?"));
        QCOMPARE(error.serverCode(), code);
        QVERIFY(error.isFromServer());
        QVERIFY(error.message().contains(serverText)); // the log keeps everything
        QCOMPARE(db::userMessage(error), sentence);
        if (code != 1644) // a payops trigger's own words pass through
            verifyNoServerText(db::userMessage(error));
    }

    void ownSentencesAndContextStay()
    {
        QCOMPARE(db::userMessage(db::Error(QStringLiteral("a reason is required to flip the callback switch"))),
                 QStringLiteral("a reason is required to flip the callback switch"));
        const db::Error lost = serverError(2013, QStringLiteral("Lost connection to server during query"))
                                   .within(QStringLiteral("migration 0004_audit_chain.sql failed"));
        QCOMPARE(db::userMessage(lost),
                 QStringLiteral("migration 0004_audit_chain.sql failed: lost the connection to the database"));
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
        db::userMessage(serverError(1142,
                                    QStringLiteral("SELECT command denied to user 'x'@'localhost' for table 'audit_probe_7'"),
                                    QStringLiteral("SELECT secret_column FROM audit_probe_7")));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray log = file.readAll();
        QVERIFY2(log.contains("SELECT secret_column FROM audit_probe_7"), log.right(500).constData());
        QVERIFY(log.contains("command denied"));
    }

    // The same sentences from a real server: its wording is what the parsing has to hold to.
    void sentencesFromTheServer()
    {
        test::ScratchDatabase scratch(QStringLiteral("dberr"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 2);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::Connection asFinance(finance.dsnFor(scratch.name()), QStringLiteral("t"));
        db::Connection root(scratch.dsn(), QStringLiteral("t"));
        const auto refusal = [](const db::Connection &connection, const QString &sql) {
            try {
                db::execDirect(connection.database(), sql);
            } catch (const db::Error &error) {
                return db::userMessage(error);
            }
            return QStringLiteral("<no error>");
        };
        QCOMPARE(refusal(asFinance, QStringLiteral("UPDATE orders SET status = 'PAID' WHERE id = 1001")),
                 QStringLiteral("the database refused: you may not change table orders"));
        QCOMPARE(refusal(root, QStringLiteral("SELECT * FROM no_such_table")),
                 QStringLiteral("table no_such_table is missing from the database (run payops migrate?)"));
        try {
            db::execDirect(root.database(), QStringLiteral("INSERT INTO orders SELECT * FROM orders WHERE id = 1001"));
            QFAIL("a second order 1001 was accepted");
        } catch (const db::Error &error) {
            QVERIFY(error.isDuplicateKey());
            QVERIFY2(db::userMessage(error).startsWith(QStringLiteral("that row already exists")),
                     qPrintable(db::userMessage(error)));
            verifyNoServerText(db::userMessage(error));
        }
    }
};

PAYOPS_TEST_MAIN_CORE(TestDbError)
#include "tst_dberror.moc"
