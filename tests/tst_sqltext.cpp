#include "db/connection.h"
#include "db/sqltext.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QTest>

using namespace payops;

// db::exec writes its binds into the statement's text (one round trip) instead of preparing it
// (two). What the server stores must be what Qt's own prepared statement stores: each value is
// written both ways into a table of typed columns and the rows are compared on the server.
class TestSqlText final : public QObject
{
    Q_OBJECT

    static QVariantList values()
    {
        QDateTime at(QDate(2026, 12, 6), QTime(15, 4, 5, 678), Qt::UTC);
        return {
            42,
            qint64(-9007199254740993),
            quint64(18446744073709551615ULL),
            true,
            false,
            0.1,
            -1234.5e-7,
            QStringLiteral("plain"),
            QStringLiteral("it's \\ \"quoted\" ? -- # /* */ ; DROP TABLE x; --"),
            QStringLiteral("支付成功 😀"),
            QString(),
            QStringLiteral(""),
            QByteArray("\xb0\xa1\x00\xff'\\\"x", 9),
            QByteArray(""),
            QByteArray(),
            at,
            at.date(),
            at.time(),
            QDateTime(),
            QVariant(),
            QVariant(QMetaType(QMetaType::Int)),
            QVariant(QMetaType(QMetaType::QString)),
        };
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_scratch.emplace(QStringLiteral("sqltext"));
        m_connection.emplace(m_scratch->dsn(), QStringLiteral("t"));
    }

    void aBindInTheTextStoresWhatAPreparedBindStores()
    {
        const QSqlDatabase db = m_connection->database();
        db::execDirect(db, QStringLiteral("CREATE TABLE v (way CHAR(8), n INT, i BIGINT, "
                                          "u BIGINT UNSIGNED, d DOUBLE, t TEXT, b BLOB, "
                                          "at DATETIME(3), day DATE, tm TIME(3))"));
        const QStringList columns{
            QStringLiteral("i"),   QStringLiteral("i"),  QStringLiteral("u"),  QStringLiteral("n"),
            QStringLiteral("n"),   QStringLiteral("d"),  QStringLiteral("d"),  QStringLiteral("t"),
            QStringLiteral("t"),   QStringLiteral("t"),  QStringLiteral("t"),  QStringLiteral("t"),
            QStringLiteral("b"),   QStringLiteral("b"),  QStringLiteral("b"),  QStringLiteral("at"),
            QStringLiteral("day"), QStringLiteral("tm"), QStringLiteral("at"), QStringLiteral("t"),
            QStringLiteral("n"),   QStringLiteral("t")};
        const QVariantList all = values();
        QCOMPARE(columns.size(), all.size());
        for (qsizetype k = 0; k < all.size(); ++k) {
            const QString sql =
                QStringLiteral("INSERT INTO v (way, %1) VALUES (?, ?)").arg(columns.at(k));
            QVERIFY(db::withBindsInline(db, sql, {QStringLiteral("text"), all.at(k)}));
            db::exec(db, sql, {QStringLiteral("text"), all.at(k)});
            // Qt's prepared statement, the reference.
            QSqlQuery prepared(db);
            QVERIFY(prepared.prepare(sql));
            prepared.addBindValue(QStringLiteral("prepared"));
            prepared.addBindValue(all.at(k).typeId() == QMetaType::QString &&
                                          all.at(k).toString().isNull()
                                      ? QVariant(QStringLiteral(""))
                                      : all.at(k));
            QVERIFY2(prepared.exec(), qPrintable(prepared.lastError().text()));
            // The two rows, column by column, compared by the server (NULL-safe).
            QSqlQuery same =
                db::exec(db, QStringLiteral("SELECT COUNT(*) = 2, MIN(a.%1 <=> p.%1), HEX(a.%1), "
                                            "HEX(p.%1) FROM v a JOIN v p ON a.way = 'text' AND "
                                            "p.way = 'prepared'")
                                 .arg(columns.at(k)));
            QVERIFY(same.next());
            QVERIFY2(same.value(1).toInt() == 1,
                     qPrintable(QStringLiteral("value %1 (%2): text %3, prepared %4")
                                    .arg(k)
                                    .arg(QString::fromLatin1(all.at(k).typeName()),
                                         same.value(2).toString(), same.value(3).toString())));
            db::execDirect(db, QStringLiteral("DELETE FROM v"));
        }
        QVERIFY(db.tables().contains(QStringLiteral("v"))); // the quoted DROP stayed text
    }

