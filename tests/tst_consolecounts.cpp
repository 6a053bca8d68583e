// The counts the overview and the backlog page keep between refreshes: each equals the plain
// SQL count after every step, and a refresh with nothing new reads a handful of rows however
// large the counted set is (the server's own Handler_read counters, not a timing).

#include "callbackfixture.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include "bulkdata.h"
#include "console/backlog.h"
#include "console/overview.h"
#include "db/connection.h"
#include "domain/callback/callbackswitch.h"
#include "domain/money/auditlog.h"

#include <QThread>

using namespace payops;

namespace {

qint64 scalar(const QSqlDatabase &db, const QString &sql, const QVariantList &binds = {})
{
    return db::scalar(db, sql, binds).toLongLong();
}

// `count` callbacks with created_at `secondsAgo` before the server's now; status as given.
void insertCallbacks(const QSqlDatabase &db, int count, int secondsAgo, const QString &status,
                     int &serial)
{
    for (int i = 0; i < count; ++i, ++serial) {
        db::exec(
            db,
            QStringLiteral(
                "INSERT INTO pay_callback_log (pay_no, order_id, raw_body, amount_fen, currency, "
                "status, created_at) "
                "VALUES (?, ?, '{}', ?, 'CNY', ?, UTC_TIMESTAMP(3) - INTERVAL ? SECOND)"),
            {QStringLiteral("P%1").arg(serial), 100000 + serial, 100 + serial, status, secondsAgo});
    }
}

// What the tally promises, by plain SQL: rows whose created_at falls in the 60 whole seconds
// up to and including `lastSecond`.
qint64 plainLastMinute(const QSqlDatabase &db, qint64 lastSecond)
{
    return scalar(db,
                  QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE "
                                 "TIMESTAMPDIFF(SECOND, '1970-01-01', created_at) BETWEEN ? AND ?"),
                  {lastSecond - console::RecentCallbackCount::kWindowSeconds + 1, lastSecond});
}

} // namespace

class TestConsoleCounts final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lastMinuteEqualsPlainSqlAndReadsWhatIsNew()
    {
        test::ScratchDatabase scratch(QStringLiteral("counts_minute"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        int serial = 0;
        insertCallbacks(db, 3000, 30, QStringLiteral("PROCESSED"), serial); // inside the window
        insertCallbacks(db, 500, 120, QStringLiteral("PROCESSED"), serial); // before it
        insertCallbacks(db, 200, 2, QStringLiteral("PROCESSED"), serial);

        console::RecentCallbackCount tally;
        console::RecentCallbackCount::Count count = tally.advance(db);
        QCOMPARE(count.callbacks, plainLastMinute(db, count.lastSecond));
        QVERIFY(count.callbacks >= 3200);

        // New rows, and rows that became visible late (created a few seconds ago, committed now).
        for (int step = 0; step < 3; ++step) {
            insertCallbacks(db, 50, 0, QStringLiteral("PROCESSED"), serial);
            insertCallbacks(db, 20, 3, QStringLiteral("PROCESSED"), serial);
            const qint64 before = bench::sessionRowsRead(db);
            count = tally.advance(db);
            const qint64 read = bench::sessionRowsRead(db) - before;
            QCOMPARE(count.callbacks, plainLastMinute(db, count.lastSecond));
            // The settling seconds and what is new, not the 3,000 rows of the minute.
            QVERIFY2(read < 1000, qPrintable(QStringLiteral("%1 rows read").arg(read)));
            QThread::msleep(400);
        }
    }

    void backlogIsCountedAgainOnlyWhenItCanHaveChanged()
    {
        test::ScratchDatabase scratch(QStringLiteral("counts_backlog"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("legacy"), 0);
        db::Connection connection(scratch.dsn(), QStringLiteral("t"));
        const QSqlDatabase db = connection.database();
        int serial = 0;
        insertCallbacks(db, 5000, 600, QStringLiteral("RECORDED"), serial);
        insertCallbacks(db, 100, 600, QStringLiteral("PROCESSED"), serial);
        const auto plain = [&db] {
            return scalar(
                db,
                QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE status = 'RECORDED'"));
        };

        console::BacklogTally tally;
        console::BacklogTally::Count count = tally.advance(db);
        QVERIFY(count.recounted);
        QCOMPARE(count.recorded, qint64(5000));
        QCOMPARE(
            count.amountFen,
            scalar(db,
                   QStringLiteral(
                       "SELECT SUM(amount_fen) FROM pay_callback_log WHERE status = 'RECORDED'")));

        // NORMAL and no drain since: the count stands, for a one-row read.
        const qint64 before = bench::sessionRowsRead(db);
        count = tally.advance(db);
        const qint64 read = bench::sessionRowsRead(db) - before;
        QVERIFY(!count.recounted);
        QCOMPARE(count.recorded, qint64(5000));
        QVERIFY2(read < 20, qPrintable(QStringLiteral("%1 rows read").arg(read)));

        // A drain: rows leave the backlog and its audit entry appears.
        db::exec(db, QStringLiteral("UPDATE pay_callback_log SET status = 'PROCESSED' WHERE status "
                                    "= 'RECORDED' LIMIT 1200"));
        appendAudit(db, QStringLiteral("backlog.drain"), QStringLiteral("pay_callback_log"),
                    QStringLiteral("test"), QString(), QString(), QString());
        count = tally.advance(db);
        QVERIFY(count.recounted);
        QCOMPARE(count.recorded, plain());

        // RECORD_ONLY: the backlog grows at every refresh, so every refresh counts it.
        flipSwitch(db, CallbackMode::RecordOnly, QStringLiteral("test"));
        insertCallbacks(db, 30, 0, QStringLiteral("RECORDED"), serial);
        count = tally.advance(db);
        QVERIFY(count.recounted);
        QCOMPARE(count.recorded, plain());
        insertCallbacks(db, 30, 0, QStringLiteral("RECORDED"), serial);
        QCOMPARE(tally.advance(db).recorded, plain());

        // Flipped back: counted once more, after the flip, and then it stands.
        flipSwitch(db, CallbackMode::Normal, QStringLiteral("test"));
        count = tally.advance(db);
        QVERIFY(count.recounted);
        QCOMPARE(count.recorded, plain());
        QVERIFY(!tally.advance(db).recounted);
    }
};

PAYOPS_TEST_MAIN_CORE(TestConsoleCounts)
#include "tst_consolecounts.moc"
