#include "db/sqlscript.h"
#include "testmain.h"

using payops::db::splitSqlScript;

class TestSqlScript final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void splitsAtSemicolons()
    {
        const QStringList parts =
            splitSqlScript(QStringLiteral("CREATE TABLE a (x INT);\nINSERT INTO a VALUES (1);\n"));
        QCOMPARE(parts, QStringList({QStringLiteral("CREATE TABLE a (x INT)"),
                                     QStringLiteral("INSERT INTO a VALUES (1)")}));
    }

    void keepsDelimitersInsideQuotesAndComments()
    {
        const QString script =
            QStringLiteral("-- a comment; with a semicolon\n"
                           "INSERT INTO t VALUES ('a;b', \"c;d\", `e;f`); /* x; y */\n"
                           "INSERT INTO t VALUES ('it\\'s;');\n");
        const QStringList parts = splitSqlScript(script);
        QCOMPARE(parts.size(), 2);
        QVERIFY(parts.at(0).endsWith(QStringLiteral("`e;f`)")));
        QCOMPARE(parts.at(1), QStringLiteral("/* x; y */\nINSERT INTO t VALUES ('it\\'s;')"));
    }

    void honoursDelimiterLines()
    {
        const QString script = QStringLiteral("DELIMITER $$\n"
                                              "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW "
                                              "BEGIN SET NEW.a = 1; SET NEW.b = 2; END$$\n"
                                              "DELIMITER ;\n"
                                              "SELECT 1;\n");
        const QStringList parts = splitSqlScript(script);
        QCOMPARE(parts.size(), 2);
        QVERIFY(parts.at(0).contains(QStringLiteral("SET NEW.a = 1; SET NEW.b = 2; END")));
        QCOMPARE(parts.at(1), QStringLiteral("SELECT 1"));
    }

    void dropsCommentOnlyStatements()
    {
        QCOMPARE(splitSqlScript(QStringLiteral("-- only a comment\n;\n  \n")), QStringList());
    }
};

PAYOPS_TEST_MAIN_CORE(TestSqlScript)
#include "tst_sqlscript.moc"
