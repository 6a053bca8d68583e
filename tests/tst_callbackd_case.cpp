#include "callbackfixture.h"
#include "db/connection.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace payops;

namespace {

QString outcomeOf(const test::HttpResult &result)
{
    return QJsonDocument::fromJson(result.body)
        .object()
        .value(QStringLiteral("outcome"))
        .toString();
}

} // namespace

// trade_status is compared exactly, by the service and the database alike. A notice whose
// status is SUCCESS in another case, or with a trailing space, is recorded without touching
// the order; the SUCCESS that follows it is processed once, not refused with 503 for ever.
class TestCallbackdCase final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("case"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("current"), 4);
        m_service = std::make_unique<test::CallbackdProcess>(m_db->dsn());
    }

    void cleanupTestCase() { QCOMPARE(m_service->terminate(), 0); }

    void successAfterANoticeInAnotherCase_data()
    {
        QTest::addColumn<QByteArray>("payNo");
        QTest::addColumn<qint64>("orderId");
        QTest::addColumn<QString>("notice");
        QTest::newRow("lower case")
            << QByteArray("P-CASE-LOWER") << qint64(1001) << QStringLiteral("success");
        QTest::newRow("mixed case")
            << QByteArray("P-CASE-MIXED") << qint64(1002) << QStringLiteral("Success");
        QTest::newRow("trailing space")
            << QByteArray("P-CASE-SPACE") << qint64(1003) << QStringLiteral("SUCCESS ");
    }

    void successAfterANoticeInAnotherCase()
    {
        QFETCH(QByteArray, payNo);
        QFETCH(qint64, orderId);
        QFETCH(QString, notice);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const auto orderStatus = [&] {
            return db::scalar(db, QStringLiteral("SELECT status FROM orders WHERE id = ?"),
                              {orderId})
                .toString();
        };
        const auto logStatus = [&] {
            return db::scalar(
                       db, QStringLiteral("SELECT status FROM pay_callback_log WHERE pay_no = ?"),
                       {payNo})
                .toString();
        };

        const test::HttpResult first = test::postCallback(
            m_service->port(),
            test::callbackBody(payNo, orderId, 9900, QStringLiteral("CNY"), notice));
        QCOMPARE(first.status, 200);
        QCOMPARE(outcomeOf(first), QStringLiteral("ignored"));
        QCOMPARE(orderStatus(), QStringLiteral("PENDING"));
        QCOMPARE(logStatus(), QStringLiteral("IGNORED"));

        const QByteArray success = test::callbackBody(payNo, orderId, 9900);
        const test::HttpResult second = test::postCallback(m_service->port(), success);
        QCOMPARE(second.status, 200);
        QCOMPARE(outcomeOf(second), QStringLiteral("processed"));
        QCOMPARE(orderStatus(), QStringLiteral("PAID"));
        QCOMPARE(logStatus(), QStringLiteral("PROCESSED"));
        const test::SideEffects effects = test::sideEffectsOf(db, orderId);
        QCOMPARE(effects.coupons, 2);
        QCOMPARE(effects.couponTemplatesTwice, 0);
        QCOMPARE(effects.points, 1);

        const QString before = test::businessFingerprint(m_db->dsn());
        const test::HttpResult third = test::postCallback(m_service->port(), success);
        QCOMPARE(third.status, 200);
        QCOMPARE(third.body, second.body);
        QCOMPARE(test::businessFingerprint(m_db->dsn()), before);
    }

    // What the service compares exactly, ad-hoc SQL (reports, the console) compares exactly too.
    void theColumnsAreBinary()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QSqlQuery columns = db::exec(
            db,
            QStringLiteral(
                "SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME), COLLATION_NAME FROM "
                "information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = DATABASE() AND ((COLUMN_NAME IN ('trade_status', 'channel') "
                "AND TABLE_NAME IN ('pay_callback_log', 'platform_statement')) "
                "OR (COLUMN_NAME = 'status' AND TABLE_NAME = 'platform_statement_line'))"));
        int seen = 0;
        while (columns.next()) {
            ++seen;
            QVERIFY2(columns.value(1).toString() == QLatin1String("utf8mb4_bin"),
                     qPrintable(columns.value(0).toString()));
        }
        QCOMPARE(seen, 4);
        QCOMPARE(db::scalar(
                     db, QStringLiteral(
                             "SELECT COUNT(*) FROM pay_callback_log WHERE trade_status = 'success' "
                             "OR channel = 'WeChat'"))
                     .toInt(),
                 0);
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
    std::unique_ptr<test::CallbackdProcess> m_service;
};

PAYOPS_TEST_MAIN_CORE(TestCallbackdCase)
#include "tst_callbackd_case.moc"
