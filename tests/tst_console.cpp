#include "db/connection.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "lab/sandbox.h"
#include "mainwindow.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QLabel>

using namespace payops;

class TestConsole final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void showsWhatTheDatabaseHolds()
    {
        test::ScratchDatabase scratch;
        {
            db::Connection connection(scratch.dsn(), QStringLiteral("t"));
            db::Migrator(connection, checkMigrationRequirement)
                .migrate(db::SchemaLevel::Legacy, true);
        }
        seedDemoData(scratch.dsn());

        MainWindow window(scratch.dsn());
        window.show();
        auto *headline = window.findChild<QLabel *>(QStringLiteral("headline"));
        auto *details = window.findChild<QLabel *>(QStringLiteral("details"));
        QVERIFY(headline && details);
        QTRY_VERIFY_WITH_TIMEOUT(headline->text().contains(QStringLiteral("sandbox")), 15000);
        QVERIFY2(details->text().contains(QStringLiteral("legacy")), qPrintable(details->text()));
        QVERIFY2(details->text().contains(QStringLiteral("last hour: ")) &&
                     details->text().contains(QStringLiteral("orders created")),
                 qPrintable(details->text()));
    }

    void unreachableDatabaseIsSaidPlainly()
    {
        Dsn dsn = test::serverDsn().withDatabase(QStringLiteral("payops"));
        dsn.socket = QStringLiteral("/nonexistent/mysqld.sock");
        MainWindow window(dsn);
        window.show();
        auto *details = window.findChild<QLabel *>(QStringLiteral("details"));
        QTRY_VERIFY_WITH_TIMEOUT(details->text().contains(QStringLiteral("cannot reach")), 15000);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsole test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_console.moc"
