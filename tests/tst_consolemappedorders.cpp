// The console's state machine, order evidence and reconciliation pages on a team's own tables
// (TeamShop), through the mapping, as an account holding only payops_finance plus SELECT on the
// team's database: what each page shows is what the team's tables hold.
#include "console/connectionprofile.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "domain/inspection/privileges.h"
#include "domain/mapping/mapping.h"
#include "models/eventmodel.h"
#include "models/findingmodel.h"
#include "pages/evidencepage.h"
#include "pages/reconciliationpage.h"
#include "pages/statemachinepage.h"
#include "pages/windowcombo.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"
#include "widgets/datatable.h"
#include "widgets/statemachinescene.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QGraphicsItem>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTableView>
#include <QTemporaryDir>

namespace payops {
namespace {

// The finance account of the team's shop, and the console's target through its mapping.
struct FinanceOnShop
{
    test::TeamShop shop;
    test::ScratchAccount finance{QStringLiteral("payops_finance")};

    FinanceOnShop() { shop.grantBusiness(finance, QStringLiteral("SELECT")); }
    Dsn dsn() const { return finance.dsnFor(shop.dsn().database); }
    console::Target target() const
    {
        return console::Target{dsn(), mapping::loadMapping(shop.mappingPath())};
    }
};

// Each state box of the diagram with its count, by name.
QMap<QString, qint64> stateCounts(const StateMachineScene *scene)
{
    QMap<QString, qint64> counts;
    for (const QGraphicsItem *item : scene->items())
        if (item->data(StateMachineScene::KindKey).toString() == QLatin1String("state"))
            counts.insert(item->data(StateMachineScene::NameKey).toString(),
                          item->data(StateMachineScene::CountKey).toLongLong());
    return counts;
}

// The events table's "what" column, top to bottom.
QStringList eventTexts(const EventModel *events)
{
    QStringList texts;
    for (int row = 0; row < events->rowCount(); ++row)
        texts << events->index(row, EventModel::WhatColumn).data().toString();
    return texts;
}

} // namespace

class TestConsoleMappedOrders final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The counts by state of the orders created in the page's window (24 hours) are those of
    // the team's own GROUP BY; a value the mapping does not name is a state of its own; no
    // edge carries a count, since nothing on the team's tables could give one.
    void theStateMachineCountsTheTeamsOrders()
    {
        FinanceOnShop f;
        // The seed is a month old: bring a third of it into the window, one order of them in a
        // state the mapping does not name.
        f.shop.execBusiness(QStringLiteral(
            "UPDATE t_order SET gmt_create = UTC_TIMESTAMP() - INTERVAL order_no % 600 MINUTE "
            "WHERE order_no % 3 = 0"));
        f.shop.execBusiness(QStringLiteral("UPDATE t_order SET state = 7 WHERE order_no = %1")
                                .arg(test::TeamShop::kFirstOrder + 1));
        const QStringList names{QStringLiteral("PENDING"), QStringLiteral("PAID"),
                                QStringLiteral("CLOSED"), QStringLiteral("REFUNDING"),
                                QStringLiteral("REFUNDED")};
        QMap<QString, qint64> expected;
        for (const QString &name : names)
            expected.insert(name, 0);
        {
            db::Connection admin(test::serverDsn().withDatabase(f.shop.business()),
                                 QStringLiteral("test-admin"));
            QSqlQuery query =
                db::exec(admin.database(),
                         QStringLiteral("SELECT state, COUNT(*) FROM t_order WHERE gmt_create >= "
                                        "UTC_TIMESTAMP() - INTERVAL 1 DAY GROUP BY state"));
            while (query.next()) {
                const int state = query.value(0).toInt();
                expected.insert(state < names.size() ? names.at(state) : QString::number(state),
                                query.value(1).toLongLong());
            }
        }
        QCOMPARE(expected.value(QStringLiteral("7")), qint64(1));
        QVERIFY(expected.value(QStringLiteral("PAID")) > 50);

        StateMachinePage page(f.target());
        page.resize(1366, 740);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QTRY_VERIFY_WITH_TIMEOUT(!stateCounts(page.scene()).isEmpty(), 15000);
        QMap<QString, qint64> shown = stateCounts(page.scene());
        for (auto it = shown.begin(); it != shown.end();) // payops's states the team has none of
            it = expected.contains(it.key()) || it.value() ? std::next(it) : shown.erase(it);
        QCOMPARE(shown, expected);

        // The diagram's edges are payops's; their labels say no number, the page says why.
        bool anyEdge = false;
        for (const QGraphicsItem *item : page.scene()->items()) {
            if (item->data(StateMachineScene::KindKey).toString() != QLatin1String("edgeLabel"))
                continue;
            anyEdge = true;
            const auto *label = static_cast<const QGraphicsSimpleTextItem *>(item);
            QVERIFY2(!label->text().contains(QRegularExpression(QStringLiteral("[0-9]"))),
                     qPrintable(label->text()));
        }
        QVERIFY(anyEdge);
        const auto *note = page.findChild<QLabel *>(QStringLiteral("selectionLabel"));
        QVERIFY2(note->text().contains(QStringLiteral("no log of transitions")),
                 qPrintable(note->text()));
        QVERIFY(note->isVisible());
        QVERIFY(!page.findChild<QTableView *>(QStringLiteral("ordersTable"))->isVisible());
        test::screenshot(&page, QStringLiteral("mapped-state-machine"));

        // The mapping names updated_at: the window's tip says each refresh reads what changed,
        // and an order the team closes after the first count moves at the next refresh.
        const auto *window = page.findChild<WindowCombo *>();
        QVERIFY(window);
        QVERIFY2(window->toolTip().contains(QLatin1String("orders changed since")),
                 qPrintable(window->toolTip()));
        const qint64 closed = test::TeamShop::kFirstOrder + 4; // PAID, in the window
        f.shop.execBusiness(
            QStringLiteral("UPDATE t_order SET state = 2 WHERE order_no = %1").arg(closed));
        --expected[QStringLiteral("PAID")];
        ++expected[QStringLiteral("CLOSED")];
        page.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(stateCounts(page.scene()).value(QStringLiteral("CLOSED")) ==
                                     expected.value(QStringLiteral("CLOSED")),
                                 15000);
        shown = stateCounts(page.scene());
        for (auto it = shown.begin(); it != shown.end();)
            it = expected.contains(it.key()) || it.value() ? std::next(it) : shown.erase(it);
        QCOMPARE(shown, expected);
    }

