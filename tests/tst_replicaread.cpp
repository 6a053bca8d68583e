#include "callbackfixture.h"
#include "console/connectionprofile.h"
#include "console/consolesettings.h"
#include "console/readsourcemonitor.h"
#include "consolewindow.h"
#include "db/connection.h"
#include "dialogs/compensationdialog.h"
#include "dialogs/connectiondialog.h"
#include "dialogs/reportdialog.h"
#include "mainwindow.h"
#include "models/compensationbatchmodel.h"
#include "models/duplicatemodel.h"
#include "pages/auditpage.h"
#include "pages/backlogpage.h"
#include "pages/compensationpage.h"
#include "pages/duplicatespage.h"
#include "pages/reconciliationpage.h"
#include "playbook/playbookdock.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "topology.h"
#include "widgets/tile.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>

using namespace payops;

namespace {

const QString kDatabase = QStringLiteral("shop");

QString labelText(const QWidget *parent, const char *name)
{
    const auto *label = parent->findChild<QLabel *>(QString::fromLatin1(name));
    return label ? label->text() : QStringLiteral("<no %1>").arg(QString::fromLatin1(name));
}

// Two more copies of each side effect on orders that had none, as a second wave of the
// incident brings them.
void duplicateMore(const QSqlDatabase &db, const QList<qint64> &orders)
{
    for (const qint64 order : orders)
        for (int copy = 0; copy < 2; ++copy)
            db::exec(db,
                     QStringLiteral("INSERT INTO user_coupon (user_id, order_id, "
                                    "coupon_template_id, status, face_value_fen) "
                                    "VALUES (1, ?, 1, 'ISSUED', 1000)"),
                     {order});
}

// The account that may only read: SELECT on the test's databases, made on the primary and
// replicated (anAccountThatMayOnlyReadUsesTheReadPages).
Dsn asReader(Dsn dsn)
{
    dsn.user = QStringLiteral("reader");
    dsn.password = QStringLiteral("r3ad-only");
    return dsn;
}

// Accounts holding only payops_operator and only payops_finance, made in initTestCase.
Dsn asOperator(Dsn dsn)
{
    dsn.user = QStringLiteral("opsonly");
    dsn.password = QStringLiteral("0ps-only");
    return dsn;
}

Dsn asFinance(Dsn dsn)
{
    dsn.user = QStringLiteral("financeonly");
    dsn.password = QStringLiteral("f1nance-only");
    return dsn;
}

QJsonObject inspectJson(const QStringList &arguments)
{
    const test::CliRun run =
        test::runCli(QStringList{QStringLiteral("inspect"), QStringLiteral("--json")} + arguments);
    const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
    if (json.isEmpty())
        qWarning("payops inspect exited %d: %s", run.exitCode, qPrintable(run.err));
    return json;
}

// A window reading from `read` and acting on `primary`, once the grants have been probed
// (unless the primary cannot answer).
std::unique_ptr<MainWindow> windowOn(const Dsn &primary, const Dsn &read,
                                     bool primaryAnswers = true)
{
    auto window = std::make_unique<MainWindow>(std::nullopt);
    QSignalSpy known(window.get(), &MainWindow::privilegesKnown);
    console::Target target(primary);
    target.readDsn = read;
    window->connectTo(target);
    window->show();
    if (primaryAnswers)
        static_cast<void>(known.wait(15000));
    return window;
}

// Shows and refreshes every page once, then requires that none says the database refused
// it. What is checked is an absence, which no condition can wait for: the pages get two
// seconds, many times what their reads of the test's small database take (several tables are
// empty on purpose, so test::waitForData would wait its whole time on each page).
void everyPageReads(MainWindow &window)
{
    for (int id = 0; id < Page::NUM_PAGES; ++id) {
        window.showPage(Page::Id(id));
        window.page(Page::Id(id))->refresh();
    }
    QTest::qWait(2000);
    for (int id = 0; id < Page::NUM_PAGES; ++id)
        for (const QLabel *label : window.page(Page::Id(id))->findChildren<QLabel *>())
            QVERIFY2(!label->text().contains(QStringLiteral("the database refused")) &&
                         !label->text().contains(QStringLiteral("the database is read-only")),
                     qPrintable(QStringLiteral("page %1: %2").arg(id).arg(label->text())));
}

} // namespace

