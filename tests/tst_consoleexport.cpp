#include "console/worker.h"
#include "csvfile.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "dialogs/reportdialog.h"
#include "models/duplicatemodel.h"
#include "models/ordermodel.h"
#include "models/streamedcsvsource.h"
#include "pages/duplicatespage.h"
#include "testmain.h"
#include "widgets/datatable.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QThread>
#include <QToolButton>

using namespace payops;

namespace {

QList<QStringList> shown(const QAbstractItemModel *model)
{
    QList<QStringList> rows;
    QStringList header;
    for (int column = 0; column < model->columnCount(); ++column)
        header << model->headerData(column, Qt::Horizontal).toString();
    rows << header;
    for (int row = 0; row < model->rowCount(); ++row) {
        QStringList cells;
        for (int column = 0; column < model->columnCount(); ++column)
            cells << model->index(row, column).data().toString();
        rows << cells;
    }
    return rows;
}

// A streamed table whose query never ends by itself: one row per round trip to the server
// until the export is cancelled.
class EndlessSource final : public QStandardItemModel, public StreamedCsvSource
{
public:
    explicit EndlessSource(console::Worker *worker)
        : QStandardItemModel(0, 1)
        , m_worker(worker)
    {
        setHorizontalHeaderLabels({QStringLiteral("n")});
    }
    console::Worker *csvWorker() const override { return m_worker; }
    Job csvJob() const override
    {
        const auto sent = m_sent;
        return
            [sent](const QSqlDatabase &db, const RowSink &sink, const std::atomic<bool> &cancel) {
                for (int n = 0; n < 100000 && !cancel.load(); ++n) {
                    sink({db::scalar(db, QStringLiteral("SELECT ?"), {n}).toString()});
                    sent->fetch_add(1);
                    QThread::msleep(5);
                }
            };
    }
    int rowsSent() const { return m_sent->load(); }

private:
    console::Worker *m_worker;
    std::shared_ptr<std::atomic<int>> m_sent = std::make_shared<std::atomic<int>>(0);
};

} // namespace

