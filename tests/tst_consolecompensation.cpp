#include "callbackfixture.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "dialogs/compensationdialog.h"
#include "domain/callback/callbackswitch.h"
#include "domain/money/auditlog.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "mainwindow.h"
#include "models/auditmodel.h"
#include "models/compensationrequestmodel.h"
#include "models/duplicatemodel.h"
#include "pages/auditpage.h"
#include "pages/compensationpage.h"
#include "pages/duplicatespage.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>

using namespace payops;

namespace {

qint64 count(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    return db::scalar(connection.database(), sql).toLongLong();
}

QString labelText(const QWidget *parent, const char *name)
{
    const auto *label = parent->findChild<QLabel *>(QString::fromLatin1(name));
    return label ? label->text() : QStringLiteral("<no %1>").arg(QString::fromLatin1(name));
}

// A window on `dsn` whose account's grants are known, showing the duplicates page.
std::unique_ptr<MainWindow> windowOn(const Dsn &dsn)
{
    auto window = std::make_unique<MainWindow>(dsn);
    QSignalSpy known(window.get(), &MainWindow::privilegesKnown);
    window->show();
    if (!known.wait(10000) && known.isEmpty())
        qWarning("the privileges probe did not answer");
    return window;
}

// The four-eyes threshold in fen (1000: the test incident's 96 yuan then needs a second operator).
void setFourEyesThreshold(const Dsn &dsn, qint64 fen)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    db::exec(
        connection.database(),
        QStringLiteral("UPDATE payops_meta SET value = ? WHERE name = 'four_eyes_threshold_fen'"),
        {QString::number(fen)});
}

// The compensation page of `window` once it lists the one request filed, that request
// selected; null when it does not show up.
CompensationPage *theOneRequestOn(const MainWindow &window)
{
    auto *page = static_cast<CompensationPage *>(window.page(Page::CompensationId));
    page->refresh();
    if (!QTest::qWaitFor([page] { return page->requestModel()->rowCount() == 1; }, 10000))
        return nullptr;
    page->requestsTable()->selectRow(0);
    return page;
}

} // namespace

