#include "callbackfixture.h"
#include "db/connection.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QProcess>
#include <QRegularExpression>

using namespace payops;

namespace {

constexpr qint64 kFirstOrder = 1001;
constexpr qint64 kNoSuchOrder = 900001;

// What the drains must come to, counted while the backlog is written.
struct Backlog
{
    int paid = 0;           // orders with a payment: each paid once
    int secondPayments = 0; // callbacks for an order already paid by another pay_no
    int withoutOrder = 0;
    int notSuccess = 0;
    int total() const { return paid + secondPayments + withoutOrder + notSuccess; }
};

// The backlog of record-only mode, as the endpoint writes it (the setup's own account: what is
// tested is the drain). `adjacentPairs` orders get their second payment right after the first,
// in the same batch; `latePairs` at the end, in another batch.
Backlog recordBacklog(const QSqlDatabase &db, int orders, int adjacentPairs, int latePairs,
                      int withoutOrder, int notSuccess)
{
    db::Transaction transaction(db);
    const auto record = [&db](const QByteArray &payNo, qint64 orderId, const QString &tradeStatus) {
        db::exec(db,
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                "body_sha256, amount_fen, currency, channel, trade_status, status, "
                                "response_code) VALUES (?, ?, 'recorded', SHA2(?, 256), 9900, "
                                "'CNY', 'wechat', ?, 'RECORDED', 200)"),
                 {payNo, orderId, payNo, tradeStatus});
    };
    const QString success = QStringLiteral("SUCCESS");
    Backlog backlog;
    for (int i = 0; i < orders; ++i) {
        const QByteArray order = QByteArray::number(kFirstOrder + i);
        record("P-" + order, kFirstOrder + i, success);
        ++backlog.paid;
        if (i < adjacentPairs) {
            record("S-" + order, kFirstOrder + i, success);
            ++backlog.secondPayments;
        }
        if (i % 10 == 0 && backlog.withoutOrder < withoutOrder) {
            record("N-" + order, kNoSuchOrder + i, success);
            ++backlog.withoutOrder;
        }
        if (i % 10 == 5 && backlog.notSuccess < notSuccess) {
            record("W-" + order, kFirstOrder + i, QStringLiteral("WAIT_BUYER_PAY"));
            ++backlog.notSuccess;
        }
    }
    for (int i = adjacentPairs; i < adjacentPairs + latePairs; ++i) {
        record("L-" + QByteArray::number(kFirstOrder + i), kFirstOrder + i, success);
        ++backlog.secondPayments;
    }
    transaction.commit();
    return backlog;
}

// A database at level current with `orders` PENDING orders, each with its recorded payment,
// the first `adjacentPairs` of them with a second payment right after it.
void prepareBacklog(const Dsn &dsn, int orders, int adjacentPairs)
{
    test::prepareCallbackDatabase(dsn, QStringLiteral("current"), orders, kFirstOrder);
    db::Connection connection(dsn, QStringLiteral("backlog"));
    recordBacklog(connection.database(), orders, adjacentPairs, 0, 0, 0);
}

// `payops drain` as `account`, waited for.
test::CliRun drainAs(const test::ScratchAccount &account, const test::ScratchDatabase &scratch,
                     const QStringList &arguments)
{
    return test::runCli(QStringList{QStringLiteral("drain"), QStringLiteral("--db"),
                                    account.dsnFor(scratch.name()).toString()} +
                            arguments,
                        {{QStringLiteral("PAYOPS_DB_PASSWORD"), account.password()}});
}

// The same, started, for drains at once.
QProcess *startDrain(const test::ScratchAccount &account, const test::ScratchDatabase &scratch,
                     const QStringList &arguments)
{
    auto *process = new QProcess;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("PAYOPS_DB"));
    env.insert(QStringLiteral("PAYOPS_DB_PASSWORD"), account.password());
    process->setProcessEnvironment(env);
    process->start(test::cliPath(), QStringList{QStringLiteral("drain"), QStringLiteral("--db"),
                                                account.dsnFor(scratch.name()).toString()} +
                                        arguments);
    return process;
}

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

} // namespace

