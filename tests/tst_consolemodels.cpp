#include "console/orderevidence.h"
#include "db/connection.h"
#include "db/dbworker.h"
#include "demodatabase.h"
#include "models/duplicatemodel.h"
#include "models/eventmodel.h"
#include "models/instancemodel.h"
#include "models/ordermodel.h"
#include "domain/duplicatecount.h"
#include "testmain.h"

#include <QAbstractItemModelTester>
#include <QApplication>

using namespace payops;

namespace {

// Pulls every page in, the way a view scrolled to the bottom would.
template <typename Model>
void fetchAll(Model &model)
{
    for (int guard = 0; guard < 1000; ++guard) {
        QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 20000);
        if (model.atEnd())
            return;
        model.fetchMore();
    }
    QFAIL("the model never reached its end");
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
        db::DbWorker worker(m_demo->dsn());
        DuplicateModel model(&worker);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
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
            const QString key = QStringLiteral("%1/%2/%3").arg(g.orderId).arg(int(g.kind)).arg(g.key);
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
        db::DbWorker worker(m_demo->dsn());
        DuplicateModel model(&worker);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
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
            QSqlQuery dup = db::exec(db, QStringLiteral(
                "SELECT MIN(id), MAX(id), order_id FROM point_log GROUP BY order_id, point_type HAVING COUNT(*) > 1 LIMIT 1"));
            QVERIFY(dup.next());
            db::exec(db, QStringLiteral("UPDATE point_log SET superseded_by = ? WHERE id = ?"), {dup.value(0), dup.value(1)});
            db::exec(db, QStringLiteral("INSERT INTO compensation (target_table, target_id, kept_id, order_id, action) "
                                        "VALUES ('point_log', ?, ?, ?, 'reverse_points')"),
                     {dup.value(1), dup.value(0), dup.value(2)});
        }
        db::DbWorker other(scratch->dsn());
        DuplicateModel after(&other);
        QAbstractItemModelTester tester2(&after, QAbstractItemModelTester::FailureReportingMode::QtTest);
        after.reload(compensated);
        fetchAll(after);
        QCOMPARE(after.rowCount(), 1);
        QCOMPARE(after.group(0).compensated, 1);
        QCOMPARE(after.group(0).live, 1);
        QCOMPARE(after.group(0).atRiskFen(), qint64(0));
    }

    void orderModelListsAStateAndAnEdge()
    {
        db::DbWorker worker(m_demo->dsn());
        OrderModel model(&worker);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::OrderSelection paid;
        paid.kind = console::OrderSelection::Kind::State;
        paid.state = QStringLiteral("PAID");
        model.reload(paid);
        fetchAll(model);
        QCOMPARE(qint64(model.rowCount()), test::count(m_demo->dsn(), QStringLiteral("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")));

        console::OrderSelection rejected;
        rejected.kind = console::OrderSelection::Kind::Edge;
        rejected.from = QStringLiteral("PENDING");
        rejected.to = QStringLiteral("PAID");
        rejected.rejected = true;
        model.reload(rejected);
        fetchAll(model);
        QCOMPARE(qint64(model.rowCount()), test::count(m_demo->dsn(), QStringLiteral(
            "SELECT COUNT(DISTINCT order_id) FROM order_state_log WHERE from_state = 'PENDING' AND to_state = 'PAID' AND accepted = 0")));
        QVERIFY(model.rowCount() > 0);
        QVERIFY(!model.index(0, OrderModel::PayNoColumn).data().toString().isEmpty());
    }

    void instanceModelJoinsRowsAndHealth()
    {
        InstanceModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
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
        QVERIFY(model.index(0, InstanceModel::SwitchColumn).data().toString().contains(QStringLiteral("behind")));
        QCOMPARE(model.index(1, InstanceModel::StateColumn).data().toString(), QStringLiteral("stopped"));
        console::InstanceHealth health;
        health.id = QStringLiteral("a");
        health.reachable = true;
        health.switchVersion = 3;
        health.callbacksPerSecond = 12.5;
        model.setHealth(health);
        QCOMPARE(model.index(0, InstanceModel::RateColumn).data().toString(), QStringLiteral("12.5"));
        QVERIFY(model.index(0, InstanceModel::SwitchColumn).data().toString().contains(QStringLiteral("current")));
        model.setInstances(list); // same rows: no reset
        list.rows.removeLast();
        model.setInstances(list);
        QCOMPARE(model.rowCount(), 1);
    }

    void eventModelTellsTheStoryInOrder()
    {
        EventModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        console::OrderEvidence evidence;
        {
            db::Connection c(m_demo->dsn(), QStringLiteral("t"));
            const qint64 orderId = db::scalar(c.database(), QStringLiteral(
                "SELECT MIN(order_id) FROM callback_trace WHERE handler = 'unsafe-demo'")).toLongLong();
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
            if (model.index(row, EventModel::WhatColumn).data().toString() == QStringLiteral("lock released BEFORE commit"))
                sawEarlyRelease = model.index(row, 0).data(EventModel::BadRole).toBool();
        }
        QVERIFY(sawEarlyRelease);
        model.setEvidence(console::OrderEvidence{});
        QCOMPARE(model.rowCount(), 0);
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
