#include "callbackfixture.h"
#include "console/worker.h"
#include "db/connection.h"
#include "db/dbworker.h"
#include "db/migrator.h"
#include "demodatabase.h"
#include "dialogs/compensationdialog.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "frozenserver.h"
#include "mainwindow.h"
#include "models/duplicatemodel.h"
#include "pages/duplicatespage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/busyindicator.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProcess>
#include <QPushButton>
#include <QScopeGuard>
#include <QSocketNotifier>
#include <QTimer>

#include <unistd.h>

using namespace payops;

namespace {

// A 10 ms timer on the UI thread: the longest gap between its ticks is the longest the UI
// thread was held.
class StallProbe final
{
public:
    StallProbe()
    {
        m_timer.setInterval(10);
        QObject::connect(&m_timer, &QTimer::timeout, &m_timer, [this] {
            const qint64 now = m_clock.elapsed();
            m_worstGap = qMax(m_worstGap, now - m_last);
            m_last = now;
            ++m_ticks;
        });
    }
    Q_DISABLE_COPY_MOVE(StallProbe)

    void start()
    {
        m_clock.start();
        m_last = 0;
        m_worstGap = 0;
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    qint64 elapsed() const { return m_clock.elapsed(); }
    qint64 worstGap() const { return m_worstGap; }
    QTimer *timer() { return &m_timer; }
    // Runs the event loop until the probe has ticked `count` more times, so that a stall in
    // what was just done shows as a gap.
    bool ticks(int count)
    {
        const int until = m_ticks + count;
        return QTest::qWaitFor([this, until] { return m_ticks >= until; }, 10000);
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    qint64 m_worstGap = 0;
    int m_ticks = 0;
};

// A check, and so a macro: it returns from the test function when it fails.
#define QVERIFY_NO_STALL(probe)                                                                    \
    QVERIFY2(                                                                                      \
        (probe).worstGap() < test::busyLimitMs(100),                                               \
        qPrintable(QStringLiteral("the UI thread stalled for %1 ms").arg((probe).worstGap())))

const QString HangingSql = QStringLiteral("SELECT SLEEP(30)");

// Puts a query on `worker` (a db::DbWorker or a page's console::Worker) that runs 30 s on the
// server.
template <typename Worker> void hang(Worker *worker, QObject *receiver)
{
    worker->template submit<int>(
        QStringLiteral("hang"),
        [](const QSqlDatabase &db) { return db::scalar(db, HangingSql).toInt(); }, receiver,
        [](const int &) {}, [](const db::Error &) {});
}

void migrate(const Dsn &dsn)
{
    db::Connection c(dsn, QStringLiteral("t"));
    db::Migrator(c, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
}

// The console's exit, as its main() has it: a window on the database, declared after the
// application, and a query hanging on the server. The window closes when the parent writes a
// line (once it has frozen the server), as when a user closes it.
int runConsoleUntilClosed(int argc, char *argv[], const QString &dsnText)
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    QString error;
    const std::optional<Dsn> dsn = Dsn::parse(dsnText, &error);
    if (!dsn)
        qFatal("%s", qPrintable(error));
    MainWindow window(*dsn);
    window.show();
    hang(window.page(Page::OverviewId)->worker(), &window);
    QSocketNotifier input(STDIN_FILENO, QSocketNotifier::Read);
    QObject::connect(&input, &QSocketNotifier::activated, &window, [&window] { window.close(); });
    return app.exec();
}

const char *const ConsoleChildVariable = "PAYOPS_UISTALL_CONSOLE_DSN";

} // namespace

// The UI thread must never wait on the database: while the duplicates page scans a table of
// a million rows, a 10 ms timer on the UI thread must keep firing without a gap over 100 ms.
// Nor may it wait when it lets go of a worker whose query hangs on a frozen server.
class TestUiStall final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void scanOfAMillionRowsNeverStallsTheUi()
    {
        test::ScratchDatabase scratch;
        {
            db::Connection c(scratch.dsn(), QStringLiteral("t"));
            db::Migrator(c, checkMigrationRequirement).migrate(db::SchemaLevel::Legacy, true);
            const QSqlDatabase db = c.database();
            // A million coupons, generated on the server: 500,000 orders with two copies each.
            db::execDirect(db, QStringLiteral("CREATE TABLE seq (n INT NOT NULL PRIMARY KEY)"));
            db::execDirect(db,
                           QStringLiteral("INSERT INTO seq SELECT a.n + 10 * b.n + 100 * c.n FROM "
                                          "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION "
                                          "ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                                          " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION "
                                          "ALL SELECT 8 UNION ALL SELECT 9) a, "
                                          "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION "
                                          "ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                                          " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION "
                                          "ALL SELECT 8 UNION ALL SELECT 9) b, "
                                          "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION "
                                          "ALL SELECT 3 UNION ALL SELECT 4 UNION ALL "
                                          " SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION "
                                          "ALL SELECT 8 UNION ALL SELECT 9) c"));
            db::execDirect(db,
                           QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                          "coupon_template_id, face_value_fen, created_at) "
                                          "SELECT 1 + MOD(o.n, 997), 1 + o.n, 1, 500, "
                                          "UTC_TIMESTAMP(3) - INTERVAL MOD(o.n, 7200) SECOND "
                                          "FROM (SELECT a.n * 1000 + b.n AS n FROM seq a CROSS "
                                          "JOIN seq b WHERE a.n < 500) o "
                                          "CROSS JOIN (SELECT 0 AS copy UNION ALL SELECT 1) c"));
            QCOMPARE(
                db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM user_coupon")).toLongLong(),
                qint64(1000000));
        }