// The console and the command line reading from a replica (--read-db) while actions stay on
// the primary: the lag they state, the figures they call stale, a compensation previewed on a
// replica behind its primary, and an account that may only read the replica.
class TstReplicaRead final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void inspectStatesTheLagOfTheReplica();
    void consoleShowsTheLagAndCallsTheTilesStale();
    void compensationPreviewedOnTheReplicaIsPlannedAgainOnThePrimary();
    void anAccountThatMayOnlyReadUsesTheReadPages();
    void aPageShowsAnActionOnceTheReplicaHasApplied();
    void compensateDryRunPlansOnTheReplica();
    void anImportedStatementIsListedOnceTheReplicaHasIt();
    void aDrainedBacklogIsEmptyOnceTheReplicaHasIt();
    void theConnectionDialogKeepsAndTriesTheReplica();

private:
    void reportAndAuditReadTheReplica(MainWindow &window);
    // A statement of the replica's own, as its administrator: STOP or START SLAVE ...
    void onReplica(const QString &statement) const
    {
        db::Connection server(m_pair->replicaDsn({}), QStringLiteral("replication"));
        db::execDirect(server.database(), statement);
    }
    Dsn primary() const { return m_pair->primaryDsn(kDatabase); }
    Dsn replica() const { return m_pair->replicaDsn(kDatabase); }

    std::unique_ptr<QTemporaryDir> m_directory;
    std::unique_ptr<testkit::ReplicaPair> m_pair;
};

void TstReplicaRead::initTestCase()
{
    m_directory = std::make_unique<QTemporaryDir>(QStringLiteral("/tmp/payops-replica-XXXXXX"));
    m_pair = std::make_unique<testkit::ReplicaPair>(m_directory->path());
    {
        db::Connection server(m_pair->primaryDsn({}), QStringLiteral("schema"));
        db::execDirect(server.database(), QStringLiteral("CREATE DATABASE shop"));
    }
    test::prepareCallbackDatabase(primary(), QStringLiteral("legacy"), 10);
    db::Connection connection(primary(), QStringLiteral("incident"));
    test::insertDuplicateIncident(connection.database(), 6);
    for (const char *statement : {"CREATE USER opsonly@localhost IDENTIFIED BY '0ps-only'",
                                  "GRANT payops_operator TO opsonly@localhost",
                                  "SET DEFAULT ROLE payops_operator FOR opsonly@localhost",
                                  "CREATE USER financeonly@localhost IDENTIFIED BY 'f1nance-only'",
                                  "GRANT payops_finance TO financeonly@localhost",
                                  "SET DEFAULT ROLE payops_finance FOR financeonly@localhost"})
        db::execDirect(connection.database(), QString::fromLatin1(statement));
    // The duplicate watch is refreshed where it may be written: on the primary.
    QCOMPARE(test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), primary().toString()})
                 .exitCode,
             1);
    m_pair->waitForReplica();
    console::ConsoleSettings::instance().setValue(console::ConsoleSettings::StaleSeconds, 1);
}

void TstReplicaRead::cleanupTestCase()
{
    m_pair.reset();
}

