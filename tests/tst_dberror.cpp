#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "scratchdatabase.h"
#include "servertext.h"
#include "testmain.h"

using namespace payops;
using test::verifyNoServerText;

class TestDbError final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
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
        QCOMPARE(
            refusal(asFinance, QStringLiteral("UPDATE orders SET status = 'PAID' WHERE id = 1001")),
            QStringLiteral("the database refused: you may not change table orders"));
        QCOMPARE(refusal(root, QStringLiteral("SELECT * FROM no_such_table")),
                 QStringLiteral(
                     "table no_such_table is missing from the database (run payops migrate?)"));
        try {
            db::execDirect(
                root.database(),
                QStringLiteral("INSERT INTO orders SELECT * FROM orders WHERE id = 1001"));
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
