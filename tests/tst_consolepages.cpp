#include "callbackfixture.h"
#include "console/worker.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "fakeinstance.h"
#include "gatewayrows.h"
#include "mainwindow.h"
#include "models/backlogmodel.h"
#include "models/duplicatemodel.h"
#include "models/instancemodel.h"
#include "models/ordermodel.h"
#include "pages/auditpage.h"
#include "pages/backlogpage.h"
#include "pages/duplicatespage.h"
#include "pages/evidencepage.h"
#include "pages/instancespage.h"
#include "pages/statemachinepage.h"
#include "palette.h"
#include "testmain.h"
#include "widgets/duplicatecharts.h"
#include "widgets/statemachinescene.h"
#include "widgets/swimlanescene.h"
#include "widgets/tile.h"

#include <QApplication>
#include <QBarSet>
#include <QBrush>
#include <QChart>
#include <QComboBox>
#include <QGraphicsItem>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QStackedBarSeries>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>

using namespace payops;

namespace {

QGraphicsItem *findItem(const QGraphicsScene *scene, int key, const QString &value, int key2 = -1,
                        const QVariant &value2 = {})
{
    for (QGraphicsItem *item : scene->items())
        if (item->data(key).toString() == value && (key2 < 0 || item->data(key2) == value2))
            return item;
    return nullptr;
}

int countItems(const QGraphicsScene *scene, int key, const QString &value)
{
    int n = 0;
    for (QGraphicsItem *item : scene->items())
        n += item->data(key).toString() == value;
    return n;
}

} // namespace