void TstReplicaRead::inspectStatesTheLagOfTheReplica()
{
    // Caught up: nothing behind, not stale, the primary's figures.
    QJsonObject json = inspectJson({QStringLiteral("--db"), primary().toString(),
                                    QStringLiteral("--read-db"), replica().toString()});
    QJsonObject source = json.value(QStringLiteral("read_source")).toObject();
    QCOMPARE(source.value(QStringLiteral("transactions_behind")).toInt(-1), 0);
    QCOMPARE(source.value(QStringLiteral("stale")).toBool(true), false);
    QCOMPARE(source.value(QStringLiteral("primary_gtid")).toString(),
             source.value(QStringLiteral("replica_gtid")).toString());
    QVERIFY(source.value(QStringLiteral("dsn")).toString().contains(kDatabase));
    QCOMPARE(
        json.value(QStringLiteral("duplicates")).toObject().value(QStringLiteral("orders")).toInt(),
        6);

    // Replication stopped, then the incident goes on on the primary: the replica still says
    // six orders, and says how far behind that is.
    {
        db::Connection replicaServer(m_pair->replicaDsn({}), QStringLiteral("stop"));
        db::execDirect(replicaServer.database(), QStringLiteral("STOP SLAVE"));
        db::Connection connection(primary(), QStringLiteral("more"));
        duplicateMore(connection.database(), {1007, 1008});
    }
    QCOMPARE(test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"), primary().toString()})
                 .exitCode,
             1);
    json =
        inspectJson({QStringLiteral("--db"), primary().toString(), QStringLiteral("--read-db"),
                     replica().toString(), QStringLiteral("--stale-after"), QStringLiteral("1")});
    source = json.value(QStringLiteral("read_source")).toObject();
    QVERIFY2(source.value(QStringLiteral("transactions_behind")).toInt() >= 5,
             QJsonDocument(source).toJson().constData());
    QVERIFY(source.value(QStringLiteral("seconds_behind")).isNull());
    QVERIFY(source.value(QStringLiteral("seconds_unknown"))
                .toString()
                .contains(QStringLiteral("stopped")));
    QCOMPARE(source.value(QStringLiteral("stale")).toBool(), true);
    QCOMPARE(
        json.value(QStringLiteral("duplicates")).toObject().value(QStringLiteral("orders")).toInt(),
        6);
    // The primary itself counts eight.
    json = inspectJson({QStringLiteral("--db"), primary().toString()});
    QCOMPARE(
        json.value(QStringLiteral("duplicates")).toObject().value(QStringLiteral("orders")).toInt(),
        8);
    QVERIFY(!json.contains(QStringLiteral("read_source")));
}