    // A planted coupon duplicate: the order as the team keeps it, its payment and both live
    // copies, the second marked; the order found by typing its id.
    void theEvidenceOfADuplicateShowsBothCopies()
    {
        FinanceOnShop f;
        const qint64 order = test::TeamShop::kFirstOrder + 10; // 19.90 yuan, PAID
        { // a second payment payops's endpoint refused for it
            db::Connection admin(test::serverDsn().withDatabase(f.shop.dsn().database),
                                 QStringLiteral("test-admin"));
            db::execDirect(admin.database(),
                           QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, "
                                          "raw_body, amount_fen, channel, status, reason, "
                                          "platform_paid_at) VALUES ('WX-AGAIN', %1, '', 1990, "
                                          "'wechat', 'REJECTED', 'order_already_paid', "
                                          "'2026-11-01 00:30:00')")
                               .arg(order));
        }
        EvidencePage page(f.target());
        page.resize(1366, 740);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto *edit = page.findChild<QLineEdit *>(QStringLiteral("orderEdit"));
        QTest::keyClicks(edit, QString::number(order));
        QTest::keyClick(edit, Qt::Key_Return);
        auto *header = page.findChild<QLabel *>(QStringLiteral("evidenceHeader"));
        QTRY_VERIFY_WITH_TIMEOUT(header->text().contains(QStringLiteral("Order %1").arg(order)),
                                 15000);
        QVERIFY2(header->text().contains(QStringLiteral("PAID")), qPrintable(header->text()));
        QVERIFY2(header->text().contains(QStringLiteral("¥19.90")), qPrintable(header->text()));

        const QStringList texts = eventTexts(page.events());
        const QStringList coupons = texts.filter(QStringLiteral("coupon NEWUSER5"));
        QCOMPARE(coupons.size(), 2);
        QVERIFY2(coupons.at(1).contains(QStringLiteral("copy 2")), qPrintable(coupons.at(1)));
        QCOMPARE(texts.filter(QStringLiteral("paid ¥19.90")).size(), 1);
        QCOMPARE(texts.filter(QStringLiteral("points PAY_REWARD")).size(), 1);
        QCOMPARE(
            texts.filter(QStringLiteral("pay_no WX-AGAIN ¥19.90: REJECTED (order_already_paid)"))
                .size(),
            1);
        auto *findings = page.findChild<QLabel *>(QStringLiteral("findingsLabel"));
        QVERIFY2(findings->text().contains(QStringLiteral("coupon NEWUSER5 has 2 live copies")),
                 qPrintable(findings->text()));
        test::screenshot(&page, QStringLiteral("mapped-evidence"));

