#include "db/connection.h"
#include "demodatabase.h"
#include "domain/inspection/incidentfacts.h"
#include "testmain.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace payops;

namespace {

// A poppler tool's standard output (pdfinfo, pdftotext), or a failed test's message.
QString poppler(const QString &tool, const QStringList &arguments)
{
    QProcess process;
    process.start(tool, arguments);
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit ||
        process.exitCode() != 0)
        return QStringLiteral("%1 failed: %2")
            .arg(tool, QString::fromUtf8(process.readAllStandardError()));
    return QString::fromUtf8(process.readAllStandardOutput());
}

// Fen as the report writes yuan, formatted here independently of the report's own code.
QString yuanText(qint64 fen)
{
    QString whole = QString::number(fen / 100);
    for (qsizetype i = whole.size() - 3; i > 0; i -= 3)
        whole.insert(i, QLatin1Char(','));
    return QStringLiteral("¥ %1.%2").arg(whole).arg(fen % 100, 2, 10, QLatin1Char('0'));
}

QString rfc3339(const QDateTime &t)
{
    return t.toUTC().toString(Qt::ISODateWithMs);
}

} // namespace

// The incident report, made by `payops report` on the demo's incident after an operator
// flipped the switch and compensated some of it: the PDF opens, and its figures are the
// database's, counted here by other SQL (and by `payops inspect`).
class TstReport final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_db = test::demoDatabase();
        m_dsn = m_db->dsn().toString();
        const test::CliRun flip =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("on"), QStringLiteral("--db"),
                          m_dsn, QStringLiteral("--reason"), QStringLiteral("INC-42 重复发券"),
                          QStringLiteral("--wait"), QStringLiteral("0")});
        QVERIFY2(flip.exitCode == 0, qPrintable(flip.err));
        // Two incident orders compensated, the rest left at risk.
        const QList<qint64> orders = sampleIncidentOrders(2);
        QCOMPARE(orders.size(), 2);
        const test::CliRun compensate =
            test::runCli({QStringLiteral("compensate"), QStringLiteral("--db"), m_dsn,
                          QStringLiteral("--reason"), QStringLiteral("duplicate payout"),
                          QStringLiteral("--ticket"), QStringLiteral("INC-42"),
                          QStringLiteral("--order"), QString::number(orders.at(0)),
                          QStringLiteral("--order"), QString::number(orders.at(1))});
        QVERIFY2(compensate.exitCode == 0, qPrintable(compensate.err + compensate.out));
        QVERIFY(test::count(m_db->dsn(), QStringLiteral("SELECT COUNT(*) FROM compensation")) > 0);
        // A finished reconciliation in the window, as `payops reconcile` stores one.
        addReconciliation(QStringLiteral("微信账单.csv"), 1200, 0, 3, 7);
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));

        const QDateTime first = QDateTime::fromString(
            db::scalar(
                connection.database(),
                QStringLiteral(
                    "SELECT DATE_FORMAT(MIN(c.created_at), '%Y-%m-%dT%H:%i:%sZ') FROM user_coupon "
                    "c "
                    "JOIN (SELECT order_id, coupon_template_id FROM user_coupon GROUP BY 1, 2 "
                    "HAVING COUNT(*) > 1) g USING (order_id, coupon_template_id)"))
                .toString(),
            Qt::ISODate);
        QVERIFY(first.isValid());
        m_from = first.addSecs(-600);
        m_to = QDateTime::currentDateTimeUtc().addSecs(600);
    }

    void cleanupTestCase() { m_db.reset(); }

    void flagsAreCheckedBeforeConnecting_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString dsn = QStringLiteral("mysql://nobody@127.0.0.1:1/none");
        QTest::newRow("no from") << QStringList{QStringLiteral("--db"),
                                                dsn,
                                                QStringLiteral("--to"),
                                                QStringLiteral("2026-12-02T10:00:00Z"),
                                                QStringLiteral("--out"),
                                                QStringLiteral("x.pdf")}
                                 << QStringLiteral("--from is required");
        QTest::newRow("not a time")
            << QStringList{QStringLiteral("--db"),   dsn,
                           QStringLiteral("--from"), QStringLiteral("yesterday"),
                           QStringLiteral("--to"),   QStringLiteral("2026-12-02T10:00:00Z"),
                           QStringLiteral("--out"),  QStringLiteral("x.pdf")}
            << QStringLiteral("'yesterday' is not a time");
        QTest::newRow("empty window")
            << QStringList{QStringLiteral("--db"),   dsn,
                           QStringLiteral("--from"), QStringLiteral("2026-12-02T18:00:00+08:00"),
                           QStringLiteral("--to"),   QStringLiteral("2026-12-02T10:00:00Z"),
                           QStringLiteral("--out"),  QStringLiteral("x.pdf")}
            << QStringLiteral("the window is empty");
        QTest::newRow("no out") << QStringList{QStringLiteral("--db"),
                                               dsn,
                                               QStringLiteral("--from"),
                                               QStringLiteral("2026-12-02T09:00:00Z"),
                                               QStringLiteral("--to"),
                                               QStringLiteral("2026-12-02T10:00:00Z")}
                                << QStringLiteral("--out FILE.pdf is required");
    }
    void flagsAreCheckedBeforeConnecting()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const test::CliRun run = test::runCli(QStringList{QStringLiteral("report")} + arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
    }

    void helpNeedsNoDisplay()
    {
        // As cron runs it: no display and no login session.
        const test::CliRun run = test::runCli({QStringLiteral("report"), QStringLiteral("--help")},
                                              {{QStringLiteral("DISPLAY"), QString()},
                                               {QStringLiteral("XDG_RUNTIME_DIR"), QString()}});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("--from")), qPrintable(run.out));
        QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    }

    void thePdfHoldsTheDatabasesFigures()
    {
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("incident.pdf"));
        const test::CliRun run = test::runCli(
            {QStringLiteral("report"), QStringLiteral("--db"), m_dsn, QStringLiteral("--from"),
             rfc3339(m_from), QStringLiteral("--to"), rfc3339(m_to), QStringLiteral("--out"), pdf},
            {{QStringLiteral("DISPLAY"), QString()},
             {QStringLiteral("QT_QPA_PLATFORM"), QString()},
             {QStringLiteral("XDG_RUNTIME_DIR"), QString()}});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(pdf), qPrintable(run.out));
        // Quiet as cron wants it: nothing on stderr when it worked.
        QVERIFY2(run.err.isEmpty(), qPrintable(run.err));

        const QString info = poppler(QStringLiteral("pdfinfo"), {pdf});
        QVERIFY2(info.contains(QRegularExpression(QStringLiteral("Pages:\\s+[1-9]"))),
                 qPrintable(info));
        QVERIFY2(info.contains(QStringLiteral("Incident report")), qPrintable(info));
        const QString text = poppler(QStringLiteral("pdftotext"),
                                     {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        // script/screenshots: the first page as docs/console.md shows it (report-page-1.png).
        if (const QString shots = qEnvironmentVariable("PAYOPS_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(!poppler(QStringLiteral("pdftoppm"),
                             {QStringLiteral("-png"), QStringLiteral("-r"), QStringLiteral("50"),
                              QStringLiteral("-singlefile"), pdf,
                              QDir(shots).filePath(QStringLiteral("report-page-1"))})
                         .contains(QStringLiteral(" failed: ")));

        // Every group of more than one copy is in the window: its extra copies, counted by groups.
        const Dsn &dsn = m_db->dsn();
        const qint64 couponCopies =
            test::count(dsn, QStringLiteral("SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) "
                                            "n FROM user_coupon GROUP BY order_id, "
                                            "coupon_template_id HAVING n > 1) g"));
        const qint64 pointCopies =
            test::count(dsn, QStringLiteral("SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) "
                                            "n FROM point_log WHERE reverses_id IS NULL "
                                            "GROUP BY order_id, point_type HAVING n > 1) g"));
        const qint64 copiesFen =
            test::count(dsn,
                        QStringLiteral("SELECT COALESCE(SUM((n - 1) * fen), 0) FROM (SELECT "
                                       "COUNT(*) n, MAX(face_value_fen) fen FROM user_coupon "
                                       "GROUP BY order_id, coupon_template_id HAVING n > 1) g")) +
            test::count(
                dsn,
                QStringLiteral(
                    "SELECT COALESCE(SUM((n - 1) * p), 0) FROM (SELECT COUNT(*) n, MAX(points) p "
                    "FROM point_log "
                    "WHERE reverses_id IS NULL GROUP BY order_id, point_type HAVING n > 1) g"));
        const qint64 compensatedFen =
            test::count(dsn, QStringLiteral("SELECT SUM(amount_fen) FROM compensation"));
        QVERIFY(couponCopies > 0 && pointCopies > 0 && compensatedFen > 0);
        QVERIFY2(text.contains(QStringLiteral("%1 (%2 coupons, %3 points rows)")
                                   .arg(couponCopies + pointCopies)
                                   .arg(couponCopies)
                                   .arg(pointCopies)),
                 qPrintable(text));
        QVERIFY2(text.contains(yuanText(copiesFen)), qPrintable(yuanText(copiesFen)));
        QVERIFY2(text.contains(yuanText(compensatedFen)), qPrintable(yuanText(compensatedFen)));

        // Money at risk as `payops inspect` counts it, by its own code.
        const test::CliRun inspect = test::runCli(
            {QStringLiteral("inspect"), QStringLiteral("--db"), m_dsn, QStringLiteral("--json")});
        const QJsonObject duplicates = QJsonDocument::fromJson(inspect.out.toUtf8())
                                           .object()
                                           .value(QStringLiteral("duplicates"))
                                           .toObject();
        QVERIFY2(duplicates.contains(QStringLiteral("money_at_risk_fen")),
                 qPrintable(inspect.out + inspect.err));
        const qint64 atRisk = duplicates.value(QStringLiteral("money_at_risk_fen")).toInteger();
        QVERIFY(atRisk > 0 && atRisk < copiesFen);
        QVERIFY2(text.contains(QStringLiteral("Money at risk now")) &&
                     text.contains(yuanText(atRisk)),
                 qPrintable(yuanText(atRisk)));

        // Who flipped the switch and who compensated: the database's account, not a claimed name.
        QVERIFY(text.contains(QStringLiteral("from NORMAL to RECORD_ONLY")));
        QVERIFY(text.contains(QStringLiteral("root@localhost")));
        QVERIFY2(text.contains(QStringLiteral("重复发券")),
                 "Chinese text must print, not as empty boxes");
        QVERIFY(text.contains(QStringLiteral("INC-42")));
        // The reconciliation's findings by kind.
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("missing_ours\\s+3"))),
                 qPrintable(text));
        QVERIFY(text.contains(QRegularExpression(QStringLiteral("double_payment\\s+7"))));
        QVERIFY(text.contains(QStringLiteral("微信账单.csv")));
        // The audit chain's head, as the database holds it.
        db::Connection connection(dsn, QStringLiteral("t"));
        const QString head =
            db::scalar(connection.database(),
                       QStringLiteral("SELECT last_hash FROM ops_audit_head WHERE id = 1"))
                .toString();
        QCOMPARE(head.size(), 64);
        QVERIFY2(text.contains(head), qPrintable(head));
    }

    // A window before anything happened: nothing to report, and it says so.
    void aQuietWindow()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const IncidentFacts facts =
            readIncidentFacts(connection.database(), m_from.addDays(-30), m_from.addDays(-29));
        QCOMPARE(facts.copies(), qint64(0));
        QVERIFY(!facts.firstDuplicateAt.isValid());
        QVERIFY(facts.flips.isEmpty());
        QVERIFY(!facts.reconciliation.present);
        QCOMPARE(facts.series.bucketSeconds, 480);
        QCOMPARE(facts.series.duplicates.size(), 180);
    }

    // The facts' window is half open and the flip is placed in it.
    void theFlipIsInItsWindowOnly()
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        const IncidentFacts facts = readIncidentFacts(connection.database(), m_from, m_to);
        QCOMPARE(facts.flips.size(), 1);
        QCOMPARE(facts.flips.first().toMode, QStringLiteral("RECORD_ONLY"));
        const IncidentFacts after =
            readIncidentFacts(connection.database(), facts.flips.first().at.addMSecs(1), m_to);
        QVERIFY(after.flips.isEmpty());
        QVERIFY(facts.firstDuplicateAt >= m_from && facts.firstDuplicateAt < m_from.addSecs(660));
        qint64 charted = 0;
        for (qint64 n : facts.series.duplicates)
            charted += n;
        QCOMPARE(charted, facts.copies());
    }

    // A %1 in a statement's file name or in the output's path is text, not a place for the next
    // figure: a chained QString::arg() once printed "0 lines (%11 unreadable)" for 3 lines.
    // Last: its reconciliation becomes the window's newest.
    void percentSignsInNamesAreText()
    {
        addReconciliation(QStringLiteral("bill%1 %10.csv"), 3, 1, 0, 0);
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("report%1 %2.pdf"));
        const test::CliRun run = test::runCli(
            {QStringLiteral("report"), QStringLiteral("--db"), m_dsn, QStringLiteral("--from"),
             rfc3339(m_from), QStringLiteral("--to"), rfc3339(m_to), QStringLiteral("--out"), pdf},
            {{QStringLiteral("DISPLAY"), QString()},
             {QStringLiteral("QT_QPA_PLATFORM"), QString()}});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.startsWith(QStringLiteral("wrote %1: ").arg(pdf)), qPrintable(run.out));
        const QString text = poppler(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("bill%1\\s+%10\\.csv"))),
                 qPrintable(text));
        QVERIFY2(text.contains(
                     QRegularExpression(QStringLiteral("\\b3\\s+lines\\s+\\(1\\s+unreadable\\)"))),
                 qPrintable(text));
    }