void TstReplicaRead::consoleShowsTheLagAndCallsTheTilesStale()
{
    auto window = windowOn(primary(), replica());
    QVERIFY(window->readSourceMonitor());
    auto *line = window->findChild<QLabel *>(QStringLiteral("readSourceLabel"));
    QVERIFY(line);
    QTRY_VERIFY_WITH_TIMEOUT(line->text().contains(QStringLiteral("behind")), 15000);
    QVERIFY2(line->text().contains(QStringLiteral("stale")), qPrintable(line->text()));
    // The status bar has room for the lag, not for the replica's address: that is in the
    // tooltip and above the tiles.
    QVERIFY2(!line->text().contains(QStringLiteral("mysql://")), qPrintable(line->text()));
    QVERIFY2(line->toolTip().contains(replica().toDisplayString()), qPrintable(line->toolTip()));
    Page *overview = window->page(Page::OverviewId);
    QTRY_VERIFY_WITH_TIMEOUT(
        overview->findChild<QLabel *>(QStringLiteral("staleNote"))->isVisible(), 15000);
    QVERIFY(labelText(overview->findChild<Tile *>(QStringLiteral("tileDuplicates")),
                      "tileDuplicatesCaption")
                .contains(QStringLiteral("stale")));
    // The overview reads the replica: six orders, not the primary's eight.
    QTRY_VERIFY_WITH_TIMEOUT(
        labelText(overview, "tileDuplicatesDetail").contains(QStringLiteral("on 6 orders")), 15000);
    // The playbook's figures are the overview's, read on the replica too.
    const auto playbookSays = [&window](const QString &text) {
        auto *dock = window->findChild<PlaybookDock *>();
        if (!dock)
            return false;
        for (const QLabel *label : dock->findChildren<QLabel *>())
            if (label->text().contains(text))
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(playbookSays(QStringLiteral("on 6 order(s)")), 15000);
    QVERIFY(!playbookSays(QStringLiteral("on 8 order(s)")));
    test::screenshot(window.get(), QStringLiteral("replica-stale-overview"));
}

void TstReplicaRead::compensationPreviewedOnTheReplicaIsPlannedAgainOnThePrimary()
{
    auto window = windowOn(primary(), replica());
    CompensationDialog *dialog = test::openCompensationPreview(*window);
    QVERIFY(dialog);
    auto *note = dialog->findChild<QLabel *>(QStringLiteral("replicaNote"));
    QTRY_VERIFY_WITH_TIMEOUT(note->isVisible(), 15000);
    QVERIFY2(note->text().contains(QStringLiteral("6 order(s)")) &&
                 note->text().contains(QStringLiteral("8 order(s)")),
             qPrintable(note->text()));
    // What runs is the primary's plan.
    QCOMPARE(labelText(dialog, "totalOrders"), QStringLiteral("8"));
    test::screenshot(dialog, QStringLiteral("replica-compensation-preview"));
    dialog->close();

    // Caught up again, the two plans agree and the dialog says so.
    {
        db::Connection replicaServer(m_pair->replicaDsn({}), QStringLiteral("start"));
        db::execDirect(replicaServer.database(), QStringLiteral("START SLAVE"));
    }
    m_pair->waitForReplica();
    CompensationDialog *again = test::openCompensationPreview(*window);
    QVERIFY(again);
    auto *agreed = again->findChild<QLabel *>(QStringLiteral("replicaNote"));
    QTRY_VERIFY_WITH_TIMEOUT(agreed->isVisible(), 15000);
    QVERIFY2(agreed->text().contains(QStringLiteral("same")), qPrintable(agreed->text()));
    again->close();
}

void TstReplicaRead::anAccountThatMayOnlyReadUsesTheReadPages()
{
    // Made on the primary and replicated: SELECT on the payops database and nothing else, on
    // both servers.
    {
        db::Connection server(m_pair->primaryDsn({}), QStringLiteral("account"));
        db::execDirect(server.database(),
                       QStringLiteral("CREATE USER reader@localhost IDENTIFIED BY 'r3ad-only'"));
        db::execDirect(server.database(),
                       QStringLiteral("GRANT SELECT ON shop.* TO reader@localhost"));
    }
    m_pair->waitForReplica();
    const Dsn readerOnReplica = asReader(replica());

    // The command line reads with it alone, what the primary counts.
    const auto orders = [](const QJsonObject &json) {
        return json.value(QStringLiteral("duplicates")).toObject().value(QStringLiteral("orders"));
    };
    const QJsonObject json =
        inspectJson({QStringLiteral("--read-db"), readerOnReplica.toString(true)});
    QVERIFY(orders(json).toInt() > 0);
    QCOMPARE(orders(json), orders(inspectJson({QStringLiteral("--db"), primary().toString()})));
    const QJsonObject source = json.value(QStringLiteral("read_source")).toObject();
    QVERIFY(source.value(QStringLiteral("transactions_behind")).isNull()); // no primary given
    QVERIFY2(source.value(QStringLiteral("seconds_unknown"))
                 .toString()
                 .contains(QStringLiteral("REPLICA MONITOR")),
             QJsonDocument(source).toJson().constData());
    const test::CliRun posture = test::runCli(
        {QStringLiteral("posture"), QStringLiteral("--read-db"), readerOnReplica.toString(true)});
    QVERIFY2(posture.exitCode != 2, qPrintable(posture.err));
    const QString pdf = m_directory->filePath(QStringLiteral("incident.pdf"));
    const test::CliRun report = test::runCli(
        {QStringLiteral("report"), QStringLiteral("--read-db"), readerOnReplica.toString(true),
         QStringLiteral("--from"), QStringLiteral("2020-01-01T00:00:00Z"), QStringLiteral("--to"),
         QStringLiteral("2099-01-01T00:00:00Z"), QStringLiteral("--out"), pdf});
    QVERIFY2(report.exitCode == 0 && QFileInfo(pdf).size() > 0, qPrintable(report.err));
    const test::CliRun audit =
        test::runCli({QStringLiteral("audit"), QStringLiteral("verify"),
                      QStringLiteral("--read-db"), readerOnReplica.toString(true)});
    QVERIFY2(audit.exitCode == 0, qPrintable(audit.err));

    // The console with it on both: the pages read, and each action says the grant it lacks.
    for (const bool primaryAnswers : {true, false}) {
        const Dsn primaryAccount = primaryAnswers
                                       ? asReader(primary())
                                       : asReader(primary()).withDatabase(QStringLiteral("gone"));
        auto window = windowOn(primaryAccount, readerOnReplica, primaryAnswers);
        if (primaryAnswers) // the second window reads the same replica
            everyPageReads(*window);
        else
            reportAndAuditReadTheReplica(*window);
        if (QTest::currentTestFailed())
            return;
        auto *duplicates = static_cast<DuplicatesPage *>(window->page(Page::DuplicatesId));
        window->showPage(Page::DuplicatesId);
        QTRY_VERIFY_WITH_TIMEOUT(duplicates->model()->rowCount() > 0, 15000);
        auto *all = duplicates->findChild<QPushButton *>(QStringLiteral("compensateAll"));
        QTRY_VERIFY_WITH_TIMEOUT(!all->toolTip().isEmpty(), 15000);
        QVERIFY(!all->isEnabled());
        QVERIFY2(all->toolTip().contains(QStringLiteral("payops_operator")),
                 qPrintable(all->toolTip()));
        // The switch and the drain say the same of their grants.
        for (const auto &[id, name] : {std::pair{Page::OverviewId, "switchControl"},
                                       std::pair{Page::BacklogId, "processBacklogButton"}}) {
            auto *button = window->page(id)->findChild<QPushButton *>(QString::fromLatin1(name));
            QVERIFY2(button, name);
            QTRY_VERIFY2_WITH_TIMEOUT(button->toolTip().contains(QStringLiteral("payops_operator")),
                                      qPrintable(button->toolTip()), 15000);
            QVERIFY(!button->isEnabled());
        }
        Page *overview = window->page(Page::OverviewId);
        QTRY_VERIFY2_WITH_TIMEOUT(labelText(overview, "headline").startsWith(kDatabase),
                                  qPrintable(labelText(overview, "headline") + QLatin1Char('|') +
                                             labelText(overview, "details")),
                                  15000);
    }

    // The same account on a database at the current schema level, its watch refreshed on the
    // primary: the reads do not depend on the level.
    const QString currentLevel = QStringLiteral("shop_current");
    {
        db::Connection server(m_pair->primaryDsn({}), QStringLiteral("current"));
        db::execDirect(server.database(), QStringLiteral("CREATE DATABASE shop_current"));
        db::execDirect(server.database(),
                       QStringLiteral("GRANT SELECT ON shop_current.* TO reader@localhost"));
    }
    test::prepareCallbackDatabase(m_pair->primaryDsn(currentLevel), QStringLiteral("current"), 5);
    QCOMPARE(test::runCli({QStringLiteral("inspect"), QStringLiteral("--db"),
                           m_pair->primaryDsn(currentLevel).toString()})
                 .exitCode,
             0);
    m_pair->waitForReplica();
    const Dsn readerOnCurrent = asReader(m_pair->replicaDsn(currentLevel));
    const QJsonObject clean =
        inspectJson({QStringLiteral("--read-db"), readerOnCurrent.toString(true)});
    QCOMPARE(orders(clean).toInt(-1), 0);
    auto window = windowOn(asReader(m_pair->primaryDsn(currentLevel)), readerOnCurrent);
    QTRY_VERIFY2_WITH_TIMEOUT(
        labelText(window->page(Page::OverviewId), "headline").startsWith(currentLevel),
        qPrintable(labelText(window->page(Page::OverviewId), "details")), 15000);
}

// With a primary that does not answer: the incident report and the audit page's check and
// export read the replica.
void TstReplicaRead::reportAndAuditReadTheReplica(MainWindow &window)
{
    window.findChild<QAction *>(QStringLiteral("actionIncidentReport"))->trigger();
    auto *dialog = window.findChild<ReportDialog *>();
    QVERIFY(dialog);
    QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("reportReadSource")));
    const QString pdf = m_directory->filePath(QStringLiteral("console-report.pdf"));
    dialog->findChild<QLineEdit *>(QStringLiteral("reportPath"))->setText(pdf);
    dialog->findChild<QPushButton *>(QStringLiteral("writeReport"))->click();
    QTRY_VERIFY2_WITH_TIMEOUT(
        labelText(dialog, "reportResult").startsWith(QStringLiteral("Written")),
        qPrintable(labelText(dialog, "reportResult")), 20000);
    QVERIFY(QFileInfo(pdf).size() > 0);
    test::screenshot(dialog, QStringLiteral("replica-incident-report"));
    dialog->close();

    window.showPage(Page::AuditId);
    auto *audit = static_cast<AuditPage *>(window.page(Page::AuditId));
    audit->verify();
    QTRY_VERIFY2_WITH_TIMEOUT(labelText(audit, "auditResult").contains(QStringLiteral("intact")),
                              qPrintable(labelText(audit, "auditResult")), 20000);
    const QString csv = m_directory->filePath(QStringLiteral("audit.csv"));
    audit->exportCsv(csv);
    QTRY_VERIFY2_WITH_TIMEOUT(
        labelText(audit, "auditResult").startsWith(QStringLiteral("Exported")),
        qPrintable(labelText(audit, "auditResult")), 20000);
    QVERIFY(QFileInfo(csv).size() > 0);
}

