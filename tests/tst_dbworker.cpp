#include "db/connection.h"
#include "db/dbworker.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QElapsedTimer>
#include <QSignalSpy>

using namespace payops;

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
            QStringLiteral("slow"), [](const QSqlDatabase &db) { return db::scalar(db, QStringLiteral("SELECT SLEEP(60)")).toInt(); },
            &receiver, [&](const int &) { finished = true; }, [&](const db::Error &) { finished = true; });
        // Wait until the server runs it, then cancel from this thread without blocking it.
        QTRY_VERIFY_WITH_TIMEOUT(worker.serverConnectionId() != 0, 10000);
        const qint64 id = worker.serverConnectionId();
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("t"));
            QTRY_VERIFY_WITH_TIMEOUT(db::scalar(admin.database(), QStringLiteral(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'"),
                {id}).toInt() == 1, 10000);
        }
        worker.cancel(QStringLiteral("slow"));
        // The cancelled job's result is stale and dropped; a new job on the same worker runs
        // at once, which proves the sleep was interrupted and the session survived.
        worker.submit<int>(
            QStringLiteral("next"), [](const QSqlDatabase &db) { return db::scalar(db, QStringLiteral("SELECT 7")).toInt(); },
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
                key, [value](const QSqlDatabase &db) { return db::scalar(db, QStringLiteral("SELECT ?"), {value}).toInt(); },
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
            QStringLiteral("c"), [](const QSqlDatabase &db) { return db::scalar(db, QStringLiteral("SELECT SLEEP(0.2)")).toInt(); },
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
                QStringLiteral("q"), [](const QSqlDatabase &db) { return db::scalar(db, QStringLiteral("SELECT 1")).toInt(); },
                &receiver, [&](const int &) { ++answers; }, [&](const db::Error &e) { lastError = e.message(); });
        };
        ask();
        QTRY_COMPARE_WITH_TIMEOUT(answers, 1, 10000);
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("t"));
            db::execDirect(admin.database(), QStringLiteral("KILL %1").arg(worker.serverConnectionId()));
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
};

PAYOPS_TEST_MAIN_CORE(TestDbWorker)
#include "tst_dbworker.moc"
