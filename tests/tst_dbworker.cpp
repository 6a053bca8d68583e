#include "db/connection.h"
#include "db/dbworker.h"
#include "db/jobtracker.h"
#include "demodatabase.h"
#include "frozenserver.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSemaphore>
#include <QSignalSpy>
#include <QThread>

#include <atomic>
#include <memory>
#include <stdexcept>

using namespace payops;

namespace {

// KILL statements the server has run since it started, from any session.
qint64 killsSoFar(const Dsn &dsn)
{
    return test::count(dsn,
                       QStringLiteral("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                                      "WHERE VARIABLE_NAME = 'COM_KILL'"));
}

// A standalone job that runs until its stop flag is raised or `release` is, and says which.
std::function<int(const db::StandaloneContext &)>
waitingJob(std::shared_ptr<std::atomic_bool> release, std::shared_ptr<std::atomic_bool> sawStop)
{
    return [release, sawStop](const db::StandaloneContext &context) {
        QDeadlineTimer limit(30000);
        while (!context.stop.load() && !release->load() && !limit.hasExpired())
            QThread::msleep(5);
        sawStop->store(context.stop.load());
        return 1;
    };
}

} // namespace

class TestDbWorker final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cancelKillsTheRunningQuery()
    {
        test::ScratchDatabase scratch;
        db::DbWorker worker(scratch.dsn());
        bool finished = false;
        bool cancelled = false;
        QObject receiver;
        QElapsedTimer clock;
        clock.start();
        worker.submit<int>(
            QStringLiteral("slow"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(60)")).toInt();
            },
            &receiver, [&](const int &) { finished = true; },
            [&](const db::Error &) { finished = true; });
        // Wait until the server runs it, then cancel from this thread without blocking it.
        QTRY_VERIFY_WITH_TIMEOUT(worker.serverConnectionId() != 0, 10000);
        const qint64 id = worker.serverConnectionId();
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("t"));
            QTRY_VERIFY_WITH_TIMEOUT(
                db::scalar(admin.database(),
                           QStringLiteral("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                          "WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'"),
                           {id})
                        .toInt() == 1,
                10000);
        }
        worker.cancel(QStringLiteral("slow"));
        // The cancelled job's result is stale and dropped; a new job on the same worker runs
        // at once, which proves the sleep was interrupted and the session survived.
        worker.submit<int>(
            QStringLiteral("next"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 7")).toInt();
            },
            &receiver, [&](const int &value) { cancelled = value == 7; }, [](const db::Error &) {});
        QTRY_VERIFY_WITH_TIMEOUT(cancelled, 20000);
        QVERIFY2(clock.elapsed() < 30000, "the slow query was not interrupted");
        QVERIFY(!finished);
        QCOMPARE(worker.serverConnectionId(), id);
    }