void TstReplicaRead::aPageShowsAnActionOnceTheReplicaHasApplied()
{
    // The operator acts on the primary; the pages read as the account that may only SELECT,
    // which MASTER_GTID_WAIT needs no more than.
    auto window = windowOn(asOperator(primary()), asReader(replica()));
    Page *overview = window->page(Page::OverviewId);
    const auto mode = [overview] { return labelText(overview, "tileModeValue"); };
    QTRY_COMPARE_WITH_TIMEOUT(mode(), QStringLiteral("NORMAL"), 15000);

    // The replica receives the flip and does not apply it: after its wait the page shows
    // the replica's switch, and says so.
    onReplica(QStringLiteral("STOP SLAVE SQL_THREAD"));
    test::confirmFlip(test::openSwitchDialog(*window), QStringLiteral("INC-7 read your own flip"));
    if (QTest::currentTestFailed())
        return;
    QLabel *note = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (note = overview->findChild<QLabel *>(QStringLiteral("catchUpNote"))) && note->isVisible(),
        15000);
    QVERIFY2(note->text().contains(QStringLiteral("has not caught up with your last action")),
             qPrintable(note->text()));
    QCOMPARE(mode(), QStringLiteral("NORMAL"));
    test::screenshot(window.get(), QStringLiteral("replica-behind-an-action"));
    // So does the compensation page after the operator's run, its batch not there yet.
    auto *compensation = static_cast<CompensationPage *>(window->page(Page::CompensationId));
    CompensationDialog *dialog = test::openCompensationPreview(*window);
    QVERIFY(dialog);
    // The account that may only SELECT there cannot read the four-eyes figures: the dialog
    // plans on the primary alone, and says why.
    auto *planNote = dialog->findChild<QLabel *>(QStringLiteral("replicaNote"));
    QTRY_VERIFY_WITH_TIMEOUT(planNote->isVisible(), 15000);
    QVERIFY2(planNote->text().contains(QStringLiteral("Not planned on the replica")),
             qPrintable(planNote->text()));
    test::compensateThrough(dialog);
    dialog->close();
    QLabel *compensationNote = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (compensationNote = compensation->findChild<QLabel *>(QStringLiteral("catchUpNote"))) &&
            compensationNote->isVisible(),
        15000);
    QCOMPARE(compensation->batchModel()->rowCount(), 0);
    // Once it applies what it received, each page reads again by itself.
    onReplica(QStringLiteral("START SLAVE SQL_THREAD"));
    QTRY_COMPARE_WITH_TIMEOUT(mode(), QStringLiteral("RECORD_ONLY"), 15000);
    QTRY_VERIFY(!note->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(compensation->batchModel()->rowCount(), 1, 15000);
    QTRY_VERIFY(!compensationNote->isVisible());
}

