// The console on a team's own tables: the mapping check shown on connecting, the defences page
// reading the mapped keys, and inspections (scheduled or "Inspect now") counting duplicates per
// side effect through the mapped watch, each as an account holding only the role it needs.
#include "console/inspectionschedule.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "domain/inspection/posture.h"
#include "domain/mapping/mapping.h"
#include "mainwindow.h"
#include "models/posturemodel.h"
#include "pages/inspectionpage.h"
#include "pages/posturepage.h"
#include "palette.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"
#include "widgets/mappingcheckbar.h"

#include <QApplication>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>

using namespace payops;

namespace {

// Per side effect of the test mapping: (open groups, extra copies) by a plain GROUP BY over the
// business table, leaving out the copies mapped_compensation records, independent of the watch.
QMap<QString, QPair<qint64, qint64>> groupBy(const QSqlDatabase &root, const test::TeamShop &shop)
{
    struct Side
    {
        QString name, table, id, live, group;
    };
    const QList<Side> sides{
        {QStringLiteral("coupon"), QStringLiteral("t_coupon_grant"), QStringLiteral("id"),
         QStringLiteral("status <> 'VOID'"), QStringLiteral("order_no, tpl_code")},
        {QStringLiteral("gift_card"), QStringLiteral("t_gift_card"), QStringLiteral("card_id"),
         QStringLiteral("status <> 9"), QStringLiteral("order_ref, card_type, batch")},
        {QStringLiteral("points"), QStringLiteral("t_point_flow"), QStringLiteral("id"),
         QStringLiteral("delta > 0"), QStringLiteral("biz_no, biz_type")}};
    QMap<QString, QPair<qint64, qint64>> counts;
    for (const Side &side : sides) {
        QSqlQuery query = db::exec(
            root, QStringLiteral("SELECT COUNT(*), COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) "
                                 "AS n FROM `%1`.`%2` s WHERE (%3) AND NOT EXISTS (SELECT 1 FROM "
                                 "mapped_compensation c WHERE c.business_table = '%1.%2' AND "
                                 "c.target_id = s.%4) GROUP BY %5 HAVING COUNT(*) > 1) g")
                      .arg(shop.business(), side.table, side.live, side.id, side.group));
        query.next();
        counts[side.name] = {query.value(0).toLongLong(), query.value(1).toLongLong()};
    }
    return counts;
}

} // namespace

