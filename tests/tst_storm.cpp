// payops storm: the platform's at-least-once delivery, fired on purpose at real
// payops-callbackd processes on a sandbox, and refused anywhere else.

#include "callbackfixture.h"
#include "countingupstream.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/callbackrequest.h"
#include "domain/callback/signature.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/sandboxkeys.h"
#include "lab/storm.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QUrlQuery>

#include <httplib.h>

#include <csignal>
#include <mutex>
#include <thread>

using namespace payops;

namespace {

QString target(int port)
{
    return QStringLiteral("http://127.0.0.1:%1").arg(port);
}

// A real HTTP server standing in for an instance: answers every callback with `status` (503:
// an instance whose database is gone) and notes when each arrived, with its body and headers.
class Endpoint final
{
public:
    struct Arrival
    {
        qint64 atMs = 0; // since the endpoint started
        QByteArray body, timestamp, signature;
    };

    explicit Endpoint(int status)
    {
        m_clock.start();
        m_server.Post("/callbacks/pay", [this, status](const httplib::Request &request,
                                                       httplib::Response &response) {
            {
                const std::lock_guard lock(m_mutex);
                m_arrivals.push_back(
                    {m_clock.elapsed(), QByteArray::fromStdString(request.body),
                     QByteArray::fromStdString(request.get_header_value("X-Payops-Timestamp")),
                     QByteArray::fromStdString(request.get_header_value("X-Payops-Signature"))});
            }
            response.status = status;
            response.set_content(status == 200 ? "{\"outcome\":\"processed\"}"
                                               : "{\"error\":\"unavailable\"}",
                                 "application/json");
        });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        // Bound and listening already: connections wait in the backlog until the loop runs.
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
    }
    ~Endpoint()
    {
        m_server.stop();
        m_thread.join();
    }
    Q_DISABLE_COPY_MOVE(Endpoint)
    int port() const { return m_port; }
    int requests() const
    {
        const std::lock_guard lock(m_mutex);
        return int(m_arrivals.size());
    }
    std::vector<Arrival> arrivals() const
    {
        const std::lock_guard lock(m_mutex);
        return m_arrivals;
    }

private:
    httplib::Server m_server;
    QElapsedTimer m_clock;
    mutable std::mutex m_mutex;
    std::vector<Arrival> m_arrivals;
    int m_port = 0;
    std::thread m_thread;
};

// A port nobody listens on: bound, then closed again.
int closedPort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost))
        qFatal("cannot find a free port");
    return server.serverPort();
}

QStringList stormArguments(const Dsn &dsn, const QStringList &targets, const QStringList &more)
{
    return QStringList{QStringLiteral("storm"),
                       QStringLiteral("--db"),
                       dsn.toString(true),
                       QStringLiteral("--targets"),
                       targets.join(QLatin1Char(',')),
                       QStringLiteral("--secret-file"),
                       test::secretFilePath()} +
           more;
}

// Runs payops storm; its summary line goes to the test's log.
test::CliRun storm(const Dsn &dsn, const QStringList &targets, const QStringList &more)
{
    const test::CliRun run = test::runCli(stormArguments(dsn, targets, more));
    qInfo("exit %d: %s", run.exitCode, qPrintable(run.out.trimmed()));
    return run;
}

// A figure of the summary line, e.g. figure(out, "5xx").
qint64 figure(const QString &summary, const QString &name)
{
    const auto match =
        QRegularExpression(QRegularExpression::escape(name) + QStringLiteral(" (\\d+)"))
            .match(summary);
    return match.hasMatch() ? match.captured(1).toLongLong() : -1;
}

// Groups of one order's side effect issued more than once: coupons per template, points per type.
qint64 duplicateGroups(const QSqlDatabase &db)
{
    const LiveDuplicateCount duplicates = countLiveDuplicates(db);
    return duplicates.couponGroups + duplicates.pointGroups;
}

qint64 count(const QSqlDatabase &db, const QString &sql)
{
    return db::scalar(db, sql).toLongLong();
}

} // namespace