void TstReplicaRead::compensateDryRunPlansOnTheReplica()
{
    // The incident goes on on the primary while the replica applies nothing.
    onReplica(QStringLiteral("STOP SLAVE SQL_THREAD"));
    {
        db::Connection connection(primary(), QStringLiteral("more"));
        duplicateMore(connection.database(), {1009});
    }
    const auto plan = [](const QStringList &where) {
        const test::CliRun run = test::runCli(
            QStringList{QStringLiteral("compensate"), QStringLiteral("--dry-run")} + where);
        if (run.exitCode != 0)
            qWarning("payops compensate exited %d: %s", run.exitCode, qPrintable(run.err));
        return run.out;
    };
    // As the operator who compensates: the four-eyes figures of a plan need its grants.
    const QString replicaPlan =
        plan({QStringLiteral("--read-db"), asOperator(replica()).toString(true)});
    const QString primaryPlan = plan({QStringLiteral("--db"), primary().toString()});
    QVERIFY2(replicaPlan.contains(QStringLiteral("plans again on the primary")),
             qPrintable(replicaPlan));
    // The primary's alone: two coupons on an order that had none, one of them a copy.
    const auto frozen = [](const QString &out) {
        const QRegularExpressionMatch match =
            QRegularExpression(QStringLiteral("(\\d+) coupon\\(s\\) to freeze")).match(out);
        return match.hasMatch() ? match.captured(1).toInt() : -1;
    };
    QVERIFY2(frozen(replicaPlan) >= 0 && frozen(primaryPlan) == frozen(replicaPlan) + 1,
             qPrintable(replicaPlan + QLatin1Char('|') + primaryPlan));
    // A run is planned where it acts: --read-db is refused without --dry-run.
    const test::CliRun run =
        test::runCli({QStringLiteral("compensate"), QStringLiteral("--read-db"),
                      replica().toString(), QStringLiteral("--reason"), QStringLiteral("r"),
                      QStringLiteral("--ticket"), QStringLiteral("t")});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--dry-run")), qPrintable(run.err));
    onReplica(QStringLiteral("START SLAVE SQL_THREAD"));
    m_pair->waitForReplica();
}

