#include "db/connection.h"
#include "db/migrator.h"
#include "domain/inspection/privileges.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "models/draftmodel.h"
#include "models/findingmodel.h"
#include "pages/reconciliationpage.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "widgets/datatable.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>

using namespace payops;

namespace {

Privileges privilegesOf(const Dsn &dsn)
{
    db::Connection connection(dsn, QStringLiteral("probe"));
    return probePrivileges(connection.database());
}

// Order 1001 was paid with us by WX-OK; order 1002 waits although the platform took WX-LOST.
void seed(const test::ScratchDatabase &scratch)
{
    db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
    db::Migrator(admin, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
    const QSqlDatabase db = admin.database();
    db::exec(db, QStringLiteral("INSERT INTO users (id) VALUES (1)"));
    db::exec(db, QStringLiteral(
                     "INSERT INTO orders (id, user_id, amount_fen, status, pay_no, paid_at) VALUES "
                     "(1001, 1, 9900, 'PAID', 'WX-OK', '2026-12-01 02:00:00'), (1002, 1, 500, "
                     "'PENDING', NULL, NULL)"));
    db::exec(db, QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                "amount_fen, currency, channel, "
                                "trade_status, status, platform_paid_at) VALUES ('WX-OK', 1001, "
                                "'{}', 9900, 'CNY', 'wechat', "
                                "'SUCCESS', 'PROCESSED', '2026-12-01 02:00:00')"));
}

QString writeStatement(const QTemporaryDir &dir)
{
    const QString path = dir.filePath(QStringLiteral("statement.csv"));
    QFile file(path);
    file.open(QIODevice::WriteOnly);
    file.write("pay_no,order_id,amount_fen,status,paid_at,channel\r\n"
               "WX-OK,1001,9900,SUCCESS,2026-12-01T10:00:00+08:00,wechat\r\n"
               "WX-LOST,1002,500,SUCCESS,2026-12-01T11:00:00+08:00,wechat\r\n"
               "WX-BAD,1003,not-money,SUCCESS,2026-12-01T11:30:00+08:00,wechat\r\n");
    return path;
}

int rowOfKind(const QAbstractItemModel *model, FindingKind kind)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, 0).data(FindingModel::KindRole).toInt() == static_cast<int>(kind))
            return row;
    return -1;
}

} // namespace

