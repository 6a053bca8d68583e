// Reconciling a platform statement against a team's own payments and orders (TeamShop's
// t_pay_record and t_order), as an account holding only payops_finance plus SELECT on the
// team's database: the same matching and the same kinds of finding as on payops's own tables.
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/mapping/mappedorders.h"
#include "domain/statement/reconciliation.h"
#include "domain/statement/statementimport.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>
#include <QTemporaryDir>

namespace payops {
namespace {

constexpr qint64 kLeftOut = test::TeamShop::kLeftOutOrder;
constexpr qint64 kLow = test::TeamShop::kLowOrder;
constexpr qint64 kClosed = test::TeamShop::kClosedPaidOrder;
constexpr auto kUnknown = test::TeamShop::kUnknownPayNo;

// The team's alipay payments between their first and last wechatpay payment: the period of
// TeamShop::plantedStatement(), half open, whose paid alipay orders are all PAID, REFUNDING or
// REFUNDED.
qint64 alipayInPeriod(const test::TeamShop &shop)
{
    db::Connection admin(test::serverDsn().withDatabase(shop.business()),
                         QStringLiteral("test-admin"));
    QSqlQuery query = db::exec(
        admin.database(),
        QStringLiteral("SELECT COUNT(*) FROM t_pay_record a JOIN t_order o ON o.order_no = "
                       "a.order_no AND o.state IN (1, 3, 4) WHERE a.channel = 'alipay' AND "
                       "a.paid_time >= (SELECT MIN(paid_time) FROM t_pay_record WHERE channel = "
                       "'wechatpay') AND a.paid_time < (SELECT MAX(paid_time) FROM t_pay_record "
                       "WHERE channel = 'wechatpay')"));
    query.next();
    return query.value(0).toLongLong();
}

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &text)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

} // namespace