// The statement list is read on the replica: the statement finance just imported on the primary
// is listed, and selected, once the replica has it (shop_current, made by
// anAccountThatMayOnlyReadUsesTheReadPages).
void TstReplicaRead::anImportedStatementIsListedOnceTheReplicaHasIt()
{
    const QString database = QStringLiteral("shop_current");
    console::Target target(asFinance(m_pair->primaryDsn(database)));
    target.readDsn = asReader(m_pair->replicaDsn(database));
    ReconciliationPage page(target);
    page.show();
    const QString path = m_directory->filePath(QStringLiteral("statement.csv"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("pay_no,order_id,amount_fen,status,paid_at,channel\r\n"
                   "WX-LOST,1002,500,SUCCESS,2026-12-01T11:00:00+08:00,wechat\r\n");
    }
    onReplica(QStringLiteral("STOP SLAVE SQL_THREAD"));
    QSignalSpy imported(&page, &ReconciliationPage::importFinished);
    page.importStatementFile(path, StatementFormat::Auto);
    QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 20000);
    QVERIFY2(imported[0][0].toBool(), qPrintable(imported[0][1].toString()));
    const qint64 id = page.shownStatementId();
    QVERIFY(id > 0);
    // The replica applies it a second later, within the page's wait.
    QTimer::singleShot(1000, this, [this] { onReplica(QStringLiteral("START SLAVE SQL_THREAD")); });
    auto *list = page.findChild<QComboBox *>(QStringLiteral("statementList"));
    QTRY_COMPARE_WITH_TIMEOUT(list->currentData().toLongLong(), id, 15000);
    QCOMPARE(page.shownStatementId(), id);
    QVERIFY(!page.findChild<QLabel *>(QStringLiteral("catchUpNote")));
}