class TestReconciliationPage final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void importsFindsDraftsAndConfirms()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        QTemporaryDir dir;
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));

        // Finance may draft and not decide; an operator may do both.
        const Privileges financeMay = privilegesOf(finance.dsnFor(scratch.name()));
        QVERIFY(financeMay.draftPayments);
        QVERIFY(!financeMay.decidePayments);
        const Privileges operatorMay = privilegesOf(operatorAccount.dsnFor(scratch.name()));
        QVERIFY(operatorMay.draftPayments && operatorMay.decidePayments);

        ReconciliationPage page(finance.dsnFor(scratch.name()));
        page.setPrivileges(financeMay);
        new QAbstractItemModelTester(page.findings(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, &page);
        page.resize(1300, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));

        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        page.importStatementFile(writeStatement(dir), StatementFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
        QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));
        QVERIFY(page.shownStatementId() > 0);

        // The one payment that never reached us is the one finding; the unreadable line is listed.
        QCOMPARE(page.findings()->rowCount(), 1);
        const int lost = rowOfKind(page.findings(), FindingKind::MissingOurs);
        QVERIFY(lost >= 0);
        QCOMPARE(page.findings()->index(lost, FindingModel::PayNoColumn).data().toString(),
                 QStringLiteral("WX-LOST"));
        QCOMPARE(page.findings()->index(lost, FindingModel::PlatformAmountColumn).data().toString(),
                 QStringLiteral("5.00"));
        auto *summary = page.findChild<QLabel *>(QStringLiteral("reconciliationSummary"));
        QVERIFY2(summary->text().contains(QStringLiteral("漏单")), qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(QStringLiteral("Unreadable lines: 1")),
                 qPrintable(summary->text()));

        // A finding opens its order's evidence.
        QSignalSpy opened(&page, &Page::openOrder);
        auto *findingTable = page.findChild<QTableView *>(QStringLiteral("findingTable"));
        Q_EMIT findingTable->doubleClicked(page.findings()->index(lost, 0));
        QCOMPARE(opened.size(), 1);
        QCOMPARE(opened[0][0].toLongLong(), 1002);

        // Finance drafts the missing payment ...
        findingTable->selectionModel()->setCurrentIndex(page.findings()->index(lost, 0),
                                                        QItemSelectionModel::ClearAndSelect |
                                                            QItemSelectionModel::Rows);
        QVERIFY(page.findChild<QPushButton *>(QStringLiteral("draftMissingPayment"))->isEnabled());
        QSignalSpy acted(&page, &ReconciliationPage::actionFinished);
        page.draftSelectedFinding(QStringLiteral("漏单 on the 1 Dec bill"));
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 20000);
        QVERIFY2(acted[0][0].toBool(), qPrintable(acted[0][1].toString()));
        QCOMPARE(page.drafts()->rowCount(), 1);

        // ... cannot confirm it itself ...
        auto *draftTable = page.findChild<QTableView *>(QStringLiteral("draftTable"));
        draftTable->selectionModel()->setCurrentIndex(page.drafts()->index(0, 0),
                                                      QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
        QVERIFY(!page.findChild<QPushButton *>(QStringLiteral("confirmDraft"))->isEnabled());
        page.confirmSelectedDraft(QStringLiteral("self"));
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 2, 20000);
        QVERIFY(!acted[1][0].toBool());

        // ... and an operator's console confirms it: a recorded callback waits for the drain.
        ReconciliationPage operatorPage(operatorAccount.dsnFor(scratch.name()));
        operatorPage.setPrivileges(operatorMay);
        QTRY_COMPARE_WITH_TIMEOUT(operatorPage.drafts()->rowCount(), 1, 20000);
        auto *operatorDrafts = operatorPage.findChild<QTableView *>(QStringLiteral("draftTable"));
        operatorDrafts->selectionModel()->setCurrentIndex(operatorPage.drafts()->index(0, 0),
                                                          QItemSelectionModel::ClearAndSelect |
                                                              QItemSelectionModel::Rows);
        QVERIFY(operatorPage.findChild<QPushButton *>(QStringLiteral("confirmDraft"))->isEnabled());
        QSignalSpy operatorActed(&operatorPage, &ReconciliationPage::actionFinished);
        operatorPage.confirmSelectedDraft(QStringLiteral("checked with the platform"));
        QTRY_COMPARE_WITH_TIMEOUT(operatorActed.size(), 1, 20000);
        QVERIFY2(operatorActed[0][0].toBool(), qPrintable(operatorActed[0][1].toString()));
        QCOMPARE(operatorPage.drafts()->index(0, 0).data(DraftModel::StatusRole).toString(),
                 QStringLiteral("CONFIRMED"));
        db::Connection admin(scratch.dsn(), QStringLiteral("check"));
        QCOMPARE(db::scalar(admin.database(),
                            QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = "
                                           "'WX-LOST' AND status = 'RECORDED'"))
                     .toInt(),
                 1);

        if (const QString path = qEnvironmentVariable("PAYOPS_SCREENSHOT"); !path.isEmpty()) {
            page.refresh();
            QTRY_COMPARE_WITH_TIMEOUT(
                page.drafts()->index(0, 0).data(DraftModel::StatusRole).toString(),
                QStringLiteral("CONFIRMED"), 20000);
            page.grab().save(path);
        }

        // The same file again stores nothing more.
        page.importStatementFile(writeStatement(dir), StatementFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 2, 30000);
        QVERIFY2(imported[1][1].toString().contains(QStringLiteral("already imported")),
                 qPrintable(imported[1][1].toString()));
        QCOMPARE(
            db::scalar(admin.database(), QStringLiteral("SELECT COUNT(*) FROM platform_statement"))
                .toInt(),
            1);
    }

    // More findings than the page holds: it lists the first kFindingRows, says how many there
    // are from the run's counts, and its CSV export streams every one of them.
    void manyFindingsAreListedInPartAndExportedWhole()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        QTemporaryDir dir;
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        constexpr int kLost = console::kFindingRows + 500;
        QByteArray statement = "pay_no,order_id,amount_fen,status,paid_at,channel\r\n";
        for (int i = 0; i < kLost; ++i)
            statement += "WX-MANY-" + QByteArray::number(i) +
                         ",0,500,SUCCESS,2026-12-01T11:00:00+08:00,wechat\r\n";
        for (int i = 0; i < 3; ++i)
            statement += "WX-THRICE,0,500,SUCCESS,2026-12-01T11:30:00+08:00,wechat\r\n";
        const QString path = dir.filePath(QStringLiteral("many.csv"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write(statement) == statement.size());
        file.close();
        const qint64 total =
            kLost + 2; // each missing pay_no once, WX-THRICE once more as listed three times

        ReconciliationPage page(finance.dsnFor(scratch.name()));
        new QAbstractItemModelTester(page.findings(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, &page);
        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        page.importStatementFile(path, StatementFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 60000);
        QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));
        QCOMPARE(page.findings()->rowCount(), console::kFindingRows);
        auto *tabs = page.findChild<QTabWidget *>(QStringLiteral("reconciliationTabs"));
        QVERIFY(tabs);
        QCOMPARE(tabs->tabText(0), QStringLiteral("Findings (%1)").arg(total));
        const QString summary =
            page.findChild<QLabel *>(QStringLiteral("reconciliationSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("Only the first")), qPrintable(summary));

        auto *table = page.findChild<DataTable *>(QStringLiteral("findingTable"));
        QVERIFY(table);
        const QString csv = dir.filePath(QStringLiteral("findings.csv"));
        QSignalSpy finished(table, &DataTable::exportFinished);
        table->exportCsv(csv);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.first().at(0).toLongLong(), total);
        QCOMPARE(page.findings()->rowCount(),
                 console::kFindingRows); // nothing more was loaded for it
        QFile written(csv);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QByteArray text = written.readAll();
        QCOMPARE(text.count('\n'), total + 1); // and its header
        QVERIFY(text.contains("Listed 3 times"));
        QVERIFY(text.contains("WX-MANY-" + QByteArray::number(kLost - 1)));
    }

    // The sandbox's demo statements (lab/demostatements.h) are a click away on a sandbox that
    // recorded them, and nowhere else, whatever payops_meta says.
    void demoStatementsAreOfferedOnASandboxOnly()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        QTemporaryDir dir;
        const QString demo = dir.filePath(QStringLiteral("wechatpay-demo-bill.csv"));
        QVERIFY(QFile::rename(writeStatement(dir), demo));
        db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
        db::exec(
            admin.database(),
            QStringLiteral("INSERT INTO payops_meta (name, value) VALUES ('demo_statements', ?)"),
            {dir.path()});
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        const Dsn dsn = finance.dsnFor(scratch.name());
        {
            ReconciliationPage page(dsn);
            // The page's jobs run in turn: once this import is done, the demo check is too.
            QSignalSpy imported(&page, &ReconciliationPage::importFinished);
            page.importStatementFile(demo, StatementFormat::Auto);
            QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
            QVERIFY(page.findChild<QToolButton *>(QStringLiteral("demoStatements"))->isHidden());
        }

        db::exec(admin.database(), QStringLiteral("INSERT INTO payops_meta (name, value) VALUES "
                                                  "('sandbox', '1') ON DUPLICATE KEY UPDATE "
                                                  "value = '1'"));
        ReconciliationPage page(dsn);
        page.setPrivileges(privilegesOf(dsn));
        auto *button = page.findChild<QToolButton *>(QStringLiteral("demoStatements"));
        QTRY_VERIFY_WITH_TIMEOUT(!button->isHidden(), 30000);
        const QList<QAction *> offered = button->menu()->actions();
        QCOMPARE(offered.size(), 1); // the Alipay detail is not there
        QCOMPARE(offered[0]->text(), QStringLiteral("wechatpay-demo-bill.csv"));
        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        offered[0]->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
        QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));
        QCOMPARE(page.findings()->rowCount(), 1);
    }

    // Alipay's bill download, imported as it came (a ZIP holding the detail and its summary), by
    // an account holding only payops_finance.
    void anAlipayDownloadIsImportedAsItCame()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        ReconciliationPage page(finance.dsnFor(scratch.name()));
        page.setPrivileges(privilegesOf(finance.dsnFor(scratch.name())));
        page.resize(1300, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        page.importStatementFile(QStringLiteral(PAYOPS_STATEMENT_DATA "/alipay_bill.csv.zip"),
                                 StatementFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
        QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));
        QVERIFY(page.shownStatementId() > 0);
        db::Connection admin(scratch.dsn(), QStringLiteral("check"));
        QCOMPARE(db::scalar(admin.database(),
                            QStringLiteral("SELECT CONCAT(format, ' ', source_file, ' ', "
                                           "line_count) FROM platform_statement"))
                     .toString(),
                 QStringLiteral(
                     "alipay alipay_bill.csv.zip:20880000000000000156_20261201_业务明细.csv 3"));
        if (const QString path = qEnvironmentVariable("PAYOPS_SCREENSHOT"); !path.isEmpty())
            page.grab().save(path);
    }

    void aFileThatIsNoStatementIsOneClearError()
    {
        test::ScratchDatabase scratch;
        seed(scratch);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("photo.csv"));
        QFile file(path);
        file.open(QIODevice::WriteOnly);
        file.write(QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
        file.close();
        ReconciliationPage page(scratch.dsn());
        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        page.importStatementFile(path, StatementFormat::Auto);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
        QVERIFY(!imported[0][0].toBool());
        QVERIFY2(imported[0][1].toString().contains(QStringLiteral("Not imported")),
                 qPrintable(imported[0][1].toString()));
        db::Connection admin(scratch.dsn(), QStringLiteral("check"));
        QCOMPARE(
            db::scalar(admin.database(), QStringLiteral("SELECT COUNT(*) FROM platform_statement"))
                .toInt(),
            0);
    }
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestReconciliationPage test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_reconciliationpage.moc"
