// The console core's jobs, run without a window: what a screen submits to its console::Worker
// and what comes back. The screens only show these results; what they mean is checked here.

#include "gatewayrows.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include "console/account.h"
#include "console/audit.h"
#include "console/backlog.h"
#include "console/instances.h"
#include "console/orderevidence.h"
#include "console/reconciliationview.h"
#include "console/worker.h"
#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"

#include <QTemporaryDir>

#include <optional>

using namespace payops;

namespace {

void migrate(const Dsn &dsn, db::SchemaLevel level = db::SchemaLevel::Current)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    db::Migrator(connection, checkMigrationRequirement).migrate(level, false);
}

QString statementFile(const QString &name)
{
    return QStringLiteral(QT_TESTCASE_SOURCEDIR "/data/statements/") + name;
}

// Runs `job` on a connection of the test's own, as a worker's thread would.
template <typename Result> Result run(const Dsn &dsn, const console::Job<Result> &job)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    return job(connection.database());
}

// One database as root, who writes the rows a test reads, and as an account holding only
// payops_operator, the role of the ops staff who read them.
struct OperatorOn
{
    OperatorOn(const Dsn &server, const QString &database)
        : root(server)
        , asOperator(account.dsnFor(database))
    {
        root.database = database;
    }

    test::ScratchAccount account{QStringLiteral("payops_operator")};
    Dsn root;
    Dsn asOperator;
};

} // namespace