// The backlog page after a drain by the operator on shop_current (made by
// anAccountThatMayOnlyReadUsesTheReadPages): its list, read on the replica, is emptied once the
// replica has applied the drain, and says meanwhile that it has not.
void TstReplicaRead::aDrainedBacklogIsEmptyOnceTheReplicaHasIt()
{
    const QString database = QStringLiteral("shop_current");
    test::recordCallbacks(m_pair->primaryDsn(database), 1001, 3);
    m_pair->waitForReplica();
    auto window =
        windowOn(asOperator(m_pair->primaryDsn(database)), asReader(m_pair->replicaDsn(database)));
    window->showPage(Page::BacklogId);
    auto *backlog = static_cast<BacklogPage *>(window->page(Page::BacklogId));
    QTRY_COMPARE_WITH_TIMEOUT(backlog->table()->model()->rowCount(), 3, 15000);

    onReplica(QStringLiteral("STOP SLAVE SQL_THREAD"));
    QTRY_VERIFY_WITH_TIMEOUT(
        backlog->findChild<QPushButton *>(QStringLiteral("processBacklogButton"))->isEnabled(),
        15000);
    test::confirmDrain(backlog);
    QTRY_VERIFY_WITH_TIMEOUT(!backlog->isDraining(), 15000);
    QLabel *note = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((note = backlog->findChild<QLabel *>(QStringLiteral("catchUpNote"))) &&
                                 note->isVisible(),
                             15000);
    // As the replica has it (a reload under way may show none for a moment).
    QTRY_COMPARE_WITH_TIMEOUT(backlog->table()->model()->rowCount(), 3, 5000);
    onReplica(QStringLiteral("START SLAVE SQL_THREAD"));
    QTRY_COMPARE_WITH_TIMEOUT(backlog->table()->model()->rowCount(), 0, 15000);
    QTRY_VERIFY(!note->isVisible());
}

void TstReplicaRead::theConnectionDialogKeepsAndTriesTheReplica()
{
    console::ConnectionProfile profile;
    profile.name = QStringLiteral("with replica");
    profile.host = QStringLiteral("localhost");
    profile.socket = primary().socket;
    profile.user = QStringLiteral("root");
    profile.database = kDatabase;
    profile.readHost = QStringLiteral("localhost");
    profile.readSocket = m_directory->path() + QStringLiteral("/nowhere.sock");
    console::saveProfile(profile);

    ConnectionDialog dialog;
    dialog.findChild<QListWidget *>(QStringLiteral("profilesList"))->setCurrentRow(1);
    auto *readSocket = dialog.findChild<QLineEdit *>(QStringLiteral("readSocketEdit"));
    QCOMPARE(readSocket->text(), profile.readSocket); // kept with the profile
    auto *connectButton = dialog.findChild<QPushButton *>(QStringLiteral("connectButton"));
    auto *status = dialog.findChild<QLabel *>(QStringLiteral("connectStatus"));
    // The primary answers, the replica does not: the dialog stays and says which failed.
    connectButton->click();
    QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith(QStringLiteral("The replica:")), 15000);
    QVERIFY(dialog.result() != QDialog::Accepted);

    readSocket->setText(replica().socket);
    connectButton->click();
    QTRY_COMPARE_WITH_TIMEOUT(dialog.result(), int(QDialog::Accepted), 15000);
    const console::Target target = dialog.target();
    QCOMPARE(target.dsn.socket, primary().socket);
    QVERIFY(target.readDsn);
    QCOMPARE(target.readDsn->socket, replica().socket);
    QCOMPARE(target.readDsn->database, kDatabase);
    QVERIFY(target.readDsn->readOnlySession);
}

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    PAYOPS_TEST_SETUP();
    TstReplicaRead test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_replicaread.moc"