class TestBatchedDrain final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Two drains at once, each over three connections in batches, as an operator: every
    // callback is handled once, each order paid once, and the counts add up.
    void twoDrainsHandleEachCallbackOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("batcheddrain"));
        // Legacy: no side-effect keys, so only the drain's claim and the CAS keep the side
        // effects single, and a duplicate would show.
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 1600, kFirstOrder);
        db::Connection root(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = root.database();
        // 600 users with two or three orders each, far apart: batches share some users and wait for
        // each other there, not everywhere.
        db::exec(db, QStringLiteral("INSERT INTO users (id, nickname) SELECT seq, CONCAT('u', seq) "
                                    "FROM seq_51_to_600"));
        db::exec(
            db,
            QStringLiteral("UPDATE orders SET user_id = 1 + MOD(id - %1, 600)").arg(kFirstOrder));
        const Backlog backlog = recordBacklog(db, 1600, 250, 150, 150, 60);
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));

        const QStringList arguments{QStringLiteral("--connections"), QStringLiteral("3"),
                                    QStringLiteral("--batch"), QStringLiteral("50")};
        std::unique_ptr<QProcess> first(startDrain(operatorAccount, scratch, arguments));
        std::unique_ptr<QProcess> second(startDrain(operatorAccount, scratch, arguments));
        QVERIFY(first->waitForFinished(60000) && second->waitForFinished(60000));

        const QRegularExpression counts(
            QStringLiteral("processed (\\d+), rejected (\\d+), ignored (\\d+), unmatched (\\d+)"));
        const QRegularExpression progress(
            QStringLiteral("^\\d+ done, \\d+ left: .* \\(\\d+\\.\\d/s\\)$"),
            QRegularExpression::MultilineOption);
        int processed = 0;
        int rejected = 0;
        int ignored = 0;
        int unmatched = 0;
        for (QProcess *drain : {first.get(), second.get()}) {
            const QString out = QString::fromUtf8(drain->readAllStandardOutput());
            const QString err = QString::fromUtf8(drain->readAllStandardError());
            QVERIFY2(drain->exitCode() == 0, qPrintable(out + err));
            const auto match = counts.match(out);
            QVERIFY2(match.hasMatch(), qPrintable(out));
            processed += match.captured(1).toInt();
            rejected += match.captured(2).toInt();
            ignored += match.captured(3).toInt();
            unmatched += match.captured(4).toInt();
            // A drain that handled anything said so as it went, rate included.
            if (match.captured(1).toInt() + match.captured(2).toInt() > 0)
                QVERIFY2(progress.match(err).hasMatch(), qPrintable(err));
        }
        QCOMPARE(processed, backlog.paid);
        QCOMPARE(rejected, backlog.secondPayments);
        QCOMPARE(ignored, backlog.notSuccess);
        QCOMPARE(unmatched, backlog.withoutOrder);

        // Every callback handled, and by one drain only: one trace each.
        QCOMPARE(count(db, QStringLiteral(
                               "SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'")),
                 qint64(0));
        QCOMPARE(count(db, QStringLiteral(
                               "SELECT COUNT(*) FROM callback_trace WHERE handler = 'drain'")),
                 qint64(backlog.total()));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM (SELECT pay_no FROM callback_trace "
                                          "GROUP BY pay_no HAVING COUNT(*) > 1) t")),
                 qint64(0));
        // Each order paid by exactly one of its payments; every other one is a second payment.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(backlog.paid));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM (SELECT order_id FROM "
                                          "pay_callback_log WHERE status = 'PROCESSED' GROUP BY "
                                          "order_id HAVING COUNT(*) > 1) t")),
                 qint64(0));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = "
                                          "'REJECTED' AND reason = 'order_already_paid'")),
                 qint64(backlog.secondPayments));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders o JOIN pay_callback_log c "
                                          "ON c.order_id = o.id AND c.status = 'PROCESSED' "
                                          "WHERE o.pay_no <> c.pay_no")),
                 qint64(0));

        // No side effect twice, by an independent GROUP BY, and the balances agree.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM (SELECT order_id FROM user_coupon "
                                          "GROUP BY order_id, coupon_template_id HAVING COUNT(*) "
                                          "> 1) t")),
                 qint64(0));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM (SELECT order_id FROM point_log "
                                          "GROUP BY order_id, point_type HAVING COUNT(*) > 1) t")),
                 qint64(0));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")),
                 qint64(2 * backlog.paid));
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(points_balance) FROM users")),
                 qint64(100 * backlog.paid));

        // One audit entry per drain, under the operator's account, whose counts add up.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM ops_audit_log WHERE action = "
                                          "'backlog.drain' AND actor = '%1@localhost'")
                               .arg(operatorAccount.user())),
                 qint64(2));
        QCOMPARE(count(db, QStringLiteral("SELECT SUM(JSON_VALUE(after_json, '$.processed')) FROM "
                                          "ops_audit_log WHERE action = 'backlog.drain'")),
                 qint64(backlog.paid));
    }

    // Two payments of one order in one batch come out as one at a time: the first applied,
    // the second rejected as order_already_paid.
    void secondPaymentInOneBatchIsRejected()
    {
        test::ScratchDatabase scratch(QStringLiteral("batchpairs"));
        prepareBacklog(scratch.dsn(), 200, 200);
        db::Connection root(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = root.database();
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        // One batch holds the whole backlog.
        const test::CliRun drain = drainAs(operatorAccount, scratch,
                                           {QStringLiteral("--connections"), QStringLiteral("1"),
                                            QStringLiteral("--batch"), QStringLiteral("1000")});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.err));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                          "LIKE 'P-%' AND status = 'PROCESSED'")),
                 qint64(200));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no "
                                          "LIKE 'S-%' AND status = 'REJECTED' AND reason = "
                                          "'order_already_paid'")),
                 qint64(200));
    }

    // A deadlock rolls back the drain's batch only, which is claimed again and applied once.
    // Another session holds a user the batch needs and then asks for an order the batch has
    // locked; having written more, it is not the one the server rolls back.
    void deadlockRetriesTheBatch()
    {
        test::ScratchDatabase scratch(QStringLiteral("batchdeadlock"));
        prepareBacklog(scratch.dsn(), 10, 0);
        db::Connection root(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = root.database();
        db::execDirect(db, QStringLiteral("CREATE TABLE ballast (id INT PRIMARY KEY)"));
        const auto deadlocks = [&db] {
            return count(db, QStringLiteral("SELECT VARIABLE_VALUE FROM "
                                            "information_schema.GLOBAL_STATUS WHERE "
                                            "VARIABLE_NAME = 'INNODB_DEADLOCKS'"));
        };
        const qint64 deadlocksBefore = deadlocks();
        db::Connection other(scratch.dsn(), QStringLiteral("other"));
        const QSqlDatabase otherDb = other.database();
        db::Transaction holding(otherDb);
        db::execDirect(otherDb,
                       QStringLiteral("INSERT INTO ballast SELECT seq FROM seq_1_to_5000"));
        db::execDirect(otherDb, QStringLiteral("SELECT id FROM users WHERE id = 1 FOR UPDATE"));

        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        std::unique_ptr<QProcess> drain(startDrain(
            operatorAccount, scratch, {QStringLiteral("--connections"), QStringLiteral("1")}));
        // The batch has locked its orders and waits for user 1.
        QTRY_VERIFY_WITH_TIMEOUT(
            count(db, QStringLiteral("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                     "WHERE USER = '%1' AND INFO LIKE 'SELECT id FROM users %'")
                          .arg(operatorAccount.user())) == 1,
            20000);
        db::execDirect(
            otherDb,
            QStringLiteral("SELECT id FROM orders WHERE id = %1 FOR UPDATE").arg(kFirstOrder));
        holding.rollback();

        QVERIFY(drain->waitForFinished(60000));
        const QString out = QString::fromUtf8(drain->readAllStandardOutput());
        QVERIFY2(drain->exitCode() == 0,
                 qPrintable(out + QString::fromUtf8(drain->readAllStandardError())));
        QVERIFY2(out.contains(QStringLiteral("processed 10, rejected 0")), qPrintable(out));
        // Other tests may deadlock on the same server meanwhile: at least this one.
        QVERIFY(deadlocks() > deadlocksBefore);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")), qint64(20));
    }

    // --limit holds across connections: batches claim only what is left of it.
    void limitHoldsAcrossConnections()
    {
        test::ScratchDatabase scratch(QStringLiteral("batchlimit"));
        prepareBacklog(scratch.dsn(), 300, 0);
        db::Connection root(scratch.dsn(), QStringLiteral("check"));
        const QSqlDatabase db = root.database();
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        const test::CliRun drain = drainAs(operatorAccount, scratch,
                                           {QStringLiteral("--limit"), QStringLiteral("130"),
                                            QStringLiteral("--connections"), QStringLiteral("4"),
                                            QStringLiteral("--batch"), QStringLiteral("50")});
        QVERIFY2(drain.exitCode == 0, qPrintable(drain.out + drain.err));
        QVERIFY2(drain.out.contains(QStringLiteral("processed 130, rejected 0, ignored 0, "
                                                   "unmatched 0; 170 left in the backlog")),
                 qPrintable(drain.out));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(130));
    }

    // Wrong --connections and --batch are refused before anything is drained.
    void refusesWrongConnectionsAndBatch()
    {
        const QList<std::pair<QStringList, QString>> wrong{
            {{QStringLiteral("--connections"), QStringLiteral("0")},
             QStringLiteral("--connections must be 1-64")},
            {{QStringLiteral("--connections"), QStringLiteral("many")},
             QStringLiteral("--connections must be 1-64")},
            {{QStringLiteral("--batch"), QStringLiteral("1001")},
             QStringLiteral("--batch must be 1-1000")},
            {{QStringLiteral("--unmatched"), QStringLiteral("--batch"), QStringLiteral("10")},
             QStringLiteral("takes neither --connections nor --batch")},
            {{QStringLiteral("--upstream"), QStringLiteral("http://127.0.0.1:1/"),
              QStringLiteral("--connections"), QStringLiteral("2")},
             QStringLiteral("its connections are --concurrency")}};
        for (const auto &[arguments, message] : wrong) {
            const test::CliRun run =
                test::runCli(QStringList{QStringLiteral("drain"), QStringLiteral("--db"),
                                         QStringLiteral("mysql://nobody@127.0.0.1:1/none")} +
                             arguments);
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains(message), qPrintable(run.err));
        }
    }
};

PAYOPS_TEST_MAIN_CORE(TestBatchedDrain)
#include "tst_batcheddrain.moc"
