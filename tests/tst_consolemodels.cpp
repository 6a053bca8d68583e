#include "callbackfixture.h"
#include "console/consolesettings.h"
#include "console/displayformat.h"
#include "console/orderevidence.h"
#include "console/orderlist.h"
#include "console/worker.h"
#include "db/connection.h"
#include "demodatabase.h"
#include "domain/money/auditlog.h"
#include "domain/money/compensationrequest.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "models/auditmodel.h"
#include "models/backlogmodel.h"
#include "models/compensationbatchmodel.h"
#include "models/compensationrequestmodel.h"
#include "models/duplicatemodel.h"
#include "models/eventmodel.h"
#include "models/instancemodel.h"
#include "models/ordermodel.h"
#include "palette.h"
#include "testmain.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBrush>

using namespace payops;

namespace {

// Pulls every page in, the way a view scrolled to the bottom would.
template <typename Model> void fetchAll(Model &model)
{
    for (int guard = 0; guard < 1000; ++guard) {
        QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 20000);
        if (model.atEnd())
            return;
        model.fetchMore();
    }
    QFAIL("the model never reached its end");
}

// One column of every row, top to bottom.
QStringList column(const QAbstractItemModel &model, int column, int role = Qt::DisplayRole)
{
    QStringList values;
    for (int row = 0; row < model.rowCount(); ++row)
        values << model.index(row, column).data(role).toString();
    return values;
}

// The first column of every row a statement returns, as text.
QStringList sqlColumn(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    QSqlQuery query = db::exec(connection.database(), sql);
    QStringList values;
    while (query.next())
        values << query.value(0).toString();
    return values;
}

} // namespace