// Every table exports what it shows, through the one CSV writer; a paged table exports all of
// its rows, not just those scrolled to; the incident report is printed off the UI thread.
class TstConsoleExport final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { m_demo = test::demoDatabase(); }
    void cleanupTestCase() { m_demo.reset(); }

    // A table held in memory: its cells as shown, neutralised where a spreadsheet would run them.
    void aShortTableAsShown()
    {
        QStandardItemModel model(0, 3);
        model.setHorizontalHeaderLabels(
            {QStringLiteral("订单"), QStringLiteral("金额 (¥)"), QStringLiteral("备注")});
        model.appendRow({new QStandardItem(QStringLiteral("1001")),
                         new QStandardItem(QStringLiteral("-12.30")),
                         new QStandardItem(QStringLiteral("=HYPERLINK(\"http://x\")"))});
        model.appendRow({new QStandardItem(QStringLiteral("1002")),
                         new QStandardItem(QStringLiteral("99.00")),
                         new QStandardItem(QStringLiteral("退款, \"加急\"\n第二行"))});
        DataTable table(QStringLiteral("shortTable"), &model);
        QVERIFY(table.actions().contains(table.exportAction()));
        QCOMPARE(table.contextMenuPolicy(), Qt::ActionsContextMenu);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("short.csv"));
        QSignalSpy finished(&table, &DataTable::exportFinished);
        table.exportCsv(path);
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(finished.first().at(0).toLongLong(), qint64(2));
        QList<QStringList> expected = shown(&model);
        expected[1][2] = QStringLiteral("'=HYPERLINK(\"http://x\")"); // the only cell that changes
        QCOMPARE(test::readCsv(path), expected);
    }

    // The duplicates page pages in by order as the view scrolls; its export reads every group
    // of the filter by the same query on the page's worker, and equals the table once it is
    // scrolled to the end.
    void thePagedDuplicatesTableExportsWhole()
    {
        DuplicatesPage page(m_demo->dsn());
        DuplicateModel *model = page.model();
        QAbstractItemModelTester tester(model);
        model->setPageSize(4);
        page.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!model->isLoading() && model->rowCount() > 0, 20000);
        const int loaded = model->rowCount();
        const qint64 groups = test::count(
            m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM (SELECT order_id FROM user_coupon "
                                          "GROUP BY order_id, coupon_template_id "
                                          "HAVING COUNT(*) > 1 UNION ALL SELECT order_id FROM "
                                          "point_log GROUP BY order_id, point_type "
                                          "HAVING COUNT(*) > 1) g"));
        QVERIFY2(loaded < groups,
                 "the first page must not hold every group, or this proves nothing");

        auto *table = page.findChild<DataTable *>(QStringLiteral("duplicatesTable"));
        QVERIFY(table);
        QCOMPARE(page.findChild<QToolButton *>(QStringLiteral("exportDuplicates"))->defaultAction(),
                 table->exportAction());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("duplicates.csv"));
        QSignalSpy finished(table, &DataTable::exportFinished);
        table->exportCsv(path);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(finished.first().at(0).toLongLong(), groups);
        QVERIFY(finished.first().at(1).toString().contains(path));
        QCOMPARE(model->rowCount(), loaded); // nothing was loaded into the view for it

        while (!model->atEnd()) {
            model->fetchMore(QModelIndex());
            QTRY_VERIFY_WITH_TIMEOUT(!model->isLoading(), 20000);
        }
        QCOMPARE(qint64(model->rowCount()), groups);
        QCOMPARE(test::readCsv(path), shown(model));
    }

    // A paged table without a streaming query of its own: its remaining pages are loaded by
    // its own paging on its worker, then written; the file is the whole table.
    void aPagedTableWithoutAStreamLoadsTheRest()
    {
        console::Worker worker(m_demo->dsn());
        OrderModel model(&worker);
        QAbstractItemModelTester tester(&model);
        model.setPageSize(50);
        console::OrderSelection paid;
        paid.kind = console::OrderSelection::Kind::State;
        paid.state = QStringLiteral("PAID");
        model.reload(paid);
        DataTable table(QStringLiteral("ordersTable"), &model);
        QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading() && model.rowCount() == 50, 20000);
        const qint64 orders = test::count(
            m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"));
        QVERIFY(orders > 50);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("orders.csv"));
        QSignalSpy finished(&table, &DataTable::exportFinished);
        table.exportCsv(path);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(finished.first().at(0).toLongLong(), orders);
        QCOMPARE(qint64(model.rowCount()), orders);
        QCOMPARE(test::readCsv(path), shown(&model));
    }

    // Cancelled while it streams, an export leaves no file.
    void aCancelledExportWritesNothing()
    {
        console::Worker worker(m_demo->dsn());
        EndlessSource model(&worker);
        DataTable table(QStringLiteral("endlessTable"), &model);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("endless.csv"));
        QSignalSpy finished(&table, &DataTable::exportFinished);
        table.exportCsv(path);
        QVERIFY(table.isExporting());
        QTRY_VERIFY_WITH_TIMEOUT(model.rowsSent() > 3, 20000); // it is writing rows
        table.cancelExport();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(finished.first().at(0).toLongLong(), qint64(-1));
        QVERIFY(finished.first().at(1).toString().contains(QStringLiteral("cancelled")));
        QVERIFY(!QFile::exists(path));
        QVERIFY(!table.isExporting());
    }

    // File → Incident report…: the PDF is printed on the dialog's worker and the dialog says
    // where it went.
    void theReportDialogWritesThePdf()
    {
        ReportDialog dialog(m_demo->dsn());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("报告.pdf"));
        dialog.setWindow(QDateTime::currentDateTimeUtc().addDays(-8),
                         QDateTime::currentDateTimeUtc().addSecs(60));
        dialog.setPath(path);
        QSignalSpy finished(&dialog, &ReportDialog::finished);
        dialog.write();
        QVERIFY(dialog.isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.first().at(0).toString(), path);
        QVERIFY(finished.first().at(1).toString().contains(QStringLiteral("Written to")));
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {path, QStringLiteral("-")});
        QVERIFY(text.waitForFinished(60000));
        const QString out = QString::fromUtf8(text.readAllStandardOutput());
        QVERIFY2(out.contains(QStringLiteral("Incident report")) &&
                     out.contains(QStringLiteral("Extra copies")),
                 qPrintable(out));

        // An empty window is refused before anything runs.
        dialog.setWindow(QDateTime::currentDateTimeUtc(),
                         QDateTime::currentDateTimeUtc().addSecs(-60));
        dialog.write();
        QVERIFY(!dialog.isBusy());
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_demo;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TstConsoleExport test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consoleexport.moc"