    void onlyPlaceholdersOutsideQuotesAndCommentsTakeBinds()
    {
        const QSqlDatabase db = m_connection->database();
        QSqlQuery query = db::exec(db,
                                   QStringLiteral("SELECT '?''?\\'?', \"?\", ? /* ? */, ?, "
                                                  "`?` FROM (SELECT 1 AS `?`) t # ?\n"),
                                   {7, QStringLiteral("x")});
        QVERIFY(query.next());
        QCOMPARE(query.value(0).toString(), QStringLiteral("?'?'?"));
        QCOMPARE(query.value(1).toString(), QStringLiteral("?"));
        QCOMPARE(query.value(2).toInt(), 7);
        QCOMPARE(query.value(3).toString(), QStringLiteral("x"));
        QCOMPARE(query.value(4).toInt(), 1);
        const QString inlined = *db::withBindsInline(db, QStringLiteral("SELECT ? -- ?\n, ?"),
                                                     {1, QStringLiteral("a'b")});
        QCOMPARE(inlined, QStringLiteral("SELECT 1 -- ?\n, 'a\\'b'"));
    }

    // A statement whose placeholders and binds do not pair up, or a bind with no literal
    // form, is prepared as before: the same error, the same value.
    void whatTheTextCannotTakeIsPrepared()
    {
        const QSqlDatabase db = m_connection->database();
        QVERIFY(!db::withBindsInline(db, QStringLiteral("SELECT ?, ?"), {1}));
        QVERIFY(!db::withBindsInline(db, QStringLiteral("SELECT ?"), {QVariant(QStringList())}));
        QVERIFY(!db::withBindsInline(db, QStringLiteral("SELECT ?"), {qQNaN()}));
        db::execDirect(db, QStringLiteral("CREATE TABLE prepared (d DOUBLE)"));
        db::exec(db, QStringLiteral("INSERT INTO prepared VALUES (?)"), {QVariant(float(1.5))});
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT d FROM prepared")).toDouble(), 1.5);
        QVERIFY_THROWS_EXCEPTION(db::Error, db::exec(db, QStringLiteral("SELECT ?, ?"), {1}));
    }

    // Several statements in one round trip: each result in order; the first that fails is
    // thrown, and none after it ran.
    void statementsTogetherStopAtTheFirstFailure()
    {
        const QSqlDatabase db = m_connection->database();
        db::execDirect(db, QStringLiteral("CREATE TABLE together (n INT PRIMARY KEY)"));
        QList<int> seen;
        db::execTogether(db,
                         {QStringLiteral("INSERT INTO together VALUES (1), (2)"),
                          QStringLiteral("SELECT n FROM together ORDER BY n"),
                          QStringLiteral("SELECT COUNT(*) * 10 FROM together")},
                         [&](qsizetype statement, QSqlQuery &query) {
                             if (statement == 0)
                                 QCOMPARE(query.numRowsAffected(), 2);
                             while (query.next())
                                 seen << query.value(0).toInt();
                         });
        QCOMPARE(seen, (QList<int>{1, 2, 20}));
        try {
            db::execTogether(db, {QStringLiteral("INSERT INTO together VALUES (3)"),
                                  QStringLiteral("INSERT INTO together VALUES (1)"),
                                  QStringLiteral("INSERT INTO together VALUES (4)")});
            QFAIL("a duplicate key was accepted");
        } catch (const db::Error &error) {
            QVERIFY(error.isDuplicateKey());
            QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("VALUES (1)")),
                     error.what());
        }
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT GROUP_CONCAT(n ORDER BY n) FROM together"))
                     .toString(),
                 QStringLiteral("1,2,3"));
        // The connection is in step again.
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT ?"), {5}).toInt(), 5);
    }

    // A transaction's last statement with its binds and the COMMIT: what it wrote is
    // committed; when it fails, nothing is, and the transaction is still there to roll back.
    void aLastStatementGoesWithTheCommit()
    {
        const QSqlDatabase db = m_connection->database();
        db::execDirect(db, QStringLiteral("CREATE TABLE last (n INT PRIMARY KEY, t TEXT)"));
        {
            db::Transaction transaction(db);
            db::exec(db, QStringLiteral("INSERT INTO last VALUES (1, 'first')"));
            transaction.commitWith(QStringLiteral("INSERT INTO last VALUES (?, ?)"),
                                   {2, QStringLiteral("it's")});
        }
        db::Connection other(m_scratch->dsn(), QStringLiteral("other"));
        QCOMPARE(db::scalar(other.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(t ORDER BY n) FROM last"))
                     .toString(),
                 QStringLiteral("first,it's"));
        {
            db::Transaction transaction(db);
            db::exec(db, QStringLiteral("INSERT INTO last VALUES (3, 'third')"));
            QVERIFY_THROWS_EXCEPTION(
                db::Error, transaction.commitWith(QStringLiteral("INSERT INTO last VALUES (?, ?)"),
                                                  {1, QStringLiteral("again")}));
            // Still open: this connection sees its own row, another does not.
            QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM last")).toInt(), 3);
            QCOMPARE(
                db::scalar(other.database(), QStringLiteral("SELECT COUNT(*) FROM last")).toInt(),
                2);
        }
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM last")).toInt(), 2);
    }

private:
    std::optional<test::ScratchDatabase> m_scratch;
    std::optional<db::Connection> m_connection;
};

PAYOPS_TEST_MAIN_CORE(TestSqlText)
#include "tst_sqltext.moc"