class TestConsolePages final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_demo = test::demoDatabase();
        m_window = std::make_unique<MainWindow>(m_demo->dsn());
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanupTestCase()
    {
        m_window.reset();
        m_demo.reset();
    }

    void overviewShowsTheFiguresAndLeadsOn()
    {
        const Dsn &dsn = m_demo->dsn();
        // Expected figures by plain SQL, independent of the console's queries.
        const qint64 extra =
            test::count(dsn, QStringLiteral("SELECT SUM(n - 1) FROM (SELECT COUNT(*) AS n FROM "
                                            "user_coupon GROUP BY order_id, coupon_template_id "
                                            "HAVING COUNT(*) > 1 UNION ALL SELECT COUNT(*) FROM "
                                            "point_log GROUP BY order_id, point_type "
                                            "HAVING COUNT(*) > 1) g"));
        const qint64 fen = test::count(
            dsn,
            QStringLiteral("SELECT SUM(f) FROM (SELECT (COUNT(*) - 1) * MAX(face_value_fen) AS f "
                           "FROM user_coupon "
                           "GROUP BY order_id, coupon_template_id HAVING COUNT(*) > 1 UNION ALL "
                           "SELECT (COUNT(*) - 1) * MAX(points) FROM point_log GROUP BY order_id, "
                           "point_type HAVING COUNT(*) > 1) g"));
        QVERIFY(extra > 0);
        auto *mode = m_window->findChild<Tile *>(QStringLiteral("tileMode"));
        auto *duplicates = m_window->findChild<Tile *>(QStringLiteral("tileDuplicates"));
        auto *money = m_window->findChild<Tile *>(QStringLiteral("tileMoney"));
        auto *instances = m_window->findChild<Tile *>(QStringLiteral("tileInstances"));
        QVERIFY(mode && duplicates && money && instances);
        QTRY_COMPARE_WITH_TIMEOUT(mode->value(), QStringLiteral("NORMAL"), 20000);
        QCOMPARE(duplicates->value(), QLocale().toString(extra));
        // 100 points = 1 yuan by default: points count one fen each.
        QCOMPARE(money->value(),
                 QStringLiteral("¥%1.%2").arg(fen / 100).arg(fen % 100, 2, 10, QLatin1Char('0')));
        QCOMPARE(instances->value(), QStringLiteral("0 / 2"));
        QVERIFY(m_window->findChild<QLabel *>(QStringLiteral("headline"))
                    ->text()
                    .contains(QStringLiteral("sandbox")));

        QTest::mouseClick(duplicates, Qt::LeftButton);
        auto *stack = m_window->findChild<QStackedWidget *>();
        QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("duplicatesPage"));
        m_window->showPage(Page::OverviewId);
        QTest::mouseClick(m_window->findChild<Tile *>(QStringLiteral("tileBacklog")),
                          Qt::LeftButton);
        QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("backlogPage"));
        m_window->showPage(Page::OverviewId);
    }

    void stateMachineShowsCountsAndRejectedEdges()
    {
        m_window->showPage(Page::StateMachineId);
        auto *page = static_cast<StateMachinePage *>(m_window->page(Page::StateMachineId));
        StateMachineScene *scene = page->scene();
        QTRY_VERIFY_WITH_TIMEOUT(
            findItem(scene, StateMachineScene::NameKey, QStringLiteral("PAID")) != nullptr, 20000);
        // The page counts over a window (24 hours at first); the demo's orders and
        // transitions all fall within the last 30 days. A state counts the orders that entered it.
        page->findChild<QComboBox *>(QStringLiteral("windowCombo"))->setCurrentIndex(3);
        const auto shown = [scene](const char *state) {
            auto *count = static_cast<QGraphicsSimpleTextItem *>(
                findItem(scene, StateMachineScene::KindKey, QStringLiteral("stateCount"),
                         StateMachineScene::NameKey, QString::fromLatin1(state)));
            return count ? count->text() : QString();
        };
        for (const char *state : {"PENDING", "PAID", "CLOSED", "REFUNDING", "REFUNDED"}) {
            const QString sql = qstrcmp(state, "PENDING") == 0
                                    ? QStringLiteral("SELECT COUNT(*) FROM orders")
                                    : QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE "
                                                     "accepted = 1 AND to_state = '%1'")
                                          .arg(QLatin1String(state));
            const qint64 expected = test::count(m_demo->dsn(), sql);
            QVERIFY(expected > 0);
            QTRY_COMPARE_WITH_TIMEOUT(shown(state), QLocale().toString(expected), 20000);
        }
        const qint64 paidTwice = test::count(
            m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM order_state_log WHERE from_state = "
                                          "'PAID' AND to_state = 'PAID' AND accepted = 0"));
        QVERIFY(paidTwice > 0);
        QGraphicsItem *loop = nullptr;
        for (QGraphicsItem *item : scene->items())
            if (item->data(StateMachineScene::KindKey) == QStringLiteral("edgeLabel") &&
                item->data(StateMachineScene::FromKey) == QStringLiteral("PAID") &&
                item->data(StateMachineScene::ToKey) == QStringLiteral("PAID"))
                loop = item;
        QVERIFY(loop);
        QVERIFY(loop->data(StateMachineScene::RejectedKey).toBool());
        QCOMPARE(loop->data(StateMachineScene::CountKey).toLongLong(), paidTwice);
        QCOMPARE(static_cast<QGraphicsSimpleTextItem *>(loop)->brush().color(), palette::danger());

        // Clicking the rejected edge lists its orders; the list leads to the evidence.
        scene->clearSelection(); // as a click does: the page preselected the busiest rejected edge
        loop->setSelected(true);
        QTRY_COMPARE_WITH_TIMEOUT(qint64(page->orders()->rowCount()), paidTwice, 20000);
        auto *table = page->findChild<QTableView *>(QStringLiteral("ordersTable"));
        const QModelIndex first = page->orders()->index(0, 0);
        Q_EMIT table->activated(first);
        auto *evidence = static_cast<EvidencePage *>(m_window->page(Page::EvidenceId));
        QCOMPARE(evidence->orderId(), first.data(OrderModel::OrderIdRole).toLongLong());
        QCOMPARE(m_window->findChild<QStackedWidget *>()->currentWidget(), evidence);
    }

    void duplicatesTableHoldsEveryGroup()
    {
        m_window->showPage(Page::DuplicatesId);
        auto *page = static_cast<DuplicatesPage *>(m_window->page(Page::DuplicatesId));
        const qint64 groups = test::count(
            m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM (SELECT order_id FROM user_coupon "
                                          "GROUP BY order_id, coupon_template_id "
                                          "HAVING COUNT(*) > 1 UNION ALL SELECT order_id FROM "
                                          "point_log GROUP BY order_id, point_type "
                                          "HAVING COUNT(*) > 1) g"));
        auto *table = page->findChild<QTableView *>(QStringLiteral("duplicatesTable"));
        QTRY_VERIFY_WITH_TIMEOUT(!page->model()->isLoading() && page->model()->rowCount() > 0,
                                 20000);
        // The view fetches more as needed; the demo's groups fit in the first page.
        QTRY_COMPARE_WITH_TIMEOUT(qint64(table->model()->rowCount()), groups, 20000);
        auto *totals = page->findChild<QLabel *>(QStringLiteral("totalsLabel"));
        QTRY_VERIFY_WITH_TIMEOUT(
            totals->text().contains(QStringLiteral("%1 open duplicate groups").arg(groups)), 20000);
        // The chart over time holds every extra copy once.
        const qint64 extra = test::count(
            m_demo->dsn(), QStringLiteral("SELECT SUM(n - 1) FROM (SELECT COUNT(*) AS n FROM "
                                          "user_coupon GROUP BY order_id, coupon_template_id "
                                          "HAVING COUNT(*) > 1 UNION ALL SELECT COUNT(*) FROM "
                                          "point_log GROUP BY order_id, point_type "
                                          "HAVING COUNT(*) > 1) g"));
        auto *charts = page->findChild<DuplicateCharts *>();
        QTRY_VERIFY_WITH_TIMEOUT(!charts->timelineChart()->series().isEmpty(), 20000);
        auto *series = qobject_cast<QStackedBarSeries *>(charts->timelineChart()->series().first());
        QVERIFY(series);
        double plotted = 0;
        for (QBarSet *set : series->barSets())
            plotted += set->sum();
        QCOMPARE(qint64(plotted), extra);
    }

    void evidenceMarksTheEarlyReleaseInRed()
    {
        const qint64 unsafeOrder = test::count(
            m_demo->dsn(), QStringLiteral("SELECT MIN(order_id) FROM callback_trace WHERE handler "
                                          "= 'unsafe-demo' AND lock_released_at < committed_at"));
        const qint64 safeOrder = test::count(
            m_demo->dsn(),
            QStringLiteral("SELECT MIN(order_id) FROM callback_trace WHERE handler = 'safe'"));
        m_window->openOrder(unsafeOrder);
        auto *page = static_cast<EvidencePage *>(m_window->page(Page::EvidenceId));
        auto *findings = page->findChild<QLabel *>(QStringLiteral("findingsLabel"));
        QTRY_VERIFY_WITH_TIMEOUT(findings->text().contains(QStringLiteral("released its lock")),
                                 20000);
        QVERIFY(findings->text().contains(QStringLiteral("before its transaction committed")));
        // The demo's incident: A releases at +30 ms and commits at +75 ms; B releases 1 ms early.
        QCOMPARE(countItems(page->scene(), SwimlaneScene::KindKey, QStringLiteral("unsafeRelease")),
                 2);
        QStringList words;
        for (QGraphicsItem *item : page->scene()->items()) {
            if (item->data(SwimlaneScene::KindKey).toString() != QLatin1String("unsafeRelease"))
                continue;
            QCOMPARE(static_cast<QAbstractGraphicsShapeItem *>(item)->pen().color(),
                     palette::danger());
            words << item->data(SwimlaneScene::TextKey).toString();
        }
        words.sort();
        QCOMPARE(words, QStringList({QStringLiteral("⚠ lock released 1.000 ms before commit"),
                                     QStringLiteral("⚠ lock released 45.000 ms before commit")}));

        m_window->openOrder(safeOrder);
        QTRY_VERIFY_WITH_TIMEOUT(findings->text().contains(QStringLiteral("Nothing wrong")), 20000);
        QCOMPARE(countItems(page->scene(), SwimlaneScene::KindKey, QStringLiteral("unsafeRelease")),
                 0);
    }

    void instancesShowTheUnsafeHandler()
    {
        m_window->showPage(Page::InstancesId);
        auto *page = static_cast<InstancesPage *>(m_window->page(Page::InstancesId));
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 2, 20000);
        for (int row = 0; row < 2; ++row) {
            QVERIFY(page->model()->index(row, 0).data(InstanceModel::UnsafeRole).toBool());
            QCOMPARE(page->model()->index(row, InstanceModel::StateColumn).data().toString(),
                     QStringLiteral("stopped"));
        }
    }

    void aLiveInstanceIsAskedForItsHealth()
    {
        test::FakeInstance fake;
        const auto heartbeat = [&] {
            db::Connection c(m_demo->dsn(), QStringLiteral("t"));
            db::exec(c.database(),
                     QStringLiteral(
                         "INSERT INTO callback_instance (id, host, listen, handler, last_seen_at, "
                         "switch_version_applied, mode_applied) "
                         "VALUES ('live-a', 'here', ?, 'safe', UTC_TIMESTAMP(3), 1, 'NORMAL') "
                         "ON DUPLICATE KEY UPDATE last_seen_at = UTC_TIMESTAMP(3)"),
                     {fake.listen()});
        };
        heartbeat();
        auto *page = static_cast<InstancesPage *>(m_window->page(Page::InstancesId));
        page->refresh();
        InstanceModel *model = page->model();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, 20000);
        const int row = 2; // ordered by id: callbackd-a, callbackd-b, live-a
        QCOMPARE(model->index(row, InstanceModel::IdColumn).data().toString(),
                 QStringLiteral("live-a"));
        QVERIFY(model->index(row, 0).data(InstanceModel::AliveRole).toBool());
        QVERIFY(!model->index(row, 0).data(InstanceModel::UnsafeRole).toBool());
        QTRY_COMPARE_WITH_TIMEOUT(
            model->index(row, InstanceModel::EndpointColumn).data().toString(),
            QStringLiteral("ok, db ok"), 20000);
        // The endpoint reports RECORD_ONLY and switch version 3; the database's switch is v1.
        QCOMPARE(model->index(row, InstanceModel::ModeColumn).data().toString(),
                 QStringLiteral("RECORD_ONLY"));
        QVERIFY(model->index(row, InstanceModel::SwitchColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("v3")));
        // A second scrape gives the rate.
        heartbeat();
        page->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(model->index(row, InstanceModel::RateColumn).data().toString() !=
                                     QStringLiteral("—"),
                                 20000);
        // Written as the locale writes numbers: "2,500.0" at a high rate.
        QVERIFY(QLocale().toDouble(model->index(row, InstanceModel::RateColumn).data().toString()) >
                0);
        {
            db::Connection c(m_demo->dsn(), QStringLiteral("t"));
            db::execDirect(c.database(),
                           QStringLiteral("DELETE FROM callback_instance WHERE id = 'live-a'"));
        }
    }

    // A gateway's row says it forwards, to which upstream, and whether that upstream answers;
    // a handler's row has no upstream.
    void gatewaysShowTheirUpstream()
    {
        test::insertGatewayInstances(m_demo->dsn());
        m_window->showPage(Page::InstancesId);
        auto *page = static_cast<InstancesPage *>(m_window->page(Page::InstancesId));
        page->refresh();
        InstanceModel *model = page->model();
        // Ordered by id: callbackd-a, callbackd-b, gateway-a, gateway-b, handler-c.
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 5, 20000);
        const auto cell = [&](int row, int column) {
            return model->index(row, column).data().toString();
        };
        QCOMPARE(cell(2, InstanceModel::IdColumn), QStringLiteral("gateway-a"));
        QCOMPARE(cell(2, InstanceModel::HandlerColumn),
                 QStringLiteral("gateway → ") + test::gatewayUpstream());
        QCOMPARE(cell(4, InstanceModel::HandlerColumn), QStringLiteral("safe"));
        // Checked 2 s and 40 s before the rows were written, by the server's clock.
        const QRegularExpression ok(QStringLiteral("^ok, checked [2-9] s ago$"));
        QVERIFY2(ok.match(cell(2, InstanceModel::UpstreamColumn)).hasMatch(),
                 qPrintable(cell(2, InstanceModel::UpstreamColumn)));
        QVERIFY2(
            cell(3, InstanceModel::UpstreamColumn).startsWith(QStringLiteral("failing, checked 4")),
            qPrintable(cell(3, InstanceModel::UpstreamColumn)));
        QCOMPARE(cell(4, InstanceModel::UpstreamColumn), QStringLiteral("—"));
        QCOMPARE(model->headerData(InstanceModel::UpstreamColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Upstream"));
        // Read a moment after their heartbeat: alive, so the summary counts them.
        QVERIFY(model->index(3, 0).data(InstanceModel::AliveRole).toBool());
        QCOMPARE(model->index(3, InstanceModel::UpstreamColumn)
                     .data(Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 palette::danger());
        auto *summary = page->findChild<QLabel *>(QStringLiteral("instancesSummary"));
        QVERIFY2(summary->text().contains(QStringLiteral("2 of them in gateway mode")),
                 qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(
                     QStringLiteral("1 gateway(s) get no answer from their upstream")),
                 qPrintable(summary->text()));
        test::deleteGatewayInstances(m_demo->dsn());
        page->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 20000);
    }

    // Each delivery of a gateway's payment has its forward drawn with the upstream's answer;
    // the callback is shown as WeChat Pay sent it, its body said to be ciphertext.
    void evidenceShowsTheForwards()
    {
        m_forwarded = test::insertForwardedPayment(m_demo->dsn());
        const test::ForwardedPayment &payment = m_forwarded;
        m_window->openOrder(payment.orderId);
        auto *page = static_cast<EvidencePage *>(m_window->page(Page::EvidenceId));
        QTRY_COMPARE_WITH_TIMEOUT(
            countItems(page->scene(), SwimlaneScene::KindKey, QStringLiteral("forward")), 2, 20000);
        QStringList answers;
        for (QGraphicsItem *item : page->scene()->items())
            if (item->data(SwimlaneScene::KindKey).toString() == QLatin1String("forward"))
                answers << item->data(SwimlaneScene::TextKey).toString();
        answers.sort();
        QCOMPARE(answers, QStringList({QStringLiteral("→ upstream answered HTTP 200"),
                                       QStringLiteral("→ upstream answered HTTP 503")}));
        auto *findings = page->findChild<QLabel *>(QStringLiteral("findingsLabel"));
        QVERIFY2(findings->text().contains(QStringLiteral("Nothing wrong")),
                 qPrintable(findings->text()));

        QCOMPARE(page->details()->tabText(1), QStringLiteral("Callbacks as received (1)"));
        page->details()->setCurrentIndex(1);
        QCOMPARE(page->findChild<QPlainTextEdit *>(QStringLiteral("rawBody"))->toPlainText(),
                 QString::fromUtf8(payment.rawBody));
        const QString headers =
            page->findChild<QPlainTextEdit *>(QStringLiteral("rawHeaders"))->toPlainText();
        QVERIFY2(headers.contains(
                     QStringLiteral("Wechatpay-Serial: 5157F09EFDC096DE15EBE81A47057A7232F1B8E1")),
                 qPrintable(headers));
        QCOMPARE(headers.count(QLatin1Char('\n')), 6); // seven headers, one a line
        auto *note = page->findChild<QLabel *>(QStringLiteral("bodyNote"));
        QVERIFY(note->isVisibleTo(page));
        QVERIFY(note->text().contains(QStringLiteral("ciphertext")));
        QVERIFY(page->findChild<QLabel *>(QStringLiteral("bodyTitle"))
                    ->text()
                    .contains(QStringLiteral("as received (wechatpay)")));
        page->details()->setCurrentIndex(0);
    }

    // A gateway's row still without a final answer is on the backlog page, in a list of its
    // own with its forwards so far, apart from the payments.
    void theBacklogListsAGatewaysRowsApart()
    {
        QVERIFY(!m_forwarded.payNo.isEmpty());
        const auto setStatus = [this](const QString &assignments) {
            db::Connection c(m_demo->dsn(), QStringLiteral("t"));
            db::exec(
                c.database(),
                QStringLiteral("UPDATE pay_callback_log SET %1 WHERE pay_no = ?").arg(assignments),
                {m_forwarded.payNo});
        };
        setStatus(QStringLiteral("status = 'FORWARDING', upstream_status = NULL, "
                                 "upstream_error = 'timed out after 5 s'"));
        m_window->showPage(Page::BacklogId);
        auto *page = static_cast<BacklogPage *>(m_window->page(Page::BacklogId));
        page->refresh();
        QTableView *gateway = page->gatewayTable();
        QTRY_COMPARE_WITH_TIMEOUT(gateway->model()->rowCount(), 1, 20000);
        const QModelIndex forwards = gateway->model()->index(0, BacklogModel::ForwardsColumn);
        QCOMPARE(forwards.data().toString(),
                 QStringLiteral("FORWARDING · 2 forward(s) · no answer"));
        QVERIFY2(forwards.data(Qt::ToolTipRole)
                     .toString()
                     .contains(QStringLiteral("The last forward got none: timed out after 5 s.")),
                 qPrintable(forwards.data(Qt::ToolTipRole).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(page->lists()->isTabVisible(2), 20000);
        QCOMPARE(page->lists()->tabText(2), QStringLiteral("Gateway (1)"));
        auto *headline = page->findChild<QLabel *>(QStringLiteral("backlogHeadline"));
        QVERIFY2(headline->text().contains(QStringLiteral("1 gateway callback(s)</b> without a "
                                                          "final answer")),
                 qPrintable(headline->text()));
        for (int row = 0; row < page->table()->model()->rowCount(); ++row)
            QVERIFY(page->table()->model()->index(row, BacklogModel::PayNoColumn).data() !=
                    QString::fromUtf8(m_forwarded.payNo));
        setStatus(QStringLiteral("status = 'FORWARDED', upstream_status = 200, "
                                 "upstream_error = ''"));
        page->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(gateway->model()->rowCount(), 0, 20000);
    }

    void connectionLossShowsABannerAndRecovers()
    {
        m_window->showPage(Page::DuplicatesId);
        auto *duplicates = static_cast<DuplicatesPage *>(m_window->page(Page::DuplicatesId));
        auto *user = duplicates->findChild<QLineEdit *>(QStringLiteral("userFilter"));
        user->setText(QStringLiteral("42")); // what the user was doing must survive
        Page *overview = m_window->page(Page::OverviewId);
        QTRY_VERIFY_WITH_TIMEOUT(overview->worker()->serverConnectionId() != 0, 20000);
        {
            db::Connection admin(m_demo->dsn(), QStringLiteral("t"));
            db::execDirect(admin.database(),
                           QStringLiteral("KILL %1").arg(overview->worker()->serverConnectionId()));
        }
        overview->refresh();
        auto *banner = m_window->findChild<QWidget *>(QStringLiteral("connectionBanner"));
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), 20000);
        QVERIFY(m_window->findChild<QLabel *>(QStringLiteral("bannerText"))
                    ->text()
                    .contains(QStringLiteral("lost")));
        QTRY_VERIFY_WITH_TIMEOUT(!banner->isVisible(), 20000);
        QCOMPARE(user->text(), QStringLiteral("42"));
        QCOMPARE(m_window->page(Page::DuplicatesId), duplicates);
    }

    // A query the database refuses shows a sentence on the page: never the statement, nor the
    // server's own wording (both are in the log file).
    void aRefusedQueryReadsAsASentence()
    {
        test::ScratchDatabase scratch(QStringLiteral("refused"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        {
            db::Connection admin(scratch.dsn(), QStringLiteral("t"));
            db::execDirect(admin.database(), QStringLiteral("DROP TABLE callback_instance"));
            db::execDirect(admin.database(), QStringLiteral("DROP TABLE ops_audit_log"));
        }
        const auto verifyNoSql = [](const QString &text) {
            for (const char *word :
                 {"SELECT", "FROM", "WHERE", "INSERT", "Table '", "doesn't exist", "`"})
                QVERIFY2(!text.contains(QLatin1String(word)), qPrintable(text));
        };
        InstancesPage instances(scratch.dsn()); // a page's own query
        auto *summary = instances.findChild<QLabel *>(QStringLiteral("instancesSummary"));
        QTRY_VERIFY_WITH_TIMEOUT(!summary->text().isEmpty(), 20000);
        QCOMPARE(summary->text(),
                 QStringLiteral(
                     "table callback_instance is missing from the database (run payops migrate?)"));
        verifyNoSql(summary->text());
        AuditPage audit(scratch.dsn()); // a paged model's
        auto *result = audit.findChild<QLabel *>(QStringLiteral("auditResult"));
        QTRY_VERIFY_WITH_TIMEOUT(result->text().contains(QStringLiteral("ops_audit_log")), 20000);
        verifyNoSql(result->text());
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_demo;
    std::unique_ptr<MainWindow> m_window;
    test::ForwardedPayment m_forwarded; // written by evidenceShowsTheForwards
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsolePages test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolepages.moc"