class TestConsoleModels final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { m_demo = test::demoDatabase(); }
    void cleanupTestCase() { m_demo.reset(); }

    void duplicateModelPagesThroughEveryGroup()
    {
        console::Worker worker(m_demo->dsn());
        DuplicateModel model(&worker);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setPageSize(10); // many small pages: the keyset cursor must neither skip nor repeat
        model.reload(console::DuplicateFilter{});
        fetchAll(model);

        LiveDuplicateCount expected;
        {
            db::Connection connection(m_demo->dsn(), QStringLiteral("t"));
            expected = countLiveDuplicates(connection.database());
        }
        QVERIFY(expected.couponGroups > 0);
        QCOMPARE(qint64(model.rowCount()), expected.couponGroups + expected.pointGroups);
        QSet<QString> seen;
        qint64 lastOrder = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const auto &g = model.group(row);
            QVERIFY(g.orderId >= lastOrder);
            lastOrder = g.orderId;
            const QString key =
                QStringLiteral("%1/%2/%3").arg(g.orderId).arg(int(g.kind)).arg(g.key);
            QVERIFY2(!seen.contains(key), qPrintable(key));
            seen.insert(key);
        }
        QCOMPARE(model.index(0, DuplicateModel::CopiesColumn).data().toInt(), 2);

        // Filters: points only, and one user only.
        console::DuplicateFilter points;
        points.kind = console::DuplicateKind::Points;
        model.reload(points);
        fetchAll(model);
        QCOMPARE(qint64(model.rowCount()), expected.pointGroups);
        console::DuplicateFilter oneUser;
        oneUser.userId = model.group(0).userId;
        model.reload(oneUser);
        fetchAll(model);
        QVERIFY(model.rowCount() >= 1);
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.group(row).userId, oneUser.userId);
    }

    void compensatedGroupsMoveBetweenFilters()
    {
        console::Worker worker(m_demo->dsn());
        DuplicateModel model(&worker);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::DuplicateFilter compensated;
        compensated.compensation = console::CompensationFilter::Compensated;
        model.reload(compensated);
        fetchAll(model);
        QCOMPARE(model.rowCount(), 0);
        // Supersede one duplicate points row the way compensation does, and record it.
        const auto scratch = test::demoDatabase();
        {
            db::Connection c(scratch->dsn(), QStringLiteral("t"));
            const QSqlDatabase db = c.database();
            QSqlQuery dup = db::exec(
                db, QStringLiteral("SELECT MIN(id), MAX(id), order_id FROM point_log GROUP BY "
                                   "order_id, point_type HAVING COUNT(*) > 1 LIMIT 1"));
            QVERIFY(dup.next());
            db::exec(db, QStringLiteral("UPDATE point_log SET superseded_by = ? WHERE id = ?"),
                     {dup.value(0), dup.value(1)});
            db::exec(
                db,
                QStringLiteral(
                    "INSERT INTO compensation (target_table, target_id, kept_id, order_id, action) "
                    "VALUES ('point_log', ?, ?, ?, 'reverse_points')"),
                {dup.value(1), dup.value(0), dup.value(2)});
        }
        console::Worker other(scratch->dsn());
        DuplicateModel after(&other);
        QAbstractItemModelTester tester2(&after,
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
        after.reload(compensated);
        fetchAll(after);
        QCOMPARE(after.rowCount(), 1);
        QCOMPARE(after.group(0).compensated, 1);
        QCOMPARE(after.group(0).live, 1);
        QCOMPARE(after.group(0).atRiskFen(), qint64(0));
    }

    void orderModelListsAStateAndAnEdge()
    {
        console::Worker worker(m_demo->dsn());
        OrderModel model(&worker);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::OrderSelection paid;
        paid.kind = console::OrderSelection::Kind::State;
        paid.state = QStringLiteral("PAID");
        model.reload(paid);
        fetchAll(model);
        QCOMPARE(qint64(model.rowCount()),
                 test::count(m_demo->dsn(),
                             QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")));

        console::OrderSelection rejected;
        rejected.kind = console::OrderSelection::Kind::Edge;
        rejected.from = QStringLiteral("PENDING");
        rejected.to = QStringLiteral("PAID");
        rejected.rejected = true;
        model.reload(rejected);
        fetchAll(model);
        QCOMPARE(qint64(model.rowCount()),
                 test::count(m_demo->dsn(),
                             QStringLiteral(
                                 "SELECT COUNT(DISTINCT order_id) FROM order_state_log WHERE "
                                 "from_state = 'PENDING' AND to_state = 'PAID' AND accepted = 0")));
        QVERIFY(model.rowCount() > 0);
        QVERIFY(!model.index(0, OrderModel::PayNoColumn).data().toString().isEmpty());
    }

    // The order list and the evidence read an order through one reader: the same row, field by
    // field, and each field what the table holds.
    void theListAndTheEvidenceReadAnOrderAlike()
    {
        db::Connection c(m_demo->dsn(), QStringLiteral("t"));
        const QSqlDatabase db = c.database();
        for (const QString &status : {QStringLiteral("PAID"), QStringLiteral("PENDING")}) {
            QSqlQuery expected =
                db::exec(db,
                         QStringLiteral("SELECT id, user_id, amount_fen, pay_no, paid_at IS NULL "
                                        "FROM orders WHERE status = ? "
                                        "ORDER BY id LIMIT 1"),
                         {status});
            QVERIFY2(expected.next(), qPrintable(status));
            const qint64 id = expected.value(0).toLongLong();
            console::OrderSelection selection;
            selection.kind = console::OrderSelection::Kind::State;
            selection.state = status;
            const QList<console::OrderRow> page = console::loadOrderPage(db, selection, id - 1, 1);
            QCOMPARE(page.size(), 1);
            const console::OrderRow listed = page.first();
            const console::OrderEvidence evidence = console::loadOrderEvidence(db, id);
            QVERIFY(evidence.found);
            const console::OrderRow shown = evidence.order;
            for (const console::OrderRow &row : {listed, shown}) {
                QCOMPARE(row.id, id);
                QCOMPARE(row.userId, expected.value(1).toLongLong());
                QCOMPARE(row.status, status);
                QCOMPARE(row.amountFen, expected.value(2).toLongLong());
                QCOMPARE(row.payNo, expected.value(3).toByteArray());
                QVERIFY(row.createdMicros > 0);
                QCOMPARE(row.paidMicros == 0, expected.value(4).toBool());
            }
            QCOMPARE(shown.createdMicros, listed.createdMicros);
            QCOMPARE(shown.paidMicros, listed.paidMicros);
        }
        QVERIFY(!console::loadOrderEvidence(db, -1).found);
    }

    void instanceModelJoinsRowsAndHealth()
    {
        InstanceModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::InstanceList list;
        list.switchVersion = 3;
        console::InstanceRow a;
        a.id = QStringLiteral("a");
        a.handler = QStringLiteral("unsafe-demo");
        a.alive = true;
        a.switchVersionApplied = 2;
        console::InstanceRow b;
        b.id = QStringLiteral("b");
        b.handler = QStringLiteral("safe");
        b.stopped = true;
        list.rows = {a, b};
        model.setInstances(list);
        QCOMPARE(model.rowCount(), 2);
        QVERIFY(model.index(0, 0).data(InstanceModel::UnsafeRole).toBool());
        QVERIFY(model.index(0, InstanceModel::HandlerColumn).data(Qt::BackgroundRole).isValid());
        QVERIFY(model.index(0, InstanceModel::SwitchColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("behind")));
        QCOMPARE(model.index(1, InstanceModel::StateColumn).data().toString(),
                 QStringLiteral("stopped"));
        console::InstanceHealth health;
        health.id = QStringLiteral("a");
        health.reachable = true;
        health.switchVersion = 3;
        health.callbacksPerSecond = 12.5;
        model.setHealth(health);
        QCOMPARE(model.index(0, InstanceModel::RateColumn).data().toString(),
                 QStringLiteral("12.5"));
        QVERIFY(model.index(0, InstanceModel::SwitchColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("current")));
        model.setInstances(list); // same rows: no reset
        list.rows.removeLast();
        model.setInstances(list);
        QCOMPARE(model.rowCount(), 1);
    }

    // A gateway's upstream: its health, how long ago it was checked, in the health's colour
    // while the gateway lives; a stopped gateway's last word is history, in muted colours.
    void instanceModelSaysAGatewaysUpstream()
    {
        InstanceModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::InstanceRow gateway;
        gateway.id = QStringLiteral("g");
        gateway.mode = QStringLiteral("gateway");
        gateway.upstream = QStringLiteral("http://team-handler:8080/notify");
        gateway.alive = true;
        console::InstanceRow handler;
        handler.id = QStringLiteral("h");
        handler.mode = QStringLiteral("handler");
        handler.handler = QStringLiteral("safe");
        handler.alive = true;
        console::InstanceList list;
        list.rows = {gateway, handler};
        const auto upstream = [&](const console::InstanceRow &row) {
            list.rows.first() = row;
            model.setInstances(list);
            return model.index(0, InstanceModel::UpstreamColumn).data().toString();
        };
        QCOMPARE(upstream(gateway), QStringLiteral("unknown, not checked yet"));
        gateway.upstreamState = QStringLiteral("failing");
        gateway.secondsSinceUpstreamCheck = 150;
        QCOMPARE(upstream(gateway), QStringLiteral("failing, checked 2 min ago"));
        QCOMPARE(model.index(0, InstanceModel::UpstreamColumn).data(Qt::ForegroundRole),
                 QVariant(QBrush(palette::danger())));
        gateway.upstreamState = QStringLiteral("ok");
        gateway.secondsSinceUpstreamCheck = 3 * 3600;
        QCOMPARE(upstream(gateway), QStringLiteral("ok, checked 3 h ago"));
        QCOMPARE(model.index(0, InstanceModel::UpstreamColumn).data(Qt::ForegroundRole),
                 QVariant(QBrush(palette::ok())));
        gateway.alive = false;
        gateway.stopped = true;
        upstream(gateway);
        QCOMPARE(model.index(0, InstanceModel::UpstreamColumn).data(Qt::ForegroundRole),
                 QVariant(QBrush(palette::muted())));
        QCOMPARE(model.index(0, InstanceModel::HandlerColumn).data().toString(),
                 QStringLiteral("gateway → http://team-handler:8080/notify"));
        QCOMPARE(model.index(1, InstanceModel::HandlerColumn).data().toString(),
                 QStringLiteral("safe"));
        QCOMPARE(model.index(1, InstanceModel::UpstreamColumn).data().toString(),
                 QStringLiteral("—"));
        QVERIFY(!model.index(1, InstanceModel::UpstreamColumn).data(Qt::ForegroundRole).isValid());
    }

    void eventModelTellsTheStoryInOrder()
    {
        EventModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::OrderEvidence evidence;
        {
            db::Connection c(m_demo->dsn(), QStringLiteral("t"));
            const qint64 orderId =
                db::scalar(
                    c.database(),
                    QStringLiteral(
                        "SELECT MIN(order_id) FROM callback_trace WHERE handler = 'unsafe-demo'"))
                    .toLongLong();
            evidence = console::loadOrderEvidence(c.database(), orderId);
        }
        model.setEvidence(evidence);
        QVERIFY(model.rowCount() > 10);
        bool sawEarlyRelease = false;
        QString previous;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QString time = model.index(row, EventModel::TimeColumn).data().toString();
            QVERIFY(time >= previous);
            previous = time;
            if (model.index(row, EventModel::WhatColumn).data().toString() ==
                QStringLiteral("lock released BEFORE commit"))
                sawEarlyRelease = model.index(row, 0).data(EventModel::BadRole).toBool();
        }
        QVERIFY(sawEarlyRelease);
        model.setEvidence(console::OrderEvidence{});
        QCOMPARE(model.rowCount(), 0);

        // A later event of the trade is named beside its pay_no, not taken for the payment.
        console::OrderEvidence refunded;
        console::CallbackTrace refund;
        refund.payNo = "4200000001202612040001";
        refund.event = "REFUND.SUCCESS/50300001";
        refund.instance = QStringLiteral("gateway-a");
        refund.received = 1'000'000;
        refunded.traces << refund;
        model.setEvidence(refunded);
        QCOMPARE(model.index(0, EventModel::WhatColumn).data().toString(),
                 QStringLiteral("received 4200000001202612040001 · REFUND.SUCCESS/50300001"));
    }

    void auditModelPagesNewestFirst()
    {
        test::ScratchDatabase scratch(QStringLiteral("maudit"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        {
            db::Connection c(scratch.dsn(), QStringLiteral("t"));
            for (int i = 0; i < 23; ++i)
                appendAudit(c.database(),
                            i % 3 ? QStringLiteral("switch.flip")
                                  : QStringLiteral("compensation.freeze_coupon"),
                            QStringLiteral("user_coupon:%1").arg(i),
                            QStringLiteral("reason %1").arg(i), QStringLiteral("INC-9"), QString(),
                            QStringLiteral("{\"i\":%1}").arg(i));
        }
        console::Worker worker(scratch.dsn());
        AuditModel model(&worker);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setPageSize(4); // a page boundary inside the filter's rows, and one at its end
        model.reload({});
        fetchAll(model);
        QCOMPARE(column(model, AuditModel::IdColumn),
                 sqlColumn(scratch.dsn(),
                           QStringLiteral("SELECT id FROM ops_audit_log ORDER BY id DESC")));
        QCOMPARE(column(model, AuditModel::ActionColumn),
                 sqlColumn(scratch.dsn(),
                           QStringLiteral("SELECT action FROM ops_audit_log ORDER BY id DESC")));
        QCOMPARE(
            column(model, 0, AuditModel::AfterJsonRole),
            sqlColumn(scratch.dsn(),
                      QStringLiteral("SELECT after_json FROM ops_audit_log ORDER BY id DESC")));

        AuditFilter flips;
        flips.action = QStringLiteral("switch.");
        model.reload(flips);
        fetchAll(model);
        QCOMPARE(
            column(model, AuditModel::IdColumn),
            sqlColumn(
                scratch.dsn(),
                QStringLiteral(
                    "SELECT id FROM ops_audit_log WHERE action LIKE 'switch.%' ORDER BY id DESC")));
        AuditFilter nobody;
        nobody.actor = QStringLiteral("nobody-here");
        model.reload(nobody);
        fetchAll(model);
        QCOMPARE(model.rowCount(), 0);
    }

    void backlogModelsListRecordedAndUnmatched()
    {
        test::ScratchDatabase scratch(QStringLiteral("mbacklog"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 4);
        {
            db::Connection c(scratch.dsn(), QStringLiteral("t"));
            const auto insert = [&c](const QByteArray &payNo, qint64 order, const char *status) {
                db::exec(c.database(),
                         QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, "
                                        "amount_fen, currency, channel, "
                                        "trade_status, status, instance) VALUES (?, ?, ?, 9900, "
                                        "'CNY', 'wechat', 'SUCCESS', ?, 'inst')"),
                         {payNo, order, test::callbackBody(payNo, order, 9900),
                          QString::fromLatin1(status)});
            };
            for (int i = 0; i < 11; ++i)
                insert("REC-" + QByteArray::number(i), 1001 + i % 4, "RECORDED");
            db::execDirect(c.database(),
                           QStringLiteral("UPDATE orders SET status = 'PAID' WHERE id = 1002"));
            for (const qint64 order : {1001, 1002, 7001, 7002, 7003})
                insert("UNM-" + QByteArray::number(order), order, "UNMATCHED");
        }
        console::Worker worker(scratch.dsn());
        BacklogModel recorded(&worker, BacklogList::Recorded);
        QAbstractItemModelTester tester(&recorded,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        recorded.setPageSize(3);
        recorded.reload();
        fetchAll(recorded);
        QCOMPARE(recorded.columnCount(), int(BacklogModel::OrderNowColumn));
        QCOMPARE(column(recorded, BacklogModel::IdColumn),
                 sqlColumn(
                     scratch.dsn(),
                     QStringLiteral(
                         "SELECT id FROM pay_callback_log WHERE status = 'RECORDED' ORDER BY id")));
        QCOMPARE(column(recorded, 0, BacklogModel::RawBodyRole),
                 sqlColumn(scratch.dsn(), QStringLiteral("SELECT raw_body FROM pay_callback_log "
                                                         "WHERE status = 'RECORDED' ORDER BY id")));

        BacklogModel unmatched(&worker, BacklogList::Unmatched);
        QAbstractItemModelTester unmatchedTester(
            &unmatched, QAbstractItemModelTester::FailureReportingMode::QtTest);
        unmatched.setPageSize(2);
        unmatched.reload();
        fetchAll(unmatched);
        QCOMPARE(
            column(unmatched, BacklogModel::PayNoColumn),
            sqlColumn(
                scratch.dsn(),
                QStringLiteral(
                    "SELECT pay_no FROM pay_callback_log WHERE status = 'UNMATCHED' ORDER BY id")));
        // The order as it is now, by a join of its own: missing, PENDING or already PAID.
        QStringList expected =
            sqlColumn(scratch.dsn(),
                      QStringLiteral("SELECT COALESCE(o.status, 'missing') FROM pay_callback_log c "
                                     "LEFT JOIN orders o ON o.id = c.order_id "
                                     "WHERE c.status = 'UNMATCHED' ORDER BY c.id"));
        QCOMPARE(expected, QStringList({QStringLiteral("PENDING"), QStringLiteral("PAID"),
                                        QStringLiteral("missing"), QStringLiteral("missing"),
                                        QStringLiteral("missing")}));
        QCOMPARE(column(unmatched, BacklogModel::OrderNowColumn), expected);
    }

    void compensationModelsListRequestsAndBatches()
    {
        test::ScratchDatabase scratch(QStringLiteral("mcomp"));
        test::prepareCallbackDatabase(scratch.dsn(), QStringLiteral("current"), 0);
        QList<CompensationRequest> requests;
        QList<CompensationBatch> batches;
        {
            db::Connection c(scratch.dsn(), QStringLiteral("t"));
            const QSqlDatabase db = c.database();
            for (int i = 1; i <= 7; ++i)
                db::exec(db,
                         QStringLiteral("INSERT INTO compensation_request (scope, coupons, "
                                        "write_offs, points_rows, "
                                        "amount_fen, reason, ticket, requested_account) "
                                        "VALUES ('{}', ?, 0, ?, ?, ?, 'INC-8', CURRENT_USER())"),
                         {i, 2 * i, 1234 * i, QStringLiteral("reason %1").arg(i)});
            for (int i = 0; i < 9; ++i)
                db::exec(
                    db,
                    QStringLiteral(
                        "INSERT INTO compensation (target_table, target_id, kept_id, order_id, "
                        "action, "
                        "amount_fen, batch_id, reason, ticket) "
                        "VALUES ('user_coupon', ?, 1, ?, 'freeze_coupon', 500, ?, 'dup', 'INC-8')"),
                    {100 + i, 1000 + i, QStringLiteral("batch-%1").arg(i % 4)});
            requests = loadCompensationRequests(db);
            batches = loadCompensationBatches(db);
        }
        CompensationRequestModel requestModel;
        QAbstractItemModelTester requestTester(
            &requestModel, QAbstractItemModelTester::FailureReportingMode::QtTest);
        requestModel.setRequests(requests);
        QCOMPARE(column(requestModel, CompensationRequestModel::IdColumn),
                 sqlColumn(scratch.dsn(),
                           QStringLiteral("SELECT id FROM compensation_request ORDER BY id DESC")));
        QStringList amounts;
        for (const QString &fen : sqlColumn(
                 scratch.dsn(),
                 QStringLiteral("SELECT amount_fen FROM compensation_request ORDER BY id DESC")))
            amounts << console::formatMoney(fen.toLongLong());
        QCOMPARE(column(requestModel, CompensationRequestModel::AmountColumn), amounts);
        QCOMPARE(column(requestModel, CompensationRequestModel::StatusColumn),
                 QStringList(7, QStringLiteral("PENDING")));
        QVERIFY(requestModel.index(0, CompensationRequestModel::StatusColumn)
                    .data(Qt::ForegroundRole)
                    .isValid());
        QCOMPARE(requestModel.rowOf(requests.last().id), 6);
        QCOMPARE(requestModel.rowOf(-1), -1);
        requestModel.setRequests({});
        QCOMPARE(requestModel.rowCount(), 0);

        CompensationBatchModel batchModel;
        QAbstractItemModelTester batchTester(
            &batchModel, QAbstractItemModelTester::FailureReportingMode::QtTest);
        batchModel.setBatches(batches);
        QCOMPARE(
            column(batchModel, CompensationBatchModel::BatchColumn),
            sqlColumn(
                scratch.dsn(),
                QStringLiteral(
                    "SELECT batch_id FROM compensation GROUP BY batch_id ORDER BY MIN(id) DESC")));
        QCOMPARE(
            column(batchModel, CompensationBatchModel::ActionsColumn),
            sqlColumn(
                scratch.dsn(),
                QStringLiteral(
                    "SELECT COUNT(*) FROM compensation GROUP BY batch_id ORDER BY MIN(id) DESC")));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_demo;
};

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TestConsoleModels test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_consolemodels.moc"