class TestConsoleJobs final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        migrate(m_db.dsn());
        migrate(m_legacy.dsn(), db::SchemaLevel::Legacy);
    }

    // The instances page's job, as the operator who watches it: each instance's mode, and a
    // gateway's upstream with its health and how long ago it was checked.
    void instancesSayEachGatewaysUpstream_data() { schemaLevels(); }
    void instancesSayEachGatewaysUpstream()
    {
        QFETCH(QString, database);
        const OperatorOn on(m_db.dsn(), database);
        const Dsn &root = on.root;
        const Dsn &dsn = on.asOperator;
        test::insertGatewayInstances(root);
        const console::InstanceList list = run(dsn, console::jobOf(console::loadInstances));
        test::deleteGatewayInstances(root);
        QCOMPARE(list.rows.size(), 3);
        const console::InstanceRow &a = list.rows.at(0);
        const console::InstanceRow &b = list.rows.at(1);
        const console::InstanceRow &handler = list.rows.at(2);
        QCOMPARE(a.id, QStringLiteral("gateway-a"));
        QVERIFY(a.isGateway() && b.isGateway() && !handler.isGateway());
        QCOMPARE(handler.mode, QStringLiteral("handler"));
        QCOMPARE(a.upstream, test::gatewayUpstream());
        QCOMPARE(a.upstreamState, QStringLiteral("ok"));
        QCOMPARE(b.upstreamState, QStringLiteral("failing"));
        // By the server's clock, from when it was checked: 2 s and 40 s, and a moment more.
        QVERIFY2(a.secondsSinceUpstreamCheck >= 2 && a.secondsSinceUpstreamCheck < 10,
                 qPrintable(QString::number(a.secondsSinceUpstreamCheck)));
        QVERIFY2(b.secondsSinceUpstreamCheck >= 40 && b.secondsSinceUpstreamCheck < 48,
                 qPrintable(QString::number(b.secondsSinceUpstreamCheck)));
        QCOMPARE(handler.upstream, QString());
        QCOMPARE(handler.upstreamState, QString());
        QCOMPARE(handler.secondsSinceUpstreamCheck, -1);
    }

    // An order's evidence, as the operator reads it: each delivery with its forward and the
    // upstream's answer, and the callback as WeChat Pay sent it, headers and ciphertext body.
    void evidenceShowsEachDeliverysForward_data() { schemaLevels(); }
    void evidenceShowsEachDeliverysForward()
    {
        QFETCH(QString, database);
        const OperatorOn on(m_db.dsn(), database);
        const Dsn &root = on.root;
        const Dsn &dsn = on.asOperator;
        const test::ForwardedPayment payment = test::insertForwardedPayment(root);
        const console::OrderEvidence evidence =
            run(dsn, console::jobOf(console::loadOrderEvidence, payment.orderId));
        QVERIFY(evidence.found);
        QCOMPARE(evidence.traces.size(), 3);
        const CallbackTrace &failed = evidence.traces.at(0);
        const CallbackTrace &forwarded = evidence.traces.at(1);
        const CallbackTrace &replayed = evidence.traces.at(2);
        QCOMPARE(failed.instance, QStringLiteral("gateway-a"));
        QCOMPARE(failed.upstreamStatus, 503);
        QCOMPARE(failed.upstreamAnswered - failed.forwarded, 38'500); // µs
        QCOMPARE(forwarded.instance, QStringLiteral("gateway-b"));
        QCOMPARE(forwarded.upstreamStatus, 200);
        QCOMPARE(forwarded.forwarded - failed.forwarded, 15'000'500);
        QVERIFY(forwarded.upstreamAnswered > forwarded.forwarded);
        // The duplicate got the stored answer: no forward, no answer from the upstream.
        QCOMPARE(replayed.forwarded, 0);
        QCOMPARE(replayed.upstreamAnswered, 0);
        QCOMPARE(replayed.upstreamStatus, 0);
        QCOMPARE(evidence.findings, QStringList());

        QCOMPARE(evidence.callbacks.size(), 1);
        const console::EvidenceCallback &callback = evidence.callbacks.first();
        QCOMPARE(callback.id, payment.callbackId);
        QCOMPARE(callback.wireFormat, QStringLiteral("wechatpay"));
        QCOMPARE(callback.rawHeaders, payment.rawHeaders);
        QCOMPARE(callback.rawBody, payment.rawBody);
        QVERIFY(callback.gateway);
        QCOMPARE(callback.forwards, 2);
        QCOMPARE(callback.upstreamStatus, 200);
        QCOMPARE(callback.status, QStringLiteral("FORWARDED"));
        QStringList texts;
        for (const console::EvidenceEvent &e : evidence.events)
            texts << e.text;
        QVERIFY2(texts.contains(QStringLiteral("callback %1 (wechatpay) FORWARDED → 200, "
                                               "forwarded 2×, upstream answered 200")
                                    .arg(QString::fromUtf8(payment.payNo))),
                 qPrintable(texts.join(QLatin1Char('\n'))));

        // A second forward the upstream accepted: its handler had the payment twice.
        {
            db::Connection connection(root, QStringLiteral("t"));
            db::exec(connection.database(),
                     QStringLiteral("INSERT INTO callback_trace (pay_no, order_id, instance, "
                                    "handler, received_at, forwarded_at, upstream_answered_at, "
                                    "upstream_status) SELECT pay_no, order_id, 'gateway-b', "
                                    "'gateway', forwarded_at + INTERVAL 1 SECOND, "
                                    "forwarded_at + INTERVAL 1 SECOND, upstream_answered_at + "
                                    "INTERVAL 1 SECOND, 200 FROM callback_trace "
                                    "WHERE order_id = ? AND upstream_status = 200"),
                     {payment.orderId});
        }
        const console::OrderEvidence twice =
            run(dsn, console::jobOf(console::loadOrderEvidence, payment.orderId));
        QCOMPARE(twice.findings.size(), 1);
        QVERIFY2(twice.findings.first().contains(QStringLiteral("answered with success 2 times")),
                 qPrintable(twice.findings.first()));
    }

    // A gateway's order is the team's, numbered as it likes: the operator finds it by that
    // number, its callbacks with their deliveries' traces (by pay_no: a trace keeps only an
    // order id, 0 here), and the gateway's backlog lists it by that number.
    void aGatewaysOrderIsFoundByItsNumber_data() { schemaLevels(); }
    void aGatewaysOrderIsFoundByItsNumber()
    {
        QFETCH(QString, database);
        const OperatorOn on(m_db.dsn(), database);
        const QByteArray alipayNo = "N202404181780861744366403007";
        const QByteArray wechatNo = "1217752501201407033233368018";
        {
            db::Connection connection(on.root, QStringLiteral("t"));
            const QSqlDatabase db = connection.database();
            const QString row = QStringLiteral(
                "INSERT INTO pay_callback_log (pay_no, order_id, out_trade_no, raw_body, "
                "wire_format, amount_fen, currency, channel, trade_status, status, instance, "
                "gateway, forwards, upstream_status) VALUES (?, 0, ?, 'form', ?, 9900, 'CNY', ?, "
                "?, ?, 'gateway-a', 1, ?, ?)");
            db::exec(db, row,
                     {QByteArray("2026120322000101"), alipayNo, QStringLiteral("alipay"),
                      QStringLiteral("alipay"), QStringLiteral("TRADE_SUCCESS"),
                      QStringLiteral("FORWARDED"), 1, 200});
            db::exec(db, row,
                     {QByteArray("4200000001202612030101"), wechatNo, QStringLiteral("wechatpay"),
                      QStringLiteral("wechat"), QStringLiteral("SUCCESS"),
                      QStringLiteral("RECORDED"), 0, QVariant()});
            db::exec(db, QStringLiteral("INSERT INTO callback_trace (pay_no, order_id, instance, "
                                        "handler, received_at, forwarded_at, upstream_answered_at, "
                                        "upstream_status, outcome, http_status) VALUES "
                                        "('2026120322000101', 0, 'gateway-a', 'gateway', NOW(6), "
                                        "NOW(6), NOW(6), 200, 'forwarded', 200)"));
        }
        const console::OrderEvidence evidence =
            run(on.asOperator, console::jobOf(console::loadEvidenceOf, alipayNo));
        QVERIFY(evidence.found);
        QVERIFY(evidence.gateway);
        QCOMPARE(evidence.orderNo, alipayNo);
        QCOMPARE(evidence.order.id, qint64(0));
        QCOMPARE(evidence.callbacks.size(), 1);
        QCOMPARE(evidence.callbacks.first().payNo, QByteArray("2026120322000101"));
        QCOMPARE(evidence.traces.size(), 1);
        QCOMPARE(evidence.traces.first().upstreamStatus, 200);
        QCOMPARE(evidence.findings, QStringList());
        QVERIFY(!run(on.asOperator, console::jobOf(console::loadEvidenceOf,
                                                   QByteArray("N202404181780861744366403008")))
                     .found);

        const QList<console::RecordedCallback> backlog =
            run(on.asOperator, console::jobOf(console::loadGatewayPage, qint64(0), 1000));
        const auto waiting =
            std::find_if(backlog.cbegin(), backlog.cend(), [](const console::RecordedCallback &r) {
                return r.payNo == "4200000001202612030101";
            });
        QVERIFY(waiting != backlog.cend());
        QCOMPARE(waiting->orderNo, wechatNo);
        QCOMPARE(waiting->orderId, qint64(0));
    }

    // The account the console shows is the authenticated one, with what its role's grants allow.
    void theAccountIsTheAuthenticatedOneWithItsRolesGrants()
    {
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        test::ScratchAccount financeAccount(QStringLiteral("payops_finance"));
        const console::Account op =
            run(operatorAccount.dsnFor(m_db.name()), console::jobOf(console::probeAccount));
        const console::Account finance =
            run(financeAccount.dsnFor(m_db.name()), console::jobOf(console::probeAccount));
        QCOMPARE(op.user, operatorAccount.user() + QStringLiteral("@localhost"));
        QCOMPARE(finance.user, financeAccount.user() + QStringLiteral("@localhost"));
        QVERIFY(op.privileges.compensate);
        QVERIFY(op.privileges.flipSwitch);
        QVERIFY(!finance.privileges.compensate);
        QVERIFY(!finance.privileges.flipSwitch);
        QVERIFY(finance.privileges.draftPayments);
    }

    // Each way an import ends is told apart; only a stored statement is reconciled and read.
    void aStatementImportTellsHowItEnded()
    {
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const Dsn dsn = finance.dsnFor(m_db.name());
        const auto importJob = [](const QString &path) {
            return console::statementFileImportJob(path, StatementFormat::Auto,
                                                   std::make_shared<std::atomic<bool>>(false), {});
        };
        using Outcome = console::StatementFileImport::Outcome;

        const auto missing = run(dsn, importJob(statementFile(QStringLiteral("no-such-file.csv"))));
        QCOMPARE(missing.outcome, Outcome::CannotOpen);
        QVERIFY(!missing.problem.isEmpty());

        const auto unreadable = run(dsn, importJob(statementFile(QStringLiteral("unknown.csv"))));
        QCOMPARE(unreadable.outcome, Outcome::Unreadable);
        QVERIFY(!unreadable.problem.isEmpty());

        const auto first = run(dsn, importJob(statementFile(QStringLiteral("generic.csv"))));
        QCOMPARE(first.outcome, Outcome::Reconciled);
        QVERIFY(!first.imported.alreadyImported);
        QVERIFY(first.imported.statement.id > 0);
        QCOMPARE(first.view.statement.id, first.imported.statement.id);
        QVERIFY(first.view.runId > 0);
        QVERIFY(first.findings > 0); // none of its orders is in this database

        const auto again = run(dsn, importJob(statementFile(QStringLiteral("generic.csv"))));
        QCOMPARE(again.outcome, Outcome::Reconciled);
        QVERIFY(again.imported.alreadyImported);
        QCOMPARE(again.imported.statement.id, first.imported.statement.id);
        QVERIFY(again.view.runId > first.view.runId);

        const auto cancel = std::make_shared<std::atomic<bool>>(true);
        const auto stopped = run(
            dsn, console::statementFileImportJob(statementFile(QStringLiteral("alipay_utf8.csv")),
                                                 StatementFormat::Auto, cancel, {}));
        QCOMPARE(stopped.outcome, Outcome::Cancelled);
    }

    // The backlog page's jobs, as the operator who drains: a gateway's rows without a final
    // answer (RECORDED, FORWARDING) are a list of their own, apart from the payments the payment
    // drain takes, with the gateways' upstream to drain them to.
    void theBacklogKeepsAGatewaysRowsApart_data() { schemaLevels(); }
    void theBacklogKeepsAGatewaysRowsApart()
    {
        QFETCH(QString, database);
        const OperatorOn on(m_db.dsn(), database);
        {
            db::Connection connection(on.root, QStringLiteral("t"));
            db::execDirect(connection.database(), QStringLiteral("DELETE FROM pay_callback_log"));
            // A forwarded row got 502 from the upstream: no final answer yet.
            const auto insert = [&](const char *payNo, const char *status, int gateway) {
                const bool forwarded = QByteArrayView(status) == QByteArrayView("FORWARDING");
                db::exec(connection.database(),
                         QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                        "amount_fen, status, gateway, forwards, upstream_status) "
                                        "VALUES (?, 1, '{}', 100, ?, ?, ?, ?)"),
                         {QByteArray(payNo), QLatin1String(status), gateway, int(forwarded),
                          forwarded ? QVariant(502) : QVariant(QMetaType(QMetaType::Int))});
            };
            insert("PAY-1", "RECORDED", 0);
            insert("GW-1", "FORWARDING", 1);
            insert("GW-2", "RECORDED", 1);
            insert("GW-3", "FORWARDED", 1); // a final answer: done
            insert("PAY-2", "RECORDED", 0);
            insert("GW-4", "FORWARDING", 1);
        }
        test::insertGatewayInstances(on.root);
        const auto payNos = [](const QList<console::RecordedCallback> &rows) {
            QStringList names;
            for (const console::RecordedCallback &row : rows)
                names << QString::fromUtf8(row.payNo);
            return names;
        };
        const Dsn &dsn = on.asOperator;
        QCOMPARE(payNos(run(dsn, console::jobOf(console::loadRecordedPage, qint64(0), 10))),
                 QStringList({QStringLiteral("PAY-1"), QStringLiteral("PAY-2")}));
        // Oldest first across both statuses, page by page.
        const auto first = run(dsn, console::jobOf(console::loadGatewayPage, qint64(0), 2));
        QCOMPARE(payNos(first), QStringList({QStringLiteral("GW-1"), QStringLiteral("GW-2")}));
        QCOMPARE(first.first().status, QStringLiteral("FORWARDING"));
        QCOMPARE(first.first().forwards, 1);
        QCOMPARE(first.first().upstreamStatus, 502);
        QCOMPARE(first.last().upstreamStatus, 0);
        const auto second = run(dsn, console::jobOf(console::loadGatewayPage, first.last().id, 2));
        QCOMPARE(payNos(second), QStringList({QStringLiteral("GW-4")}));

        const console::BacklogSummary summary =
            run(dsn, console::backlogSummaryJob(std::make_shared<console::BacklogTally>()));
        test::deleteGatewayInstances(on.root);
        QCOMPARE(summary.recorded, 2); // the payments only
        QCOMPARE(summary.amountFen, 200);
        QCOMPARE(summary.gateway.rows, 3); // GW-1, GW-2, GW-4
        QVERIFY(!summary.gateway.more);
        QCOMPARE(summary.gateway.upstreams, QStringList({test::gatewayUpstream()}));
    }

    // A file that cannot be written is the export's answer for the page to show, not a failed job.
    void anExportThatCannotWriteSaysWhy()
    {
        QTemporaryDir dir;
        const auto exportTo = [&](const QString &path) {
            return run(m_db.dsn(),
                       console::auditExportJob(AuditFilter{}, path,
                                               std::make_shared<std::atomic<bool>>(false), {}));
        };
        const console::AuditExport written = exportTo(dir.filePath(QStringLiteral("audit.csv")));
        QVERIFY2(written.failure.isEmpty(), qPrintable(written.failure));
        QVERIFY(written.written >= 0);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("audit.csv"))));

        const console::AuditExport refused =
            exportTo(dir.filePath(QStringLiteral("no-such-folder/audit.csv")));
        QVERIFY(!refused.failure.isEmpty());
    }

    // The façade runs a job off the UI thread and answers on it. A cancel interrupts the job
    // on the server: the next job of the worker answers long before the first would have ended.
    void theWorkerAnswersAndCancels()
    {
        console::Worker worker(m_db.dsn());
        QObject receiver;
        std::optional<console::Account> account;
        worker.submit<console::Account>(
            QStringLiteral("account"), console::jobOf(console::probeAccount), &receiver,
            [&](const console::Account &a) { account = a; }, [](const db::Error &) {});
        QTRY_VERIFY_WITH_TIMEOUT(account.has_value(), 20000);
        QVERIFY(account->user.startsWith(QStringLiteral("root@")));
        QVERIFY(worker.serverConnectionId() != 0);

        bool sleepAnswered = false;
        worker.submit<int>(
            QStringLiteral("sleep"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(60)")).toInt();
            },
            &receiver, [&](const int &) { sleepAnswered = true; },
            [&](const db::Error &) { sleepAnswered = true; });
        QTest::qWait(300); // let it reach the server
        worker.cancel(QStringLiteral("sleep"));
        std::optional<int> after;
        worker.submit<int>(
            QStringLiteral("after"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 7")).toInt();
            },
            &receiver, [&](const int &value) { after = value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(after, std::optional<int>(7), 20000);
        QVERIFY(!sleepAnswered); // a cancelled job's answer is dropped
        QVERIFY(console::Worker::isCancelled(db::Error(QStringLiteral("interrupted"), 1317)));
        QVERIFY(!console::Worker::isCancelled(db::Error(QStringLiteral("refused"), 1142)));
    }

private:
    // The gateway's columns are the same at both schema levels: the jobs read them at each.
    void schemaLevels()
    {
        QTest::addColumn<QString>("database");
        QTest::newRow("current") << m_db.name();
        QTest::newRow("legacy") << m_legacy.name();
    }

    test::ScratchDatabase m_db{QStringLiteral("consolejobs")};
    test::ScratchDatabase m_legacy{QStringLiteral("consolejobs_legacy")};
};

PAYOPS_TEST_MAIN_CORE(TestConsoleJobs)
#include "tst_consolejobs.moc"