class TestStorm final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The incident on demand: the incident's handler on the incident's schema, two instances,
    // the copies of each order at the same instant on both.
    void unsafeInstancesPayOutTwice()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_unsafe"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        const QStringList delay{QStringLiteral("--commit-delay-ms"), QStringLiteral("150")};
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("A"),
                                 delay);
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("unsafe-demo"), QStringLiteral("B"),
                                 delay);

        const test::CliRun run =
            storm(scratch.dsn(), {target(a.port()), target(b.port())},
                  {QStringLiteral("--create-orders"), QStringLiteral("--orders"),
                   QStringLiteral("20"), QStringLiteral("--copies"), QStringLiteral("2"),
                   QStringLiteral("--pattern"), QStringLiteral("concurrent")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QCOMPARE(figure(run.out, QStringLiteral("sent")), qint64(40));
        QCOMPARE(figure(run.out, QStringLiteral("2xx")), qint64(40));

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders")), qint64(20));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(20));
        // One pay_no per order, in all its copies: the unique index held, and still...
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")), qint64(20));
        // ... the side effects were issued twice.
        const qint64 duplicates = duplicateGroups(db);
        QVERIFY2(duplicates > 0,
                 "the storm made no duplicate side effect against the unsafe handler");
        qInfo("duplicate groups: %lld of %d possible", duplicates, 20 * 3);
    }

    // The defences: the safe handler on the current schema, the same storm and more copies.
    void safeInstancesPayOnce()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_safe"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 30);
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("A"));
        test::CallbackdProcess b(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("B"));

        // Without --create-orders it takes the existing PENDING orders, the newest first.
        const test::CliRun run =
            storm(scratch.dsn(), {target(a.port()), target(b.port())},
                  {QStringLiteral("--orders"), QStringLiteral("30"), QStringLiteral("--copies"),
                   QStringLiteral("3"), QStringLiteral("--pattern"), QStringLiteral("concurrent"),
                   QStringLiteral("--retry-5xx")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QCOMPARE(figure(run.out, QStringLiteral("never 2xx")), qint64(0));

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(30));
        QCOMPARE(duplicateGroups(db), qint64(0));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")), qint64(30 * 2));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM point_log")), qint64(30));

        // Nothing PENDING is left: a second storm without --create-orders is refused.
        const test::CliRun again = storm(scratch.dsn(), {target(a.port())}, {});
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains(QStringLiteral("--create-orders")), qPrintable(again.err));
    }

    void refusesADatabaseThatIsNotASandbox()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_real"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 5);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        db::execDirect(db, QStringLiteral("DELETE FROM payops_meta WHERE name = 'sandbox'"));
        test::CallbackdProcess a(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("A"));
        const QString before = test::businessFingerprint(scratch.dsn());

        for (const QStringList &more :
             {QStringList{QStringLiteral("--create-orders")}, QStringList{}}) {
            const test::CliRun run =
                storm(scratch.dsn(), {target(a.port())},
                      more + QStringList{QStringLiteral("--orders"), QStringLiteral("5")});
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains(QStringLiteral("not marked as a sandbox")),
                     qPrintable(run.err));
        }
        QVERIFY_THROWS_EXCEPTION(db::Error, createStormOrders(db, 5));
        QVERIFY_THROWS_EXCEPTION(db::Error, pendingStormOrders(db, 5));
        try {
            createStormOrders(db, 5);
        } catch (const db::Error &error) {
            QVERIFY2(db::userMessage(error).contains(QStringLiteral("sandbox")),
                     qPrintable(db::userMessage(error)));
        }
        QCOMPARE(test::businessFingerprint(scratch.dsn()), before);
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM callback_trace")), qint64(0));
    }

    // The command speaks a platform's format with the sandbox's keys: each delivery at the
    // platform's path with the order's own amount from the database, and a forged one that the
    // endpoint (here a receiver that believes anything) took as genuine fails the storm.
    void platformChannelThroughTheCommand()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_alipay"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        QTemporaryDir sandbox;
        const SandboxKeys keys = ensureSandboxKeys(sandbox.path());
        test::CountingUpstream receiver([](const test::CountingUpstream::Request &) {
            return test::CannedAnswer{200, "success", "text/plain"};
        });
        const test::CliRun run = test::runCli(
            {QStringLiteral("storm"), QStringLiteral("--db"), scratch.dsn().toString(true),
             QStringLiteral("--targets"), receiver.baseUrl(), QStringLiteral("--channel"),
             QStringLiteral("alipay"), QStringLiteral("--keys-dir"), keys.directory,
             QStringLiteral("--create-orders"), QStringLiteral("--orders"), QStringLiteral("3"),
             QStringLiteral("--forged"), QStringLiteral("1")});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.out.contains(QStringLiteral("forged 1, of which accepted 1")),
                 qPrintable(run.out));
        QVERIFY2(
            run.err.contains(QStringLiteral("1 forged callback(s) got the platform's success")),
            qPrintable(run.err));

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        QHash<qint64, QString> amounts; // order -> yuan
        QSqlQuery orders =
            db::exec(connection.database(), QStringLiteral("SELECT id, amount_fen FROM orders"));
        while (orders.next())
            amounts.insert(orders.value(0).toLongLong(),
                           QStringLiteral("%1.%2")
                               .arg(orders.value(1).toLongLong() / 100)
                               .arg(orders.value(1).toLongLong() % 100, 2, 10, QLatin1Char('0')));
        QCOMPARE(amounts.size(), 3);
        const QList<test::CountingUpstream::Request> requests = receiver.received();
        QCOMPARE(requests.size(), 3 * 2 + 1);
        for (const auto &request : requests) {
            QCOMPARE(request.path, QByteArray("/callbacks/alipay"));
            const QUrlQuery form(QString::fromLatin1(request.body));
            const qint64 order = form.queryItemValue(QStringLiteral("out_trade_no")).toLongLong();
            QVERIFY2(amounts.contains(order), request.body.constData());
            QCOMPARE(form.queryItemValue(QStringLiteral("total_amount")), amounts.value(order));
        }
    }

    void flagErrorsExitTwo_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString live = target(8080);
        const QString secret = test::secretFilePath();
        auto with = [&](const QStringList &more) {
            return QStringList{QStringLiteral("storm"), QStringLiteral("--db"),
                               QStringLiteral("mysql://root@127.0.0.1/x"),
                               QStringLiteral("--secret-file"), secret} +
                   more;
        };
        const QStringList targets{QStringLiteral("--targets"), live};
        QTest::newRow("no targets") << with({}) << QStringLiteral("--targets is required");
        QTest::newRow("no port") << with({QStringLiteral("--targets"),
                                          QStringLiteral("http://127.0.0.1")})
                                 << QStringLiteral("has no port");
        QTest::newRow("https") << with({QStringLiteral("--targets"),
                                        QStringLiteral("https://127.0.0.1:8443")})
                               << QStringLiteral("must start with http://");
        QTest::newRow("path") << with({QStringLiteral("--targets"),
                                       live + QStringLiteral("/callbacks/pay")})
                              << QStringLiteral("only http://HOST:PORT");
        QTest::newRow("not a url")
            << with({QStringLiteral("--targets"), QStringLiteral("localhost:80 80")})
            << QStringLiteral("target 'localhost:80 80'");
        QTest::newRow("orders 0") << with(targets + QStringList{QStringLiteral("--orders"),
                                                                QStringLiteral("0")})
                                  << QStringLiteral("--orders must be");
        QTest::newRow("orders text")
            << with(targets + QStringList{QStringLiteral("--orders"), QStringLiteral("ten")})
            << QStringLiteral("--orders must be");
        QTest::newRow("copies 21")
            << with(targets + QStringList{QStringLiteral("--copies"), QStringLiteral("21")})
            << QStringLiteral("--copies must be");
        QTest::newRow("gap negative")
            << with(targets + QStringList{QStringLiteral("--gap-ms"), QStringLiteral("-1")})
            << QStringLiteral("--gap-ms must be");
        QTest::newRow("rate negative")
            << with(targets + QStringList{QStringLiteral("--rate"), QStringLiteral("-5")})
            << QStringLiteral("--rate must be");
        QTest::newRow("rate nan") << with(targets + QStringList{QStringLiteral("--rate"),
                                                                QStringLiteral("nan")})
                                  << QStringLiteral("--rate must be");
        QTest::newRow("attempts 0")
            << with(targets + QStringList{QStringLiteral("--max-attempts"), QStringLiteral("0")})
            << QStringLiteral("--max-attempts must be");
        QTest::newRow("pattern") << with(targets + QStringList{QStringLiteral("--pattern"),
                                                               QStringLiteral("burst")})
                                 << QStringLiteral("--pattern must be");
        QTest::newRow("channel") << with(targets + QStringList{QStringLiteral("--channel"),
                                                               QStringLiteral("paypal")})
                                 << QStringLiteral("--channel must be");
        QTest::newRow("keys missing")
            << with(targets + QStringList{QStringLiteral("--channel"), QStringLiteral("wechatpay"),
                                          QStringLiteral("--keys-dir"),
                                          QStringLiteral("/nonexistent/keys")})
            << QStringLiteral("wechatpay-platform-private.pem");
        QTest::newRow("forged beyond orders")
            << with(targets + QStringList{QStringLiteral("--orders"), QStringLiteral("2"),
                                          QStringLiteral("--forged"), QStringLiteral("3")})
            << QStringLiteral("forged deliveries must be");
        QTest::newRow("secret missing")
            << QStringList{QStringLiteral("storm"), QStringLiteral("--targets"), live}
            << QStringLiteral("--secret-file is required");
        QTest::newRow("secret unreadable")
            << QStringList{QStringLiteral("storm"), QStringLiteral("--targets"), live,
                           QStringLiteral("--secret-file"), QStringLiteral("/nonexistent/secret")}
            << QStringLiteral("cannot read the secret file");
        // Anyone who reads the secret can sign a callback: a file others may read is refused.
        static QTemporaryDir dir;
        const QString open = dir.filePath(QStringLiteral("secret"));
        QFile openFile(open);
        if (!openFile.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                     QFileDevice::ReadGroup |
                                                     QFileDevice::ReadOther) ||
            openFile.write(test::testSecret()) < 0)
            qFatal("cannot write %s", qPrintable(open));
        openFile.close();
        QTest::newRow("secret open to others")
            << QStringList{QStringLiteral("storm"), QStringLiteral("--targets"), live,
                           QStringLiteral("--secret-file"), open}
            << QStringLiteral("is open to other users (mode 0644)");
        QTest::newRow("no db") << QStringList{QStringLiteral("storm"), QStringLiteral("--targets"),
                                              live, QStringLiteral("--secret-file"), secret}
                               << QStringLiteral("PAYOPS_DB");
    }

    void flagErrorsExitTwo()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const test::CliRun run = test::runCli(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }

    // A platform retries any non-2xx or no answer with back-off; through a load balancer the
    // retry may reach another instance.
    void retriesAreSentAndCounted()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_retry"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        test::CallbackdProcess live(scratch.dsn(), QStringLiteral("safe"), QStringLiteral("A"));
        const Endpoint unavailable(503);
        const QStringList targets{target(unavailable.port()), target(live.port())};
        const QStringList plan{QStringLiteral("--create-orders"),
                               QStringLiteral("--orders"),
                               QStringLiteral("10"),
                               QStringLiteral("--copies"),
                               QStringLiteral("1"),
                               QStringLiteral("--pattern"),
                               QStringLiteral("gap")};

        // Orders 0, 2, 4, ... go to the 503 first: without retries they are never paid.
        const test::CliRun once = storm(scratch.dsn(), targets, plan);
        QCOMPARE(once.exitCode, 1);
        QCOMPARE(figure(once.out, QStringLiteral("5xx")), qint64(5));
        QCOMPARE(figure(once.out, QStringLiteral("never 2xx")), qint64(5));
        QCOMPARE(figure(once.out, QStringLiteral("retries")), qint64(0));
        QVERIFY2(once.err.contains(QStringLiteral("5 callback(s) never got a 2xx")),
                 qPrintable(once.err));

        // With retries each 503 is tried again, on the next target, and every order is paid.
        const test::CliRun retried =
            storm(scratch.dsn(), targets, plan + QStringList{QStringLiteral("--retry-5xx")});
        QVERIFY2(retried.exitCode == 0, qPrintable(retried.out + retried.err));
        QCOMPARE(figure(retried.out, QStringLiteral("5xx")), qint64(5));
        QCOMPARE(figure(retried.out, QStringLiteral("retries")), qint64(5));
        QCOMPARE(figure(retried.out, QStringLiteral("sent")), qint64(15));
        QCOMPARE(figure(retried.out, QStringLiteral("never 2xx")), qint64(0));
        QCOMPARE(unavailable.requests(), 10);

        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        // Both runs created 10 orders: the first paid half of its own, the second all of its own.
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")),
                 qint64(15));
        QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PENDING'")),
                 qint64(5));

        // No answer at all: tried maxAttempts times, then given up.
        const test::CliRun dead = storm(
            scratch.dsn(), {target(closedPort())},
            {QStringLiteral("--create-orders"), QStringLiteral("--orders"), QStringLiteral("2"),
             QStringLiteral("--copies"), QStringLiteral("1"), QStringLiteral("--retry-5xx"),
             QStringLiteral("--max-attempts"), QStringLiteral("3")});
        QCOMPARE(dead.exitCode, 1);
        QCOMPARE(figure(dead.out, QStringLiteral("no answer")), qint64(6));
        QCOMPARE(figure(dead.out, QStringLiteral("retries")), qint64(4));
        QCOMPARE(figure(dead.out, QStringLiteral("never 2xx")), qint64(2));
    }

    // Ctrl-C stops a long storm between two requests, with a summary and exit 1.
    void interruptStopsTheStorm()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_stop"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        const Endpoint unavailable(503);
        QProcess storm;
        storm.start(test::cliPath(),
                    stormArguments(scratch.dsn(), {target(unavailable.port())},
                                   {QStringLiteral("--create-orders"), QStringLiteral("--orders"),
                                    QStringLiteral("200"), QStringLiteral("--rate"),
                                    QStringLiteral("10")}));
        QVERIFY(storm.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(unavailable.requests() >= 4, 15000);
        QElapsedTimer stopping;
        stopping.start();
        ::kill(static_cast<pid_t>(storm.processId()), SIGINT);
        QVERIFY(storm.waitForFinished(10000));
        QVERIFY2(stopping.elapsed() < 3000, qPrintable(QString::number(stopping.elapsed())));
        QCOMPARE(storm.exitStatus(), QProcess::NormalExit);
        QCOMPARE(storm.exitCode(), 1);
        const QString out = QString::fromUtf8(storm.readAllStandardOutput());
        QVERIFY2(out.startsWith(QStringLiteral("stopped mixed storm")), qPrintable(out));
        const qint64 sent = figure(out, QStringLiteral("sent"));
        QVERIFY2(sent >= 4 && sent < 200, qPrintable(out));
    }

    // The patterns, seen from the receiving end: the concurrent copies together, the gap's
    // apart by --gap-ms, the replay's seconds later; each copy signed, one pay_no per order.
    void patternsShapeTheDeliveries()
    {
        test::ScratchDatabase scratch(QStringLiteral("storm_patterns"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        const Endpoint endpoint(200);
        const test::CliRun run =
            storm(scratch.dsn(), {target(endpoint.port())},
                  {QStringLiteral("--create-orders"), QStringLiteral("--orders"),
                   QStringLiteral("3"), QStringLiteral("--copies"), QStringLiteral("2"),
                   QStringLiteral("--gap-ms"), QStringLiteral("300")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));

        // mixed: the storm's orders in turn are concurrent, gap, replay.
        QMap<qint64, QList<qint64>> arrivalsByOrder;
        QMap<qint64, QSet<QString>> payNos;
        for (const Endpoint::Arrival &arrival : endpoint.arrivals()) {
            QCOMPARE(verifySignature(test::testSecret(), arrival.timestamp, arrival.signature,
                                     arrival.body, QDateTime::currentSecsSinceEpoch()),
                     SignatureCheck::Valid);
            QString error;
            const auto request = CallbackRequest::parse(arrival.body, &error);
            QVERIFY2(request, qPrintable(error));
            QVERIFY(request->isSuccess());
            arrivalsByOrder[request->orderId] << arrival.atMs;
            payNos[request->orderId] << QString::fromUtf8(request->payNo);
        }
        QCOMPARE(arrivalsByOrder.size(), 3);
        const QList<qint64> orders = arrivalsByOrder.keys(); // created in this order: ids ascend
        for (qint64 order : orders) {
            QCOMPARE(arrivalsByOrder.value(order).size(), 2);
            QCOMPARE(payNos.value(order).size(), 1);
        }
        auto spread = [&](qint64 order) {
            const QList<qint64> at = arrivalsByOrder.value(order);
            return std::abs(at.at(1) - at.at(0));
        };
        QVERIFY2(spread(orders.at(0)) < 150, qPrintable(QString::number(spread(orders.at(0)))));
        // Bounds with room for a loaded machine, where the first copy may leave a little late.
        QVERIFY2(spread(orders.at(1)) >= 200 && spread(orders.at(1)) < 1500,
                 qPrintable(QString::number(spread(orders.at(1)))));
        QVERIFY2(spread(orders.at(2)) >= kStormReplayDelayMs - 500 && spread(orders.at(2)) < 6000,
                 qPrintable(QString::number(spread(orders.at(2)))));

        // The amounts are the orders' own: a callback for another amount would pay nothing.
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        for (const Endpoint::Arrival &arrival : endpoint.arrivals()) {
            QString error;
            const auto request = CallbackRequest::parse(arrival.body, &error);
            QCOMPARE(db::scalar(connection.database(),
                                QStringLiteral("SELECT amount_fen FROM orders WHERE id = ?"),
                                {request->orderId})
                         .toLongLong(),
                     request->amountFen);
        }
    }

    // The core alone: the plan is checked before anything is sent.
    void invalidPlansAreRefused()
    {
        StormPlan plan;
        plan.secret = test::testSecret();
        plan.targets = {QStringLiteral("http://127.0.0.1:1")};
        QCOMPARE(validateStormPlan(plan), QString());
        plan.copies = 0;
        QVERIFY(validateStormPlan(plan).contains(QStringLiteral("copies")));
        plan.copies = 2;
        plan.targets = {QStringLiteral("ftp://127.0.0.1:21")};
        QVERIFY(validateStormPlan(plan).contains(QStringLiteral("http://")));
        plan.targets = {QStringLiteral("http://127.0.0.1:1")};
        plan.secret.clear();
        QVERIFY(!validateStormPlan(plan).isEmpty());
        const std::atomic<bool> stop{false};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runStorm(plan, {1}, {}, stop));
        // An order whose amount nobody read cannot be signed truthfully.
        plan.secret = test::testSecret();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runStorm(plan, {987654321}, {}, stop));
        QCOMPARE(parseStormPattern(QStringLiteral("replay")), std::optional(StormPattern::Replay));
        QCOMPARE(parseStormPattern(QStringLiteral("Replay")), std::nullopt);
    }
};

PAYOPS_TEST_MAIN_CORE(TestStorm)
#include "tst_storm.moc"