    void aNewerRequestMakesTheOlderStale()
    {
        test::ScratchDatabase scratch;
        db::DbWorker worker(scratch.dsn());
        QObject receiver;
        QList<int> delivered;
        const auto ask = [&](int value, const QString &key) {
            worker.submit<int>(
                key,
                [value](const QSqlDatabase &db) {
                    return db::scalar(db, QStringLiteral("SELECT ?"), {value}).toInt();
                },
                &receiver, [&](const int &v) { delivered << v; }, [](const db::Error &) {});
        };
        ask(1, QStringLiteral("a"));
        ask(2, QStringLiteral("a"));
        ask(3, QStringLiteral("b")); // another key is not affected
        QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), 2, 10000);
        QCOMPARE(delivered, QList<int>({2, 3}));

        // A receiver that is gone gets nothing, and nothing crashes.
        auto *gone = new QObject;
        bool called = false;
        worker.submit<int>(
            QStringLiteral("c"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(0.2)")).toInt();
            },
            gone, [&](const int &) { called = true; }, [&](const db::Error &) { called = true; });
        delete gone;
        ask(4, QStringLiteral("d"));
        QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), 3, 10000);
        QVERIFY(!called);
    }

    void aLostConnectionIsReportedAndReopened()
    {
        test::ScratchDatabase scratch;
        db::DbWorker worker(scratch.dsn());
        QSignalSpy lost(&worker, &db::DbWorker::connectionLost);
        QSignalSpy restored(&worker, &db::DbWorker::connectionRestored);
        QObject receiver;
        int answers = 0;
        QString lastError;
        const auto ask = [&] {
            worker.submit<int>(
                QStringLiteral("q"),
                [](const QSqlDatabase &db) {
                    return db::scalar(db, QStringLiteral("SELECT 1")).toInt();
                },
                &receiver, [&](const int &) { ++answers; },
                [&](const db::Error &e) { lastError = e.message(); });
        };
        ask();
        QTRY_COMPARE_WITH_TIMEOUT(answers, 1, 10000);
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("t"));
            db::execDirect(admin.database(),
                           QStringLiteral("KILL %1").arg(worker.serverConnectionId()));
        }
        ask();
        QTRY_COMPARE_WITH_TIMEOUT(lost.size(), 1, 10000);
        // connectionLost is emitted on the worker thread; the error reaches the receiver by a
        // queued call after it.
        QTRY_VERIFY_WITH_TIMEOUT(!lastError.isEmpty(), 10000);
        ask();
        QTRY_COMPARE_WITH_TIMEOUT(answers, 2, 10000);
        QCOMPARE(restored.size(), 1);
    }

    // A cancel of one key never interrupts the job of another: here job A has ended and job
    // B runs when A is cancelled; B's result arrives and no KILL is sent.
    void aCancelAfterItsJobEndedKillsNothingLater()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        db::DbWorker worker(dsn);
        QObject receiver;
        int a = 0;
        int b = 0;
        QString errors;
        const auto noteError = [&](const db::Error &e) { errors += e.message(); };
        worker.submit<int>(
            QStringLiteral("a"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 1")).toInt();
            },
            &receiver, [&](const int &value) { a = value; }, noteError);
        QTRY_COMPARE_WITH_TIMEOUT(a, 1, 10000);
        worker.submit<int>(
            QStringLiteral("b"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(1.5) + 7")).toInt();
            },
            &receiver, [&](const int &value) { b = value; }, noteError);
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(dsn, QStringLiteral("SELECT SLEEP%")), 10000);
        const qint64 kills = killsSoFar(dsn);
        worker.cancel(QStringLiteral("a"));
        QTRY_VERIFY_WITH_TIMEOUT(b != 0 || !errors.isEmpty(), 10000);
        QCOMPARE(errors, QString());
        QCOMPARE(b, 7);
        QCOMPARE(killsSoFar(dsn), kills);
    }

    // The race the kill lock closes: a kill decided while job 1 ran reaches the server only
    // after job 1 ended and job 2 started in the same session. It must not interrupt job 2;
    // a kill meant for job 2 does.
    void aKillMeantForAnEndedJobNeverLandsOnTheNext()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        QAtomicInteger<qint64> sessionId = 0;
        QSemaphore go;
        QList<int> results; // read after the thread is over
        // The session runs on a thread of its own, as a worker's does, one statement per go.
        std::unique_ptr<QThread> session(QThread::create([&] {
            db::Connection connection(dsn, QStringLiteral("session"));
            sessionId.storeRelease(connection.serverConnectionId());
            for (const auto *sql : {"SELECT SLEEP(1) + 7", "SELECT SLEEP(20) + 7"}) {
                go.acquire();
                try {
                    results << db::scalar(connection.database(), QString::fromLatin1(sql)).toInt();
                } catch (const db::Error &error) {
                    results << (db::DbWorker::isCancelled(error) ? -1 : -2);
                }
            }
        }));
        session->start();
        const auto stop = qScopeGuard([&] { // also when a check fails half-way
            go.release(2);
            session->wait();
        });
        QTRY_VERIFY_WITH_TIMEOUT(sessionId.loadAcquire() != 0, 10000);
        db::JobTracker tracker;
        tracker.setConnectionId(sessionId.loadAcquire());
        QVERIFY(tracker.start(1, QStringLiteral("k"), tracker.nextGeneration(QStringLiteral("k"))));
        const auto running = tracker.cancel(QStringLiteral("k"));
        QVERIFY(running.has_value());
        QCOMPARE(running->jobId, quint64(1));
        QCOMPARE(running->connectionId, sessionId.loadAcquire());
        tracker.finish(1);
        QVERIFY(tracker.start(2, QStringLiteral("k"), tracker.nextGeneration(QStringLiteral("k"))));
        go.release();
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(dsn, QStringLiteral("SELECT SLEEP(1)%")),
                                 10000);

        db::Connection killer(dsn, QStringLiteral("killer"));
        const qint64 kills = killsSoFar(dsn);
        tracker.killIfRunning(killer.database(), 1);
        QCOMPARE(killsSoFar(dsn), kills);

        go.release();
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(dsn, QStringLiteral("SELECT SLEEP(20)%")),
                                 10000);
        tracker.killIfRunning(killer.database(), 2);
        QVERIFY(session->wait(10000));
        QCOMPARE(killsSoFar(dsn), kills + 1);
        QCOMPARE(results.value(0), 7); // job 2's first statement, untouched
        QVERIFY2(results.value(1) != 7,
                 "the kill meant for the running job did not land"); // -1, or 8 from SLEEP's 1
    }

    // Whatever a job throws arrives at onError as a db::Error, and the worker goes on.
    void anExceptionOfAnyKindArrivesAsAnError()
    {
        test::ScratchDatabase scratch;
        db::DbWorker worker(scratch.dsn());
        QObject receiver;
        QStringList errors;
        int after = 0;
        const auto noteError = [&](const db::Error &e) { errors << e.message(); };
        worker.submit<int>(
            QStringLiteral("std"),
            [](const QSqlDatabase &) -> int { throw std::runtime_error("the disk is full"); },
            &receiver, [](const int &) {}, noteError);
        worker.submit<int>(
            QStringLiteral("other"), [](const QSqlDatabase &) -> int { throw 42; }, &receiver,
            [](const int &) {}, noteError);
        worker.submit<int>(
            QStringLiteral("after"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 5")).toInt();
            },
            &receiver, [&](const int &value) { after = value; }, noteError);
        QTRY_COMPARE_WITH_TIMEOUT(after, 5, 10000);
        QCOMPARE(errors.size(), 2);
        QCOMPARE(errors.at(0), QStringLiteral("the disk is full"));
        QVERIFY(!errors.at(1).isEmpty());
    }

    // Deleting a worker whose query hangs on a frozen server returns at once; the wait at
    // exit gives up at its deadline; once the server runs again, the kill sent meanwhile ends
    // the query, and the thread and its connection go.
    void deletingAWorkerNeverWaitsForAFrozenServer()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        auto worker = std::make_unique<db::DbWorker>(dsn);
        QObject receiver;
        bool called = false;
        worker->submit<int>(
            QStringLiteral("slow"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT SLEEP(30)")).toInt();
            },
            &receiver, [&](const int &) { called = true; },
            [&](const db::Error &) { called = true; });
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(dsn, QStringLiteral("SELECT SLEEP(30)%")),
                                 10000);
        const qint64 session = worker->serverConnectionId();
        {
            test::FrozenServer frozen;
            QElapsedTimer clock;
            clock.start();
            worker.reset();
            const qint64 deleteMs = clock.elapsed();
            QVERIFY2(deleteMs < test::busyLimitMs(100),
                     qPrintable(QStringLiteral("deleting the worker took %1 ms").arg(deleteMs)));
            clock.restart();
            QVERIFY(!db::DbWorker::waitForAll(QDeadlineTimer(500)));
            QVERIFY2(
                clock.elapsed() < 1500,
                qPrintable(QStringLiteral("the bounded wait took %1 ms").arg(clock.elapsed())));
        }
        QVERIFY(db::DbWorker::waitForAll(QDeadlineTimer(20000)));
        QCOMPARE(test::count(
                     dsn, QStringLiteral(
                              "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %1")
                              .arg(session)),
                 qint64(0));
        QCoreApplication::processEvents();
        QVERIFY(!called);
    }

    // A standalone job opens its own connection with the worker's DSN; the worker's own is
    // never opened for it, and a standalone failure is no lost connection of the worker's.
    void aStandaloneJobUsesItsOwnConnection()
    {
        test::ScratchDatabase scratch;
        db::DbWorker worker(scratch.dsn());
        QSignalSpy lost(&worker, &db::DbWorker::connectionLost);
        QObject receiver;
        qint64 session = 0;
        QString error;
        worker.submitStandalone<qint64>(
            QStringLiteral("own"),
            [](const db::StandaloneContext &context) {
                db::Connection connection(context.dsn, QStringLiteral("standalone"));
                return connection.serverConnectionId();
            },
            &receiver, [&](const qint64 &id) { session = id; },
            [&](const db::Error &e) { error = e.message(); });
        QTRY_VERIFY_WITH_TIMEOUT(session != 0 || !error.isEmpty(), 10000);
        QCOMPARE(error, QString());
        QCOMPARE(worker.serverConnectionId(), qint64(0));
        // Its connection is closed once it returns.
        QTRY_COMPARE_WITH_TIMEOUT(
            test::count(
                scratch.dsn(),
                QStringLiteral("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %1")
                    .arg(session)),
            qint64(0), 10000);

        Dsn nowhere = scratch.dsn();
        nowhere.database = QStringLiteral("no_such_database_here");
        worker.submitStandalone<int>(
            QStringLiteral("own"),
            [nowhere](const db::StandaloneContext &) {
                db::Connection connection(nowhere, QStringLiteral("standalone"));
                return 1;
            },
            &receiver, [](const int &) {}, [&](const db::Error &e) { error = e.message(); });
        QTRY_VERIFY_WITH_TIMEOUT(!error.isEmpty(), 10000);
        // The worker's own connection goes on as if nothing happened.
        int answer = 0;
        worker.submit<int>(
            QStringLiteral("q"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 3")).toInt();
            },
            &receiver, [&](const int &value) { answer = value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(answer, 3, 10000);
        QCOMPARE(lost.size(), 0);
    }

    // A standalone job's result is dropped when its receiver is gone, and when a newer job of
    // its key came, whose stop flag the older sees.
    void aStandaloneResultIsDroppedWhenStale()
    {
        db::DbWorker worker(Dsn{});
        auto *gone = new QObject;
        QObject receiver;
        bool goneCalled = false;
        const auto release = std::make_shared<std::atomic_bool>(false);
        const auto goneSawStop = std::make_shared<std::atomic_bool>(false);
        worker.submitStandalone<int>(
            QStringLiteral("a"), waitingJob(release, goneSawStop), gone,
            [&](const int &) { goneCalled = true; }, [&](const db::Error &) { goneCalled = true; });
        delete gone;
        release->store(true);

        const auto olderStarted = std::make_shared<std::atomic_bool>(false);
        const auto olderSawStop = std::make_shared<std::atomic_bool>(false);
        QList<int> delivered;
        worker.submitStandalone<int>(
            QStringLiteral("b"),
            [olderStarted, job = waitingJob(std::make_shared<std::atomic_bool>(false),
                                            olderSawStop)](const db::StandaloneContext &context) {
                olderStarted->store(true);
                return job(context);
            },
            &receiver, [&](const int &) { delivered << 1; }, [](const db::Error &) {});
        QTRY_VERIFY_WITH_TIMEOUT(olderStarted->load(), 10000);
        worker.submitStandalone<int>(
            QStringLiteral("b"),
            [](const db::StandaloneContext &context) { return context.stop.load() ? -1 : 2; },
            &receiver, [&](const int &value) { delivered << value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), 1, 10000);
        QCOMPARE(delivered, QList<int>({2}));
        QVERIFY(olderSawStop->load());
        QVERIFY(!goneSawStop->load()); // a receiver's end is no stop: the job ran to its release
        QVERIFY(!goneCalled);
    }

    // cancel(key) raises the stop flag of the running standalone job, drops its result and
    // sends no KILL QUERY: the job runs in no session of the worker's.
    void cancelStopsAStandaloneJob()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        db::DbWorker worker(dsn);
        QObject receiver;
        // The worker's own connection is open, so that a kill would have a session to aim at.
        int answer = 0;
        worker.submit<int>(
            QStringLiteral("q"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 3")).toInt();
            },
            &receiver, [&](const int &value) { answer = value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(answer, 3, 10000);
        const auto started = std::make_shared<std::atomic_bool>(false);
        const auto sawStop = std::make_shared<std::atomic_bool>(false);
        bool called = false;
        worker.submitStandalone<int>(
            QStringLiteral("long"),
            [started, job = waitingJob(std::make_shared<std::atomic_bool>(false), sawStop)](
                const db::StandaloneContext &context) {
                started->store(true);
                return job(context);
            },
            &receiver, [&](const int &) { called = true; },
            [&](const db::Error &) { called = true; });
        QTRY_VERIFY_WITH_TIMEOUT(started->load(), 10000);
        const qint64 kills = killsSoFar(dsn);
        QElapsedTimer clock;
        clock.start();
        worker.cancel(QStringLiteral("long"));
        QVERIFY2(clock.elapsed() < test::busyLimitMs(100), "cancel waited");
        answer = 0;
        worker.submit<int>(
            QStringLiteral("q"),
            [](const QSqlDatabase &db) {
                return db::scalar(db, QStringLiteral("SELECT 4")).toInt();
            },
            &receiver, [&](const int &value) { answer = value; }, [](const db::Error &) {});
        QTRY_COMPARE_WITH_TIMEOUT(answer, 4, 20000);
        QVERIFY(sawStop->load());
        QVERIFY(!called);
        QCOMPARE(killsSoFar(dsn), kills);
    }

    // Deleting a worker whose standalone job runs returns at once and raises its stop flag;
    // the wait at exit covers the job: it ends before that wait says all ended.
    void theExitWaitCoversAStandaloneJob()
    {
        auto worker = std::make_unique<db::DbWorker>(Dsn{});
        QObject receiver;
        const auto started = std::make_shared<std::atomic_bool>(false);
        const auto sawStop = std::make_shared<std::atomic_bool>(false);
        const auto ended = std::make_shared<std::atomic_bool>(false);
        bool called = false;
        worker->submitStandalone<int>(
            QStringLiteral("long"),
            [started, sawStop, ended](const db::StandaloneContext &context) {
                started->store(true);
                // Sees the stop, then takes its time to wind down, as a storm's last request does.
                QDeadlineTimer limit(30000);
                while (!context.stop.load() && !limit.hasExpired())
                    QThread::msleep(5);
                sawStop->store(context.stop.load());
                QThread::msleep(1500);
                ended->store(true);
                return 1;
            },
            &receiver, [&](const int &) { called = true; },
            [&](const db::Error &) { called = true; });
        QTRY_VERIFY_WITH_TIMEOUT(started->load(), 10000);
        QElapsedTimer clock;
        clock.start();
        worker.reset();
        QVERIFY2(clock.elapsed() < test::busyLimitMs(100),
                 "deleting the worker waited for its job");
        QVERIFY(!db::DbWorker::waitForAll(QDeadlineTimer(200)));
        QVERIFY(!ended->load());
        QVERIFY(db::DbWorker::waitForAll(QDeadlineTimer(20000)));
        QVERIFY(ended->load());
        QVERIFY(sawStop->load());
        QCoreApplication::processEvents();
        QVERIFY(!called);
    }
};

PAYOPS_TEST_MAIN_CORE(TestDbWorker)
#include "tst_dbworker.moc"