        // The extra copy the customer already spent says so.
        page.showOrder(test::TeamShop::kUsedCouponOrder);
        QTRY_VERIFY_WITH_TIMEOUT(eventTexts(page.events())
                                     .join(QLatin1Char('\n'))
                                     .contains(QStringLiteral("used, copy 2")),
                                 15000);

        // An order the team does not have.
        page.showOrder(999);
        QTRY_VERIFY_WITH_TIMEOUT(header->text().contains(QStringLiteral("does not exist")), 15000);
    }

    // Importing the statement from the page reconciles it against the team's payments: the
    // planted findings of tst_mappedreconcile, no more.
    void theReconciliationUsesTheTeamsPayments()
    {
        FinanceOnShop f;
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("team.csv"));
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(f.shop.plantedStatement());
        }
        ReconciliationPage page(f.target());
        {
            db::Connection connection(f.dsn(), QStringLiteral("probe"));
            page.setPrivileges(probePrivileges(connection.database()));
        }
        page.resize(1300, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QSignalSpy imported(&page, &ReconciliationPage::importFinished);
        page.importStatementFile(path, StatementFormat::Generic);
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 30000);
        QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));

        QMap<int, QStringList> byKind;
        const FindingModel *findings = page.findings();
        for (int row = 0; row < findings->rowCount(); ++row)
            byKind[findings->index(row, 0).data(FindingModel::KindRole).toInt()]
                << findings->index(row, FindingModel::PayNoColumn).data().toString();
        const auto payNo = [](qint64 order) { return QStringLiteral("42000%1").arg(order); };
        QCOMPARE(byKind.value(int(FindingKind::MissingPlatform)),
                 QStringList{payNo(test::TeamShop::kLeftOutOrder)});
        QCOMPARE(byKind.value(int(FindingKind::AmountMismatch)),
                 QStringList{payNo(test::TeamShop::kLowOrder)});
        QStringList missing = byKind.value(int(FindingKind::MissingOurs));
        missing.sort();
        QCOMPARE(missing, (QStringList{payNo(test::TeamShop::kClosedPaidOrder),
                                       QString::fromLatin1(test::TeamShop::kUnknownPayNo)}));
        QCOMPARE(findings->rowCount(), 4);
        // The statuses beside the findings, on the page and in its export, are the team's: the
        // payment for the order the team closed names it CLOSED.
        const auto closedRow = [&](const QString &text) {
            for (const QString &line : text.split(QLatin1Char('\n')))
                if (line.contains(payNo(test::TeamShop::kClosedPaidOrder)))
                    return line;
            return QString();
        };
        QStringList shown;
        for (int row = 0; row < findings->rowCount(); ++row) {
            QStringList cells;
            for (int column = 0; column < FindingModel::NUM_COLUMNS; ++column)
                cells << findings->index(row, column).data().toString();
            shown << cells.join(QLatin1Char(','));
        }
        QVERIFY2(closedRow(shown.join(QLatin1Char('\n'))).contains(QStringLiteral("CLOSED")),
                 qPrintable(shown.join(QLatin1Char('\n'))));
        auto *table = page.findChild<DataTable *>(QStringLiteral("findingTable"));
        const QString csv = dir.filePath(QStringLiteral("findings.csv"));
        QSignalSpy exported(table, &DataTable::exportFinished);
        table->exportCsv(csv);
        QTRY_COMPARE_WITH_TIMEOUT(exported.size(), 1, 20000);
        QFile written(csv);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(written.readAll());
        QVERIFY2(closedRow(text).contains(QStringLiteral("CLOSED")), qPrintable(text));

        // Reconciling again reads the team's payments as they are now: once the team has struck
        // the payment the platform never listed, that 多单 is gone.
        f.shop.execBusiness(QStringLiteral("DELETE FROM t_pay_record WHERE order_no = %1")
                                .arg(test::TeamShop::kLeftOutOrder));
        page.reconcileAgain();
        QTRY_COMPARE_WITH_TIMEOUT(findings->rowCount(), 3, 20000);
        for (int row = 0; row < findings->rowCount(); ++row)
            QVERIFY(findings->index(row, 0).data(FindingModel::KindRole).toInt() !=
                    int(FindingKind::MissingPlatform));
        // A drafted payment would go to payops's own orders: not offered on the team's.
        QVERIFY(!page.findChild<QPushButton *>(QStringLiteral("draftMissingPayment"))->isEnabled());
    }
};

} // namespace payops

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    payops::TestConsoleMappedOrders test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolemappedorders.moc"