        StallProbe probe;

        DuplicatesPage page(scratch.dsn());
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto *totals = page.findChild<QLabel *>(QStringLiteral("totalsLabel"));
        auto *busy = page.findChild<BusyIndicator *>();
        bool busyShown = false;
        connect(probe.timer(), &QTimer::timeout, probe.timer(),
                [&] { busyShown = busyShown || busy->isVisible(); });
        // Start measuring, then ask for a fresh scan of everything.
        probe.start();
        page.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(
            totals->text().contains(QStringLiteral("500,000 open duplicate groups")), 240000);
        QTRY_VERIFY_WITH_TIMEOUT(!page.model()->isLoading() && page.model()->rowCount() > 0, 60000);
        probe.stop();
        const qint64 scanMs = probe.elapsed();
        const qint64 worstGap = probe.worstGap();
        qInfo("scan took %lld ms, longest gap between UI timer ticks %lld ms", scanMs, worstGap);
        // A scan too quick to matter would prove nothing about stalls.
        QVERIFY2(scanMs > 300, qPrintable(QStringLiteral("scan took only %1 ms").arg(scanMs)));
        // A scan over half a second shows that it is working, with a way to cancel it.
        QVERIFY(scanMs < 700 || busyShown);
        QVERIFY2(worstGap < test::busyLimitMs(100),
                 qPrintable(QStringLiteral("the UI thread stalled for %1 ms").arg(worstGap)));

        // A scan can be cancelled: the button appears, KILL QUERY ends it on the server, the
        // page says so, and the next scan runs as usual.
        page.refresh();
        auto *cancel = busy->findChild<QPushButton *>(QStringLiteral("cancelButton"));
        QTRY_VERIFY_WITH_TIMEOUT(busy->isVisible(), 20000);
        cancel->click();
        QTRY_VERIFY_WITH_TIMEOUT(totals->text().contains(QStringLiteral("Cancelled")), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!busy->isVisible(), 5000);
    }