class TestConsoleMapping final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_shop = std::make_unique<test::TeamShop>();
        m_mapping = mapping::loadMapping(m_shop->mappingPath());
    }
    void cleanupTestCase() { m_shop.reset(); }

    // Connecting with the team's mapping checks it at once: the account compensation runs as
    // (payops_operator with the DBA's business grants) sees the one warning, the gift card's
    // issued_at without an index; a column renamed in the file is an error in the danger colour;
    // a check that hangs can be cancelled and run again.
    void theMappingCheckOnConnect()
    {
        test::ScratchAccount account(QStringLiteral("payops_operator"));
        // The business grants docs/mapping.md gives the account compensation runs as.
        m_shop->grantBusiness(account, QStringLiteral("SELECT"));
        for (const QString &grant :
             {QStringLiteral("UPDATE ON t_coupon_grant"), QStringLiteral("UPDATE ON t_gift_card"),
              QStringLiteral("INSERT ON t_point_flow")})
            m_shop->execBusiness(
                QStringLiteral("GRANT %1 TO '%2'@'localhost'").arg(grant, account.user()));
        MainWindow window(std::nullopt);
        window.resize(1366, 740);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.connectTo(console::Target{account.dsnFor(m_shop->dsn().database), m_mapping});
        MappingCheckBar *bar = window.mappingCheck();
        QVERIFY(bar->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(bar->result().has_value(), 20000);
        QVERIFY2(bar->text().contains(QLatin1String("Mapping OK with 1 warning")),
                 qPrintable(bar->text()));
        auto *text = bar->findChild<QLabel *>(QStringLiteral("mappingCheckText"));
        QVERIFY2(text->toolTip().startsWith(
                     QLatin1String("warning side_effects.gift_card.created_at: ")) &&
                     text->toolTip().contains(QLatin1String("issued_at")),
                 qPrintable(text->toolTip()));
        auto *details = bar->findChild<QPushButton *>(QStringLiteral("mappingCheckDetails"));
        QVERIFY(details->isVisible());
        details->click();
        auto *dialog = window.findChild<QMessageBox *>(QStringLiteral("mappingCheckDialog"));
        QVERIFY(dialog && dialog->informativeText() == text->toolTip());
        dialog->close();
        window.showPage(Page::OverviewId);
        QTest::qWait(1500);
        test::screenshot(&window, QStringLiteral("mapping-check"));

        QByteArray broken = m_shop->mappingText();
        QVERIFY(broken.contains("paid_at = \"pay_time\""));
        broken.replace("paid_at = \"pay_time\"", "paid_at = \"pay_tim\"");
        const QString brokenPath = m_shop->writeMapping(QStringLiteral("broken.toml"), broken);
        window.connectTo(console::Target{account.dsnFor(m_shop->dsn().database),
                                         mapping::loadMapping(brokenPath)});
        QTRY_VERIFY_WITH_TIMEOUT(bar->result().has_value(), 20000);
        QVERIFY(bar->result()->hasErrors());
        QVERIFY2(bar->text().contains(QLatin1String(
                     "Mapping has 1 error: figures from the team's tables may be wrong.")),
                 qPrintable(bar->text()));
        QVERIFY2(bar->text().contains(palette::colour(palette::Role::Danger).name()),
                 qPrintable(bar->text()));
        QVERIFY2(text->toolTip().contains(
                     QLatin1String("error orders.paid_at: table t_order has no column pay_tim")),
                 qPrintable(text->toolTip()));

        // A check held up on the server (the team's orders table locked by someone else) is
        // cancelled from the line, which says the figures are unchecked; checked again once the
        // table is free, it answers.
        {
            db::Connection locker(m_shop->dsn(), QStringLiteral("locker"));
            db::execDirect(locker.database(), QStringLiteral("LOCK TABLES %1.t_order WRITE")
                                                  .arg(db::quoteIdentifier(m_shop->business())));
            window.connectTo(console::Target{account.dsnFor(m_shop->dsn().database), m_mapping});
            auto *cancel = bar->findChild<QPushButton *>(QStringLiteral("mappingCheckCancel"));
            QVERIFY(cancel->isVisible());
            QTest::qWait(500);
            QVERIFY(!bar->result());
            cancel->click();
            QTRY_VERIFY_WITH_TIMEOUT(bar->text().contains(QLatin1String("cancelled")), 10000);
            QVERIFY(!cancel->isVisible());
            db::execDirect(locker.database(), QStringLiteral("UNLOCK TABLES"));
        }
        bar->findChild<QPushButton *>(QStringLiteral("mappingCheckAgain"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(bar->result().has_value(), 20000);
        QVERIFY2(bar->text().contains(QLatin1String("Mapping OK with 1 warning")),
                 qPrintable(bar->text()));

        // On payops's own tables there is nothing to check and no line.
        window.connectTo(console::Target{account.dsnFor(m_shop->dsn().database)});
        QVERIFY(!bar->isVisible());
    }

    // The defences page with a mapping: one unique key per side effect and the orders' CAS key,
    // instead of payops's own coupon and points keys. The planted duplicates mean no side
    // effect has a unique key on (order, key...); t_order's id is its primary key.
    void theDefencesOfTheMappedTables()
    {
        test::ScratchAccount account(QStringLiteral("payops_finance"));
        m_shop->grantBusiness(account, QStringLiteral("SELECT"));
        PosturePage page(console::Target{account.dsnFor(m_shop->dsn().database), m_mapping});
        QTRY_VERIFY_WITH_TIMEOUT(!page.model()->defences().isEmpty(), 20000);
        QMap<QString, DefenceState> states;
        for (const Defence &defence : page.model()->defences())
            states[defence.name] = defence.state;
        for (const QString &name :
             {QStringLiteral("mapped_key_coupon"), QStringLiteral("mapped_key_gift_card"),
              QStringLiteral("mapped_key_points")}) {
            QVERIFY2(states.contains(name), qPrintable(states.keys().join(QLatin1Char(' '))));
            QCOMPARE(states.value(name), DefenceState::Missing);
        }
        QCOMPARE(states.value(QStringLiteral("mapped_order_cas"), DefenceState::Unknown),
                 DefenceState::Present);
        // payops's own keys are not judged on a database whose orders live elsewhere.
        db::Connection connection(m_shop->dsn(), QStringLiteral("own"));
        for (const Defence &own : inspectPosture(connection.database()))
            if (own.name.contains(QLatin1String("coupon")) ||
                own.name.contains(QLatin1String("point")))
                QVERIFY2(!states.contains(own.name), qPrintable(own.name));
    }

    // "Inspect now" on the mapped shop, as payops_finance with SELECT on the business database:
    // the stored run counts each side effect as a GROUP BY over its table does, stores them
    // under duplicates.side_effects as payops inspect --mapping --json does, and the page lists
    // them per side effect.
    void anInspectionCountsPerSideEffect()
    {
        test::ScratchAccount account(QStringLiteral("payops_finance"));
        m_shop->grantBusiness(account, QStringLiteral("SELECT"));
        InspectionPage page(console::Target{account.dsnFor(m_shop->dsn().database), m_mapping});
        page.resize(1200, 700);
        page.show();
        QList<console::ScheduledInspection> finished;
        connect(page.scheduler(), &console::InspectionScheduler::finished, this,
                [&finished](const console::ScheduledInspection &result) { finished << result; });
        QSignalSpy failed(page.scheduler(), &console::InspectionScheduler::failed);
        auto *runNow = page.findChild<QPushButton *>(QStringLiteral("inspectNowButton"));
        QTRY_VERIFY_WITH_TIMEOUT(runNow->isEnabled(), 10000);
        // The first count may take more than one run's budget: click until a run is stored.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                if (!finished.isEmpty() && finished.last().stored.stored())
                    return true;
                if (runNow->isEnabled())
                    runNow->click();
                return false;
            }(),
            25000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        const console::ScheduledInspection result = finished.last();
        QVERIFY(!result.run.clean);

        db::Connection rootConnection(m_shop->dsn(), QStringLiteral("root"));
        const QSqlDatabase root = rootConnection.database();
        const QMap<QString, QPair<qint64, qint64>> expected = groupBy(root, *m_shop);
        QCOMPARE(expected.value(QStringLiteral("gift_card")).first,
                 qint64(test::TeamShop::kGiftCardGroups));
        const QJsonObject stored =
            QJsonDocument::fromJson(db::scalar(root,
                                               QStringLiteral("SELECT findings FROM inspection_run "
                                                              "WHERE id = ?"),
                                               {result.run.id})
                                        .toString()
                                        .toUtf8())
                .object();
        QMap<QString, QPair<qint64, qint64>> counted;
        qint64 groups = 0;
        for (const QJsonValue &value : stored.value(QStringLiteral("duplicates"))
                                           .toObject()
                                           .value(QStringLiteral("side_effects"))
                                           .toArray()) {
            const QJsonObject sideEffect = value.toObject();
            counted[sideEffect.value(QStringLiteral("name")).toString()] = {
                sideEffect.value(QStringLiteral("groups")).toInteger(),
                sideEffect.value(QStringLiteral("extra_copies")).toInteger()};
            groups += sideEffect.value(QStringLiteral("groups")).toInteger();
        }
        QCOMPARE(counted, expected);
        QCOMPARE(result.run.duplicateGroups, groups);
        QCOMPARE(db::scalar(root, QStringLiteral("SELECT run_by FROM inspection_run WHERE id = ?"),
                            {result.run.id})
                     .toString()
                     .section(QLatin1Char('@'), 0, 0),
                 account.user());

        // The page's findings, per side effect.
        auto *table = page.findChild<QTableView *>(QStringLiteral("inspectionTable"));
        QTRY_VERIFY_WITH_TIMEOUT(table->model()->rowCount() >= 1, 15000);
        table->selectRow(0);
        const QString findings =
            page.findChild<QPlainTextEdit *>(QStringLiteral("inspectionFindings"))->toPlainText();
        QVERIFY2(findings.contains(QStringLiteral("  gift_card: %1 open group(s), %2 extra copies")
                                       .arg(expected.value(QStringLiteral("gift_card")).first)
                                       .arg(expected.value(QStringLiteral("gift_card")).second)),
                 qPrintable(findings));
        QVERIFY2(
            findings.contains(
                QStringLiteral("  coupon: %1 open group(s)").arg(test::TeamShop::kCouponGroups)),
            qPrintable(findings));
    }

private:
    std::unique_ptr<test::TeamShop> m_shop;
    std::optional<mapping::Mapping> m_mapping;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleMapping test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolemapping.moc"