class TestMappedReconcile final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsThePlantedDifferences_data() { test::addSchemaLevelRows(); }

    void findsThePlantedDifferences()
    {
        QFETCH(QString, level);
        test::TeamShop shop(*db::parseSchemaLevel(level));
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        const mapping::Mapping mapping = mapping::loadMapping(shop.mappingPath());
        const QString path =
            writeFile(m_dir, QStringLiteral("team-%1.csv").arg(level), shop.plantedStatement());

        db::Connection connection(finance.dsnFor(shop.dsn().database), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        StatementImportOptions options;
        options.format = StatementFormat::Generic;
        const StatementImport imported = importStatement(db, file, options);
        QCOMPARE(imported.statement.errors, qint64(0));
        const PaymentSide side = mapping::mappedPaymentSide(db, mapping);
        const Reconciliation result = reconcileStatement(db, imported.statement.id, side);

        QCOMPARE(result.count(FindingKind::MissingPlatform), qint64(1));
        QCOMPARE(result.count(FindingKind::AmountMismatch), qint64(1));
        QCOMPARE(result.count(FindingKind::MissingOurs), qint64(2));
        QCOMPARE(result.total(), qint64(4));

        QMap<QByteArray, ReconciliationFinding> found;
        readStoredFindings(db, side, result.runId, [&found](const ReconciliationFinding &finding) {
            found.insert(finding.payNo, finding);
            return true;
        });
        QCOMPARE(found.size(), 4);
        const auto payNo = [](qint64 order) {
            return QByteArray("42000") + QByteArray::number(order);
        };
        QCOMPARE(found.value(payNo(kLeftOut)).kind, FindingKind::MissingPlatform);
        QCOMPARE(found.value(payNo(kLeftOut)).ourStatus, QStringLiteral("PAID"));
        QCOMPARE(found.value(payNo(kLow)).kind, FindingKind::AmountMismatch);
        QCOMPARE(*found.value(payNo(kLow)).ourAmountFen -
                     *found.value(payNo(kLow)).platformAmountFen,
                 qint64(100));
        QCOMPARE(found.value(kUnknown).kind, FindingKind::MissingOurs);
        QVERIFY(!found.value(kUnknown).ourAmountFen);
        // Paid for an order the team closed: the payment is not one that paid it.
        QCOMPARE(found.value(payNo(kClosed)).kind, FindingKind::MissingOurs);
        QCOMPARE(*found.value(payNo(kClosed)).orderId, kClosed);
        QCOMPARE(found.value(payNo(kClosed)).orderStatus, QStringLiteral("CLOSED"));

        // Payments that name no channel: the 多单 search reads every payment of the period. The
        // alipay payments in it are not listed by this (wechatpay) statement, so each is 多单.
        QByteArray text = shop.mappingText();
        text.replace("channel = \"channel\"\n", "");
        text.replace("[payments.channels]\nwechat = \"wechatpay\"\n", "");
        const mapping::Mapping noChannel =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("no-channel.toml"), text));
        QVERIFY(noChannel.payments && noChannel.payments->channel.isEmpty());
        const Reconciliation anyChannel = reconcileStatement(
            db, imported.statement.id, mapping::mappedPaymentSide(db, noChannel));
        QCOMPARE(anyChannel.count(FindingKind::MissingPlatform), qint64(1) + alipayInPeriod(shop));
        QCOMPARE(anyChannel.count(FindingKind::AmountMismatch), qint64(1));
        QCOMPARE(anyChannel.count(FindingKind::MissingOurs), qint64(2));

        // The same lines as a WeChat Pay statement, channel "wechat": [payments.channels] says
        // the team stores it as "wechatpay", so the payment left out of it is found.
        QFile planted(path);
        QVERIFY(planted.open(QIODevice::ReadOnly));
        const QString wechatPath =
            writeFile(m_dir, QStringLiteral("wechat-%1.csv").arg(level),
                      planted.readAll().replace(",wechatpay\n", ",wechat\n"));
        QFile wechatFile(wechatPath);
        QVERIFY(wechatFile.open(QIODevice::ReadOnly));
        const StatementImport wechat = importStatement(db, wechatFile, options);
        QCOMPARE(wechat.statement.header.channel, QStringLiteral("wechat"));
        const Reconciliation named = reconcileStatement(db, wechat.statement.id, side);
        QCOMPARE(named.count(FindingKind::MissingPlatform), qint64(1));
        QCOMPARE(named.count(FindingKind::AmountMismatch), qint64(1));
        QCOMPARE(named.count(FindingKind::MissingOurs), qint64(2));
        QByteArray leftOut;
        readStoredFindings(db, side, named.runId, [&leftOut](const ReconciliationFinding &finding) {
            if (finding.kind == FindingKind::MissingPlatform)
                leftOut = finding.payNo;
            return true;
        });
        QCOMPARE(leftOut, QByteArray("42000") + QByteArray::number(kLeftOut));
        // Without the key the statement's "wechat" meets no payment: the one left out is missed.
        text = shop.mappingText();
        text.replace("[payments.channels]\nwechat = \"wechatpay\"\n", "");
        const mapping::Mapping unnamed =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("no-channels.toml"), text));
        QVERIFY(unnamed.payments && unnamed.payments->channels.isEmpty());
        const Reconciliation missed =
            reconcileStatement(db, wechat.statement.id, mapping::mappedPaymentSide(db, unnamed));
        QCOMPARE(missed.count(FindingKind::MissingPlatform), qint64(0));
        QCOMPARE(missed.count(FindingKind::AmountMismatch), qint64(1));
    }

    // The command line, once: the same findings through --mapping.
    void theCommandReconcilesThroughTheMapping()
    {
        test::TeamShop shop;
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        const QString path =
            writeFile(m_dir, QStringLiteral("team-cli.csv"), shop.plantedStatement());
        const QMap<QString, qint64> before = shop.checksums();
        const test::CliRun run = test::runCli(
            {QStringLiteral("reconcile"), QStringLiteral("--db"),
             finance.dsnFor(shop.dsn().database).toString(true), QStringLiteral("--statement"),
             path, QStringLiteral("--mapping"), shop.mappingPath(), QStringLiteral("--json")});
        QVERIFY2(run.exitCode == 1, qPrintable(run.err));
        const QJsonObject object = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QMap<QString, int> kinds;
        for (const QJsonValue &finding : object.value(QStringLiteral("findings")).toArray())
            ++kinds[finding.toObject().value(QStringLiteral("kind")).toString()];
        QCOMPARE(kinds.value(QStringLiteral("missing_platform")), 1);
        QCOMPARE(kinds.value(QStringLiteral("amount_mismatch")), 1);
        QCOMPARE(kinds.value(QStringLiteral("missing_ours")), 2);
        QCOMPARE(kinds.size(), 3);
        QCOMPARE(shop.checksums(), before); // reconciling reads the team's tables, nothing more

        // A mapping that cannot be read is an error before anything is imported.
        const QString missing = m_dir.filePath(QStringLiteral("absent.toml"));
        const test::CliRun refused = test::runCli(
            {QStringLiteral("reconcile"), QStringLiteral("--db"),
             finance.dsnFor(shop.dsn().database).toString(true), QStringLiteral("--statement"),
             path, QStringLiteral("--mapping"), missing});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(missing), qPrintable(refused.err));

        // Without the mapping the same statement is matched against payops's own, empty, log.
        const test::CliRun own =
            test::runCli({QStringLiteral("reconcile"), QStringLiteral("--db"),
                          finance.dsnFor(shop.dsn().database).toString(true),
                          QStringLiteral("--statement"), path, QStringLiteral("--json")});
        QVERIFY2(own.exitCode == 1, qPrintable(own.err));
        QVERIFY(!own.out.contains(QStringLiteral("amount_mismatch")));
    }

    // Without [payments], the statement is matched against payops's callback log beside the
    // team's orders: a second payment refused order_already_paid is a double payment there too.
    // One schema level: the finance account's reads at both are findsThePlantedDifferences's.
    void withoutPaymentsTheCallbackLogIsOurs()
    {
        test::TeamShop shop;
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        shop.grantBusiness(finance, QStringLiteral("SELECT"));
        QByteArray text = shop.mappingText();
        const qsizetype from = text.indexOf("[payments]");
        text.remove(from, text.indexOf("[[side_effects]]") - from);
        const mapping::Mapping mapping =
            mapping::loadMapping(shop.writeMapping(QStringLiteral("no-payments.toml"), text));
        QVERIFY(!mapping.payments);

        // Orders i = 0, 2, 4 are paid (9.90, 11.90, 13.90 yuan); i = 18 is CLOSED.
        const qint64 a = test::TeamShop::kFirstOrder, b = a + 2, c = a + 4, closed = kClosed;
        {
            db::Connection admin(test::serverDsn().withDatabase(shop.dsn().database),
                                 QStringLiteral("test-admin"));
            db::execDirect(
                admin.database(),
                QStringLiteral(
                    "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, amount_fen, "
                    "channel, status, reason, platform_paid_at) VALUES "
                    "('WX-A1', %1, '', 990, 'wechat', 'PROCESSED', '', '2026-12-01 01:00:00'),"
                    "('WX-B', %2, '', 1190, 'wechat', 'PROCESSED', '', '2026-12-01 02:00:00'),"
                    "('WX-A2', %1, '', 990, 'wechat', 'REJECTED', 'order_already_paid', "
                    "'2026-12-01 02:30:00'),"
                    "('WX-D', %4, '', 2790, 'wechat', 'PROCESSED', '', '2026-12-01 02:40:00'),"
                    "('WX-C', %3, '', 1390, 'wechat', 'PROCESSED', '', '2026-12-01 03:00:00')")
                    .arg(a)
                    .arg(b)
                    .arg(c)
                    .arg(closed));
        }
        const QByteArray csv = QStringLiteral("pay_no,order_id,amount_fen,status,paid_at,channel\n"
                                              "WX-A1,%1,990,SUCCESS,2026-12-01T01:00:00Z,wechat\n"
                                              "WX-A2,%1,990,SUCCESS,2026-12-01T02:30:00Z,wechat\n"
                                              "WX-D,%3,2790,SUCCESS,2026-12-01T02:40:00Z,wechat\n"
                                              "WX-C,%2,1290,SUCCESS,2026-12-01T03:00:00Z,wechat\n")
                                   .arg(a)
                                   .arg(c)
                                   .arg(closed)
                                   .toUtf8();
        QFile file(writeFile(m_dir, QStringLiteral("log.csv"), csv));
        QVERIFY(file.open(QIODevice::ReadOnly));

        db::Connection connection(finance.dsnFor(shop.dsn().database), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        StatementImportOptions options;
        options.format = StatementFormat::Generic;
        const StatementImport imported = importStatement(db, file, options);
        const PaymentSide side = mapping::mappedPaymentSide(db, mapping);
        const Reconciliation result = reconcileStatement(db, imported.statement.id, side);
        QMap<QByteArray, FindingKind> found;
        readStoredFindings(db, side, result.runId, [&found](const ReconciliationFinding &finding) {
            found.insert(finding.payNo, finding.kind);
            return true;
        });
        const QMap<QByteArray, FindingKind> expected{{"WX-A2", FindingKind::DoublePayment},
                                                     {"WX-B", FindingKind::MissingPlatform},
                                                     {"WX-C", FindingKind::AmountMismatch},
                                                     {"WX-D", FindingKind::MissingOurs}};
        QCOMPARE(found, expected);
        QCOMPARE(result.total(), qint64(4));

        // The order's evidence reads its payments from the same log.
        const mapping::MappedOrderEvidence evidence =
            mapping::loadMappedOrderEvidence(db, mapping, a);
        QCOMPARE(evidence.payments.size(), 2);
        QCOMPARE(evidence.payments[0].payNo, QByteArray("WX-A1"));
        QCOMPARE(evidence.payments[1].status, QStringLiteral("REJECTED"));
        QCOMPARE(evidence.callbacks.size(), 2);
    }

private:
    QTemporaryDir m_dir;
};

} // namespace payops

PAYOPS_TEST_MAIN_CORE(payops::TestMappedReconcile)
#include "tst_mappedreconcile.moc"
