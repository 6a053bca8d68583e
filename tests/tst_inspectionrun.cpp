#include "callbackfixture.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "domain/inspection/inspectionrun.h"
#include "domain/money/duplicates/doublepayments.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

using namespace payops;

namespace {

test::CliRun inspect(const Dsn &dsn, bool json = true)
{
    QStringList arguments{QStringLiteral("inspect"), QStringLiteral("--db"), dsn.toString(true)};
    if (json)
        arguments << QStringLiteral("--json");
    return test::runCli(arguments);
}

QJsonObject parsed(const QString &text)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("not JSON: %s", qPrintable(text));
    return document.object();
}

QList<InspectionRun> runsOf(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("runs"));
    return loadInspectionRuns(connection.database(), 0, 100);
}

} // namespace

class TestInspectionRun final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Two runs, two rows: each keeps what it printed, who ran it and whether it was clean; the
    // second, after a duplicate incident, holds the new finding.
    void historyAfterTwoRuns()
    {
        test::ScratchDatabase scratch(QStringLiteral("inspecthistory"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        const test::CliRun first = inspect(scratch.dsn());
        QVERIFY2(first.exitCode == 0, qPrintable(first.out + first.err));
        QVERIFY2(!first.err.contains(QStringLiteral("not stored")), qPrintable(first.err));

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 2);
        const test::CliRun second = inspect(scratch.dsn());
        QVERIFY2(second.exitCode == 1, qPrintable(second.out + second.err));

        const QList<InspectionRun> runs = runsOf(scratch.dsn());
        QCOMPARE(runs.size(), 2);
        const InspectionRun &newer = runs.at(0);
        const InspectionRun &older = runs.at(1);
        QVERIFY(newer.id > older.id);
        QVERIFY(older.clean);
        QVERIFY(!newer.clean);
        QCOMPARE(older.source, QStringLiteral("cli"));
        QCOMPARE(newer.source, QStringLiteral("cli"));
        const QString user = db::scalar(db, QStringLiteral("SELECT CURRENT_USER()")).toString();
        QCOMPARE(newer.runBy, user);
        QVERIFY(older.startedAt.isValid() && older.finishedAt >= older.startedAt);
        QVERIFY(newer.startedAt >= older.startedAt);
        // The stored findings are what the run printed.
        QCOMPARE(parsed(older.findingsJson), parsed(first.out));
        QCOMPARE(parsed(newer.findingsJson), parsed(second.out));
        // Two orders, each with two coupon templates and one point type issued twice.
        QCOMPARE(older.duplicateGroups, qint64(0));
        QCOMPARE(newer.duplicateGroups, qint64(6));
        QCOMPARE(newer.duplicateExtraCopies, qint64(6));
        QCOMPARE(parsed(newer.findingsJson)
                     .value(QStringLiteral("duplicates"))
                     .toObject()
                     .value(QStringLiteral("sample_orders"))
                     .toArray(),
                 (QJsonArray{1001, 1002}));
        QCOMPARE(db::scalar(db, QStringLiteral("SELECT clean FROM inspection_run WHERE id = ?"),
                            {newer.id})
                     .toInt(),
                 0);
        QCOMPARE(previousInspectionRun(db, newer.id)->id, older.id);
        QVERIFY(!previousInspectionRun(db, older.id));
    }

    // The customer paid twice: a second pay_no for a paid order is refused order_already_paid
    // by the real endpoint, and inspect reports the refund owed; a replay of the first payment
    // is not a second payment.
    void aSecondPaymentIsARefundOwed()
    {
        test::ScratchDatabase scratch(QStringLiteral("inspecttwice"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 3);
        {
            test::CallbackdProcess safe(scratch.dsn());
            QCOMPARE(test::postCallback(safe.port(), test::callbackBody("WX-A", 1001, 9900)).status,
                     200);
            QCOMPARE(test::postCallback(safe.port(), test::callbackBody("WX-A", 1001, 9900)).status,
                     200); // replay
            QCOMPARE(
                test::postCallback(safe.port(), test::callbackBody("ALI-B", 1001, 9900)).status,
                200);
            QCOMPARE(test::postCallback(safe.port(), test::callbackBody("WX-C", 1002, 9900)).status,
                     200);
        }
        const test::CliRun run = inspect(scratch.dsn());
        QVERIFY2(run.exitCode == 1, qPrintable(run.out + run.err));
        const QJsonObject twice =
            parsed(run.out).value(QStringLiteral("double_payments")).toObject();
        QCOMPARE(twice.value(QStringLiteral("orders")).toInteger(), qint64(1));
        QCOMPARE(twice.value(QStringLiteral("callbacks")).toInteger(), qint64(1));
        QCOMPARE(twice.value(QStringLiteral("refund_owed_fen")).toInteger(), qint64(9900));
        QCOMPARE(twice.value(QStringLiteral("sample_orders")).toArray(), QJsonArray{1001});
        QCOMPARE(parsed(run.out).value(QStringLiteral("clean")).toBool(), false);

        const test::CliRun text = inspect(scratch.dsn(), false);
        QCOMPARE(text.exitCode, 1);
        QVERIFY2(text.out.contains(QStringLiteral(
                     "paid twice: 1 order(s) paid twice by the customer (1 refused payment(s), "
                     "99.00 yuan to refund), e.g. orders 1001")),
                 qPrintable(text.out));
        QCOMPARE(runsOf(scratch.dsn()).first().refundOwedFen, qint64(9900));
    }

    // On the demo sandbox's seeded second payments, against SQL that reads the callbacks
    // without the index, and against the seed's own rule; the count reads the REJECTED range.
    void doublePaymentsOnTheDemoData()
    {
        const auto demo = test::demoDatabase();
        db::Connection connection(demo->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        const DoublePayments counted = countDoublePayments(db);

        QSqlQuery plain = db::exec(
            db, QStringLiteral(
                    "SELECT COUNT(*), COUNT(DISTINCT c.order_id), COALESCE(SUM(c.amount_fen), 0) "
                    "FROM pay_callback_log c IGNORE INDEX (idx_callback_status), orders o "
                    "WHERE o.id = c.order_id AND c.reason = 'order_already_paid' AND c.status = "
                    "'REJECTED' "
                    "AND c.trade_status = 'SUCCESS' AND CAST(c.pay_no AS BINARY) <> "
                    "CAST(COALESCE(o.pay_no, '') AS BINARY)"));
        QVERIFY(plain.next());
        QVERIFY(counted.callbacks > 10);
        QCOMPARE(counted.callbacks, plain.value(0).toLongLong());
        QCOMPARE(counted.orders, plain.value(1).toLongLong());
        QCOMPARE(counted.refundOwedFen, plain.value(2).toLongLong());
        // The seed pays every 97th paid order a second time through another channel.
        QCOMPARE(
            counted.orders,
            db::scalar(db,
                       QStringLiteral(
                           "SELECT COUNT(*) FROM orders WHERE status = 'PAID' AND MOD(id, 97) = 5"))
                .toLongLong());
        QCOMPARE(counted.sampleOrderIds.size(), qsizetype(10));
        QVERIFY(std::is_sorted(counted.sampleOrderIds.cbegin(), counted.sampleOrderIds.cend()));

        // What the cost argument rests on: the refused callbacks' own range of the status index.
        QSqlQuery plan = db::exec(
            db, QStringLiteral("EXPLAIN SELECT COUNT(*) FROM pay_callback_log c FORCE INDEX "
                               "(idx_callback_status) JOIN orders o ON o.id = c.order_id "
                               "WHERE c.status = 'REJECTED' AND c.reason = 'order_already_paid' "
                               "AND c.trade_status = 'SUCCESS' "
                               "AND NOT (o.pay_no <=> c.pay_no)"));
        bool usesStatusRange = false;
        while (plan.next())
            usesStatusRange |=
                plan.value(QStringLiteral("table")).toString() == QLatin1String("c") &&
                plan.value(QStringLiteral("key")).toString() ==
                    QLatin1String("idx_callback_status");
        QVERIFY(usesStatusRange);
    }

    // A gateway's rows without a final answer are a backlog of their own, for drain --upstream:
    // never counted as payments waiting for payops drain.
    void aGatewaysRowsAreABacklogOfTheirOwn()
    {
        test::ScratchDatabase scratch(QStringLiteral("inspectgateway"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("setup"));
            db::execDirect(
                connection.database(),
                QStringLiteral(
                    "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, status, gateway) "
                    "VALUES ('P-PAY', 1, '{}', 'RECORDED', 0), ('G-HELD', 2, '{}', 'RECORDED', 1), "
                    "('G-FAILED', 3, '{}', 'FORWARDING', 1), ('G-DONE', 4, '{}', 'FORWARDED', 1)"));
        }
        const QJsonObject json = parsed(inspect(scratch.dsn()).out);
        QCOMPARE(json.value(QStringLiteral("backlog")).toInteger(), 1);
        QCOMPARE(json.value(QStringLiteral("gateway_backlog")).toInteger(), 2);
        const test::CliRun text = inspect(scratch.dsn(), false);
        QVERIFY2(text.out.contains(QLatin1String("backlog: 1 recorded callback(s)")),
                 qPrintable(text.out));
        QVERIFY2(text.out.contains(QLatin1String("gateway backlog: 2 callback(s)")) &&
                     text.out.contains(QLatin1String("payops drain --upstream URL")),
                 qPrintable(text.out));
    }

    // Every field monitoring reads stays, and double_payments joins them.
    void theJsonKeepsItsFieldsAndAddsDoublePayments()
    {
        test::ScratchDatabase scratch(QStringLiteral("inspectjson"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        const QJsonObject json = parsed(inspect(scratch.dsn()).out);
        for (const char *key :
             {"backlog", "gateway_backlog", "duplicates", "switch", "unmatched",
              "unmatched_with_order", "unmatched_with_order_fen", "double_payments"})
            QVERIFY2(json.contains(QLatin1String(key)), key);
        const QJsonObject duplicates = json.value(QStringLiteral("duplicates")).toObject();
        for (const char *key :
             {"as_of", "compensated_copies", "coupon_extra_copies", "coupon_fen", "coupon_groups",
              "extra_copies", "groups", "money_at_risk_fen", "orders", "point_extra_copies",
              "point_fen", "point_groups", "points_per_yuan", "sample_orders"})
            QVERIFY2(duplicates.contains(QLatin1String(key)), key);
        const QJsonObject twice = json.value(QStringLiteral("double_payments")).toObject();
        for (const char *key : {"orders", "callbacks", "refund_owed_fen"}) {
            QVERIFY2(twice.value(QLatin1String(key)).isDouble(), key);
            QCOMPARE(twice.value(QLatin1String(key)).toInteger(), qint64(0));
        }
    }

    // An account that may read but not record inspections still gets its result and its exit
    // code, with a warning that the run was not stored; finance records its runs.
    void anAccountWithoutTheGrantStillGetsItsResult()
    {
        test::ScratchDatabase scratch(QStringLiteral("inspectgrant"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        test::insertDuplicateIncident(db, 1);
        QCOMPARE(inspect(scratch.dsn()).exitCode, 1); // the first count, as root

        test::ScratchAccount reader{QString()};
        db::Connection admin(test::serverDsn(), QStringLiteral("admin"));
        db::execDirect(admin.database(),
                       QStringLiteral("GRANT SELECT ON %1.* TO '%2'@'localhost'")
                           .arg(db::quoteIdentifier(scratch.name()), reader.user()));
        const test::CliRun asReader = inspect(reader.dsnFor(scratch.name()));
        QVERIFY2(asReader.exitCode == 1, qPrintable(asReader.out + asReader.err));
        QCOMPARE(parsed(asReader.out)
                     .value(QStringLiteral("duplicates"))
                     .toObject()
                     .value(QStringLiteral("groups"))
                     .toInteger(),
                 qint64(3));
        QVERIFY2(asReader.err.contains(
                     QStringLiteral("warning: this run was not stored: this account may not record "
                                    "inspections")),
                 qPrintable(asReader.err));
        QCOMPARE(runsOf(scratch.dsn()).size(), 1);

        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const test::CliRun asFinance = inspect(finance.dsnFor(scratch.name()));
        QVERIFY2(asFinance.exitCode == 1 && !asFinance.err.contains(QStringLiteral("not stored")),
                 qPrintable(asFinance.err));
        const QList<InspectionRun> runs = runsOf(scratch.dsn());
        QCOMPARE(runs.size(), 2);
        QVERIFY2(runs.first().runBy.startsWith(finance.user() + QLatin1Char('@')),
                 qPrintable(runs.first().runBy));
    }
};

PAYOPS_TEST_MAIN_CORE(TestInspectionRun)
#include "tst_inspectionrun.moc"