    // (a) Deleting a worker whose query hangs on a frozen server.
    void deletingAWorkerOnAFrozenServerNeverStallsTheUi()
    {
        test::ScratchDatabase scratch;
        auto worker = std::make_unique<db::DbWorker>(scratch.dsn());
        QObject receiver;
        hang(worker.get(), &receiver);
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(scratch.dsn(), HangingSql), 10000);
        test::FrozenServer frozen;
        StallProbe probe;
        probe.start();
        QVERIFY(probe.ticks(3));
        worker.reset();
        QVERIFY(probe.ticks(10));
        QVERIFY_NO_STALL(probe);
    }

    // (b) A reconnect deletes every page, each with its workers, while the queries of all of
    // them hang on a frozen server. Building the new pages afterwards is UI work of its own,
    // so the deletions are timed by the old pages' destroyed(); the probe then shows that the
    // new pages, their first queries hanging too, leave the UI thread alone.
    void reconnectingOnAFrozenServerNeverStallsTheUi()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        migrate(dsn);
        MainWindow window(dsn);
        QSignalSpy known(&window, &MainWindow::privilegesKnown);
        window.show();
        QVERIFY(known.wait(20000));
        QElapsedTimer clock;
        qint64 lastGone = -1;
        QObject watcher;
        for (int id = 0; id < Page::NUM_PAGES; ++id) {
            Page *page = window.page(Page::Id(id));
            QVERIFY(page);
            hang(page->worker(), page);
            connect(page, &QObject::destroyed, &watcher, [&] { lastGone = clock.elapsed(); });
        }
        QTRY_COMPARE_WITH_TIMEOUT(
            test::count(dsn,
                        QStringLiteral(
                            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '%1'")
                            .arg(HangingSql)),
            qint64(Page::NUM_PAGES), 20000);
        test::FrozenServer frozen;
        clock.start();
        window.connectTo(dsn);
        const qint64 reconnectMs = clock.elapsed();
        qInfo("the old pages were gone after %lld ms, the new ones built after %lld ms", lastGone,
              reconnectMs);
        QVERIFY(lastGone >= 0);
        QVERIFY2(lastGone < test::busyLimitMs(100),
                 qPrintable(QStringLiteral("deleting the pages took %1 ms").arg(lastGone)));
        StallProbe probe;
        probe.start();
        QVERIFY(probe.ticks(30));
        QVERIFY_NO_STALL(probe);
    }

    // (c) Closing the compensation dialog while its run hangs on a frozen server.
    void closingTheCompensationDialogMidRunNeverStallsTheUi()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        test::prepareCallbackDatabase(dsn, QStringLiteral("legacy"), 6);
        {
            db::Connection connection(dsn, QStringLiteral("t"));
            test::insertDuplicateIncident(connection.database(), 6);
            // Four eyes off: the run compensates rather than files a request.
            db::execDirect(
                connection.database(),
                QStringLiteral(
                    "UPDATE payops_meta SET value = '0' WHERE name = 'four_eyes_threshold_fen'"));
        }
        auto *dialog = new CompensationDialog(
            dsn, QStringLiteral("every open duplicate"),
            [](const QSqlDatabase &) { return CompensationScope::all(); }, 100);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        QPointer<CompensationDialog> guard(dialog);
        const auto closeIfLeft = qScopeGuard([&guard] { delete guard.data(); });
        dialog->show();
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("reasonEdit")),
                         QStringLiteral("stall test"));
        QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("ticketEdit")),
                         QStringLiteral("INC-9"));
        auto *act = dialog->findChild<QPushButton *>(QStringLiteral("actButton"));
        QTRY_VERIFY_WITH_TIMEOUT(act->isEnabled(), 20000);
        QTest::mouseClick(act, Qt::LeftButton);
        {
            // The run's first statement hangs: the dialog is mid-run when it closes.
            test::FrozenServer frozen;
            StallProbe probe;
            probe.start();
            QTest::mouseClick(dialog->findChild<QPushButton *>(QStringLiteral("confirmButton")),
                              Qt::LeftButton);
            QVERIFY(probe.ticks(10));
            QVERIFY(!dialog->findChild<QPushButton *>(QStringLiteral("closeButton"))->isEnabled());
            dialog->close();
            QTRY_VERIFY(guard.isNull());
            QVERIFY(probe.ticks(10));
            QVERIFY_NO_STALL(probe);
        }
        // Running again, the server takes the kill: the run's thread ends by itself.
        QVERIFY(db::DbWorker::waitForAll(QDeadlineTimer(20000)));
    }

    // The console's process ends within 5 s of its window closing, with a query hanging on
    // a frozen server.
    void theConsoleExitsSoonAfterItsWindowClosesOnAFrozenServer()
    {
        test::ScratchDatabase scratch;
        const Dsn &dsn = scratch.dsn();
        migrate(dsn);
        QProcess console;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QString::fromLatin1(ConsoleChildVariable), dsn.toString(true));
        console.setProcessEnvironment(environment);
        console.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(console.waitForStarted());
        const auto end = qScopeGuard([&console] {
            if (console.state() != QProcess::NotRunning) {
                console.kill();
                console.waitForFinished();
            }
        });
        QTRY_VERIFY_WITH_TIMEOUT(test::runsOnServer(dsn, HangingSql), 20000);
        test::FrozenServer frozen;
        QElapsedTimer clock;
        clock.start();
        console.write("close\n");
        const bool ended = console.waitForFinished(15000);
        const qint64 exitMs = clock.elapsed();
        qInfo("the console ended %lld ms after its window was closed", exitMs);
        QVERIFY2(ended, qPrintable(QString::fromUtf8(console.readAllStandardError())));
        QCOMPARE(console.exitStatus(), QProcess::NormalExit);
        QCOMPARE(console.exitCode(), 0);
        QVERIFY2(exitMs < 5000,
                 qPrintable(QStringLiteral("the console took %1 ms to end").arg(exitMs)));
    }
};

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsSet(ConsoleChildVariable))
        return runConsoleUntilClosed(argc, argv, qEnvironmentVariable(ConsoleChildVariable));
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestUiStall test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_uistall.moc"