private:
    std::unique_ptr<test::ScratchDatabase> m_db;
    QString m_dsn;
    QDateTime m_from;
    QDateTime m_to;

    // A finished reconciliation in the window, as `payops reconcile` stores one; the newest.
    void addReconciliation(const QString &sourceFile, qint64 lines, qint64 errors,
                           qint64 missingOurs, qint64 doublePayments) const
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        db::exec(connection.database(),
                 QStringLiteral("INSERT INTO platform_statement (file_sha256, format, channel, "
                                "source_file, line_count, "
                                "error_count) VALUES (SHA2(?, 256), 'wechat', 'wechat', ?, ?, ?)"),
                 {sourceFile, sourceFile, lines, errors});
        db::exec(connection.database(),
                 QStringLiteral("INSERT INTO reconciliation_run (statement_id, started_by, "
                                "finished_at, missing_ours, "
                                "double_payment) SELECT MAX(id), 'finance@%', NOW(3), ?, ? FROM "
                                "platform_statement"),
                 {missingOurs, doublePayments});
    }

    QList<qint64> sampleIncidentOrders(int n) const
    {
        db::Connection connection(m_db->dsn(), QStringLiteral("t"));
        QSqlQuery query =
            db::exec(connection.database(),
                     QStringLiteral("SELECT order_id FROM point_log GROUP BY order_id, point_type "
                                    "HAVING COUNT(*) > 1 ORDER BY order_id LIMIT %1")
                         .arg(n));
        QList<qint64> orders;
        while (query.next())
            orders << query.value(0).toLongLong();
        return orders;
    }
};

PAYOPS_TEST_MAIN_CORE(TstReport)
#include "tst_report.moc"