class TestConsoleCompensation final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_db = std::make_unique<test::ScratchDatabase>(QStringLiteral("ccomp"));
        test::prepareCallbackDatabase(m_db->dsn(), QStringLiteral("legacy"), 6);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        test::insertDuplicateIncident(connection.database(), 6);
    }
    void cleanup() { m_db.reset(); }

    // 5.4 and 5.7: "all in this filter" previews the totals the database holds and changes
    // nothing; the run then leaves no live duplicate, each action audited.
    void previewShowsTheTotalsThenCompensates()
    {
        const Dsn &dsn = m_db->dsn();
        // The expected figures by plain SQL: every row after the first of its group.
        const QString extraCoupons =
            QStringLiteral("FROM user_coupon c WHERE c.id > (SELECT MIN(d.id) FROM user_coupon d "
                           "WHERE d.order_id = c.order_id "
                           "AND d.coupon_template_id = c.coupon_template_id)");
        const QString extraPoints =
            QStringLiteral("FROM point_log p WHERE p.id > (SELECT MIN(q.id) FROM point_log q WHERE "
                           "q.order_id = p.order_id "
                           "AND q.point_type = p.point_type)");
        const qint64 unused = count(dsn, QStringLiteral("SELECT COUNT(*) ") + extraCoupons +
                                             QStringLiteral(" AND c.status = 'ISSUED'"));
        const qint64 used = count(dsn, QStringLiteral("SELECT COUNT(*) ") + extraCoupons +
                                           QStringLiteral(" AND c.status = 'USED'"));
        const qint64 pointsRows = count(dsn, QStringLiteral("SELECT COUNT(*) ") + extraPoints);
        const qint64 fen =
            count(dsn, QStringLiteral("SELECT SUM(c.face_value_fen) ") + extraCoupons) +
            count(dsn,
                  QStringLiteral("SELECT SUM(p.points) ") + extraPoints); // 100 points = 100 fen
        QCOMPARE(unused + used, qint64(12));
        QVERIFY(used > 0);
        const QString fingerprint = test::businessFingerprint(dsn);

        auto window = windowOn(dsn);
        auto *page = static_cast<DuplicatesPage *>(window->page(Page::DuplicatesId));
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 18, 10000);
        auto *all = page->findChild<QPushButton *>(QStringLiteral("compensateAll"));
        QVERIFY(all->isEnabled());
        CompensationDialog *dialog = page->compensate(DuplicatesPage::CompensateWhat::AllInFilter);
        QVERIFY(dialog);
        QTRY_COMPARE_WITH_TIMEOUT(labelText(dialog, "totalCouponsFrozen"), QString::number(unused),
                                  10000);
        QCOMPARE(labelText(dialog, "totalUsedCoupons"), QString::number(used));
        QCOMPARE(labelText(dialog, "totalPointsReversed"),
                 QStringLiteral("%1 (%2 points)").arg(pointsRows).arg(pointsRows * 100));
        QCOMPARE(labelText(dialog, "totalOrders"), QStringLiteral("6"));
        QCOMPARE(labelText(dialog, "totalMoney"),
                 QStringLiteral("¥%1.%2").arg(fen / 100).arg(fen % 100, 2, 10, QLatin1Char('0')));
        QCOMPARE(test::businessFingerprint(dsn), fingerprint);

        test::compensateThrough(dialog);
        QVERIFY2(
            labelText(dialog, "resultText")
                .contains(QStringLiteral("Compensated <b>%1</b>").arg(unused + used + pointsRows)),
            qPrintable(labelText(dialog, "resultText")));
        db::Connection connection(dsn, QStringLiteral("check"));
        QVERIFY(countLiveDuplicates(connection.database()).isEmpty());
        QCOMPARE(
            count(dsn, QStringLiteral("SELECT COUNT(*) FROM user_coupon WHERE status = 'FROZEN'")),
            unused);
        QCOMPARE(
            count(dsn, QStringLiteral(
                           "SELECT COUNT(*) FROM ops_audit_log WHERE action LIKE 'compensation.%' "
                           "AND reason = 'duplicate payout INC-7' AND ticket = 'INC-7'")),
            unused + used + pointsRows);
        QVERIFY(verifyAuditChain(connection.database()).intact);
        // The duplicates page reads again and shows the groups compensated.
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 0, 10000);
    }

    // 5.4: one selected group only, not its whole order.
    void selectedGroupOnly()
    {
        auto window = windowOn(m_db->dsn());
        auto *page = static_cast<DuplicatesPage *>(window->page(Page::DuplicatesId));
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 18, 10000);
        auto *selected = page->findChild<QPushButton *>(QStringLiteral("compensateSelected"));
        QVERIFY(!selected->isEnabled());
        page->table()->selectRow(0);
        QVERIFY(selected->isEnabled());
        CompensationDialog *dialog =
            page->compensate(DuplicatesPage::CompensateWhat::SelectedGroups);
        QTRY_VERIFY_WITH_TIMEOUT(
            labelText(dialog, "previewStatus").contains(QStringLiteral("Dry run")), 10000);
        const int actions = labelText(dialog, "totalCouponsFrozen").toInt() +
                            labelText(dialog, "totalUsedCoupons").toInt() +
                            labelText(dialog, "totalPointsReversed").section(u' ', 0, 0).toInt();
        QCOMPARE(actions, 1);
        QCOMPARE(labelText(dialog, "totalOrders"), QStringLiteral("1"));
        test::compensateThrough(dialog);
        QCOMPARE(count(m_db->dsn(), QStringLiteral("SELECT COUNT(*) FROM compensation")),
                 qint64(1));
    }

    // 5.4: above the threshold the console files a request; the requester may not approve
    // it; another operator account approves it on the compensation page and it runs.
    void fourEyesInTheConsole()
    {
        const Dsn &dsn = m_db->dsn();
        setFourEyesThreshold(dsn, 1000);
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));

        auto requester = windowOn(alice.dsnFor(m_db->name()));
        auto *duplicates = static_cast<DuplicatesPage *>(requester->page(Page::DuplicatesId));
        QTRY_COMPARE_WITH_TIMEOUT(duplicates->model()->rowCount(), 18, 10000);
        CompensationDialog *dialog =
            duplicates->compensate(DuplicatesPage::CompensateWhat::AllInFilter);
        QTRY_VERIFY_WITH_TIMEOUT(
            dialog->findChild<QLabel *>(QStringLiteral("fourEyesNote"))->isVisible(), 10000);
        QCOMPARE(dialog->findChild<QPushButton *>(QStringLiteral("actButton"))->text(),
                 QStringLiteral("Request approval…"));
        test::compensateThrough(dialog);
        QVERIFY2(labelText(dialog, "runText").contains(QStringLiteral("is filed")),
                 qPrintable(labelText(dialog, "runText")));
        QCOMPARE(count(dsn, QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(0));

        // The requester sees the request and may not decide it.
        auto *own = static_cast<CompensationPage *>(requester->page(Page::CompensationId));
        own->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(own->requestModel()->rowCount(), 1, 10000);
        own->requestsTable()->selectRow(0);
        QVERIFY(!own->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        QVERIFY(!own->approveSelected());

        auto approver = windowOn(bob.dsnFor(m_db->name()));
        CompensationPage *page = theOneRequestOn(*approver);
        QVERIFY(page);
        QCOMPARE(page->requestModel()->request(0).status, QStringLiteral("PENDING"));
        QTRY_VERIFY(page->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
        CompensationDialog *approval = page->approveSelected();
        QVERIFY(approval);
        QTRY_VERIFY_WITH_TIMEOUT(
            labelText(approval, "previewStatus").contains(QStringLiteral("Dry run")), 10000);
        // Reason and ticket come from the request; the approver confirms.
        QTRY_VERIFY(approval->findChild<QPushButton *>(QStringLiteral("actButton"))->isEnabled());
        QTest::mouseClick(approval->findChild<QPushButton *>(QStringLiteral("actButton")),
                          Qt::LeftButton);
        QTest::mouseClick(approval->findChild<QPushButton *>(QStringLiteral("confirmButton")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            approval->findChild<QPushButton *>(QStringLiteral("closeButton"))->isEnabled(), 20000);
        db::Connection connection(dsn, QStringLiteral("check"));
        QVERIFY(countLiveDuplicates(connection.database()).isEmpty());
        QCOMPARE(
            db::scalar(connection.database(),
                       QStringLiteral(
                           "SELECT CONCAT(status, ' by ', decided_by) FROM compensation_request"))
                .toString(),
            QStringLiteral("EXECUTED by %1@localhost").arg(bob.user()));
    }

    // A second operator may reject a request instead: it is kept, marked so, and nothing is
    // compensated.
    void aRejectedRequestCompensatesNothing()
    {
        const Dsn &dsn = m_db->dsn();
        setFourEyesThreshold(dsn, 1000);
        test::ScratchAccount alice(QStringLiteral("payops_operator"));
        test::ScratchAccount bob(QStringLiteral("payops_operator"));
        auto requester = windowOn(alice.dsnFor(m_db->name()));
        auto *duplicates = static_cast<DuplicatesPage *>(requester->page(Page::DuplicatesId));
        QTRY_COMPARE_WITH_TIMEOUT(duplicates->model()->rowCount(), 18, 10000);
        test::compensateThrough(
            duplicates->compensate(DuplicatesPage::CompensateWhat::AllInFilter));
        QCOMPARE(
            count(dsn, QStringLiteral(
                           "SELECT COUNT(*) FROM compensation_request WHERE status = 'PENDING'")),
            qint64(1));

        auto approver = windowOn(bob.dsnFor(m_db->name()));
        CompensationPage *page = theOneRequestOn(*approver);
        QVERIFY(page);
        QTRY_VERIFY(page->findChild<QPushButton *>(QStringLiteral("rejectButton"))->isEnabled());
        page->rejectSelected();
        QTRY_VERIFY_WITH_TIMEOUT(
            labelText(page, "compensationStatus").contains(QStringLiteral("rejected")), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(page->requestModel()
                                      ->index(0, CompensationRequestModel::StatusColumn)
                                      .data()
                                      .toString(),
                                  QStringLiteral("REJECTED"), 10000);
        QCOMPARE(count(dsn, QStringLiteral("SELECT COUNT(*) FROM compensation")), qint64(0));
        QVERIFY(!page->findChild<QPushButton *>(QStringLiteral("approveButton"))->isEnabled());
    }

    // 5.5: the audit page filters by action and who, verifies the chain as the command line
    // does, names the first broken entry, and exports what the filter shows.
    void auditPageFiltersVerifiesAndExports()
    {
        const Dsn &dsn = m_db->dsn();
        {
            db::Connection connection(dsn, QStringLiteral("t"));
            flipSwitch(connection.database(), CallbackMode::RecordOnly,
                       QStringLiteral("INC-7 stop"));
            flipSwitch(connection.database(), CallbackMode::Normal,
                       QStringLiteral("INC-7 fixed, \"quoted\""));
            for (int i = 0; i < 3; ++i)
                appendAudit(connection.database(), QStringLiteral("backlog.drain"),
                            QStringLiteral("t"), QStringLiteral("entry %1").arg(i), {}, {},
                            QStringLiteral("{\"i\":%1}").arg(i));
        }
        AuditPage page(dsn);
        page.resize(1100, 700);
        page.show();
        AuditModel *model = page.model();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 5, 10000);
        QCOMPARE(model->index(0, AuditModel::IdColumn).data().toLongLong(),
                 qint64(5)); // newest first
        QCOMPARE(model->index(0, AuditModel::ActorColumn).data().toString(),
                 QStringLiteral("root@localhost"));

        page.findChild<QComboBox *>(QStringLiteral("actionFilter"))
            ->setEditText(QStringLiteral("switch."));
        page.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 10000);
        QCOMPARE(model->index(1, AuditModel::ReasonColumn).data().toString(),
                 QStringLiteral("INC-7 stop"));
        QTemporaryDir dir;
        const QString csv = dir.filePath(QStringLiteral("audit.csv"));
        page.exportCsv(csv);
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), 10000);
        QVERIFY2(labelText(&page, "auditResult").contains(QStringLiteral("Exported 2 entries")),
                 qPrintable(labelText(&page, "auditResult")));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QCOMPARE(text.count("\r\n"), 3);
        QVERIFY(text.contains("\"INC-7 fixed, \"\"quoted\"\"\""));
        QVERIFY(!text.contains("entry 1"));

        // A time range: from an hour ahead shows nothing; a "to" before the "from" is refused.
        page.findChild<QCheckBox *>(QStringLiteral("fromEnabled"))->setChecked(true);
        page.findChild<QDateTimeEdit *>(QStringLiteral("fromTime"))
            ->setDateTime(QDateTime::currentDateTimeUtc().addSecs(3600));
        page.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 0, 10000);
        page.findChild<QCheckBox *>(QStringLiteral("toEnabled"))->setChecked(true);
        page.findChild<QDateTimeEdit *>(QStringLiteral("toTime"))
            ->setDateTime(QDateTime::currentDateTimeUtc());
        page.refresh();
        QVERIFY2(labelText(&page, "auditResult").contains(QStringLiteral("time range is empty")),
                 qPrintable(labelText(&page, "auditResult")));
        page.findChild<QDateTimeEdit *>(QStringLiteral("fromTime"))
            ->setDateTime(QDateTime::currentDateTimeUtc().addSecs(-3600));
        page.findChild<QDateTimeEdit *>(QStringLiteral("toTime"))
            ->setDateTime(QDateTime::currentDateTimeUtc().addSecs(120));
        page.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 10000);
        QVERIFY(labelText(&page, "auditResult").isEmpty());
        page.findChild<QCheckBox *>(QStringLiteral("fromEnabled"))->setChecked(false);
        page.findChild<QCheckBox *>(QStringLiteral("toEnabled"))->setChecked(false);

        page.findChild<QLineEdit *>(QStringLiteral("actorFilter"))
            ->setText(QStringLiteral("nobody"));
        page.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 0, 10000);

        page.verify();
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), 10000);
        db::Connection root(dsn, QStringLiteral("root"));
        const QString head = verifyAuditChain(root.database()).headHash;
        QVERIFY2(labelText(&page, "auditResult").contains(QStringLiteral("intact")) &&
                     labelText(&page, "auditResult").contains(head),
                 qPrintable(labelText(&page, "auditResult")));

        db::execDirect(root.database(), QStringLiteral("DROP TRIGGER ops_audit_log_no_update"));
        db::execDirect(
            root.database(),
            QStringLiteral("UPDATE ops_audit_log SET reason = 'nothing happened' WHERE id = 4"));
        page.verify();
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), 10000);
        QVERIFY2(labelText(&page, "auditResult").contains(QStringLiteral("broken at entry 4")),
                 qPrintable(labelText(&page, "auditResult")));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleCompensation test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolecompensation.moc"
