#include "db/connection.h"
#include "db/dberror.h"
#include "domain/inspection/posture.h"
#include "domain/mapping/mappingcheck.h"
#include "scratchdatabase.h"
#include "teamshop.h"
#include "testmain.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <memory>

using namespace payops;
using mapping::MappingCheck;
using mapping::MappingProblem;
using mapping::Severity;

namespace {

MappingCheck checkAs(const Dsn &dsn, const QString &path)
{
    db::Connection connection(dsn, QStringLiteral("t"));
    return mapping::checkMapping(connection.database(), mapping::loadMapping(path));
}

// Every problem on a line of its own, for a failing QVERIFY2.
QByteArray listed(const MappingCheck &check)
{
    QStringList lines;
    for (const MappingProblem &problem : check.problems)
        lines << QStringLiteral("%1 %2: %3")
                     .arg(mapping::severityName(problem.severity), problem.where, problem.message);
    return lines.join(QLatin1Char('\n')).toUtf8();
}

QStringList whereOf(const MappingCheck &check, Severity severity)
{
    QStringList where;
    for (const MappingProblem &problem : check.problems)
        if (problem.severity == severity)
            where << problem.where;
    return where;
}

const MappingProblem *problemAt(const MappingCheck &check, const QString &where)
{
    for (const MappingProblem &problem : check.problems)
        if (problem.where == where)
            return &problem;
    return nullptr;
}

Defence defenceNamed(const QList<Defence> &defences, const QString &name)
{
    for (const Defence &defence : defences)
        if (defence.name == name)
            return defence;
    qFatal("no defence named %s", qPrintable(name));
}

QByteArray sourceFile(const QString &path)
{
    QFile file(QStringLiteral(PAYOPS_SOURCE_DIR "/") + path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

} // namespace

class TestMappingCheck final : public QObject
{
    Q_OBJECT

    std::unique_ptr<test::TeamShop> m_shop;

    void runOnBusiness(const QString &statement) const
    {
        db::Connection admin(m_shop->dsn(), QStringLiteral("admin"));
        db::execDirect(admin.database(),
                       QStringLiteral("USE ") + db::quoteIdentifier(m_shop->business()));
        db::execDirect(admin.database(), statement);
    }

    // The test mapping with `from` replaced by `to`, written beside it.
    QString variant(const QString &name, const QByteArray &from, const QByteArray &to) const
    {
        QByteArray text = m_shop->mappingText();
        if (!text.contains(from))
            qFatal("the test mapping has no %s", from.constData());
        return m_shop->writeMapping(name + QStringLiteral(".toml"), text.replace(from, to));
    }

private Q_SLOTS:
    void initTestCase() { m_shop = std::make_unique<test::TeamShop>(); }
    void cleanupTestCase() { m_shop.reset(); }

    void teamMappingHasOnlyTheMissingIndexWarning()
    {
        const MappingCheck check = checkAs(m_shop->dsn(), m_shop->mappingPath());
        QVERIFY2(!check.hasErrors(), listed(check));
        QCOMPARE(whereOf(check, Severity::Warning),
                 QStringList{QStringLiteral("side_effects.gift_card.created_at")});
        QVERIFY2(check.problems.constFirst().message.contains(QLatin1String("issued_at")) &&
                     check.problems.constFirst().message.contains(QLatin1String("about")),
                 listed(check));
    }

    void brokenMappingIsCaught_data()
    {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("setup"); // run in the business database first, undone after
        QTest::addColumn<QString>("undo");
        QTest::addColumn<QString>("where");
        QTest::addColumn<bool>("isError");
        QTest::addColumn<QString>("phrase");
        const QString none;
        QTest::newRow("missing table")
            << QByteArray("table = \"t_coupon_grant\"") << QByteArray("table = \"t_coupon_gone\"")
            << none << none << QStringLiteral("side_effects.coupon.table") << true
            << QStringLiteral("t_coupon_gone does not exist");
        QTest::newRow("missing column")
            << QByteArray("paid_at = \"pay_time\"") << QByteArray("paid_at = \"pay_tim\"") << none
            << none << QStringLiteral("orders.paid_at") << true
            << QStringLiteral("no column pay_tim");
        QTest::newRow("fen on a DECIMAL")
            << QByteArray("amount_unit = \"yuan\"") << QByteArray("amount_unit = \"fen\"") << none
            << none << QStringLiteral("orders.amount") << true
            << QStringLiteral("decimal(12,2), but fen needs an integer column");
        QTest::newRow("yuan on an integer")
            << QByteArray("amount_unit = \"fen\"") << QByteArray("amount_unit = \"yuan\"") << none
            << none << QStringLiteral("payments.amount") << true
            << QStringLiteral("yuan needs a DECIMAL with 2 decimal places");
        QTest::newRow("string states on a tinyint")
            << QByteArray("PAID = 1") << QByteArray("PAID = \"PAID\"") << none << none
            << QStringLiteral("orders.states") << true
            << QStringLiteral("states are numbers, not strings: PAID = \"PAID\"");
        QTest::newRow("unknown state in the data")
            << QByteArray("PAID = 1") << QByteArray("PAID = 1")
            << QStringLiteral("UPDATE t_order SET state = 7 WHERE order_no = 100001")
            << QStringLiteral("UPDATE t_order SET state = 1 WHERE order_no = 100001")
            << QStringLiteral("orders.states") << false << QStringLiteral("7 (1 order(s))");
        QTest::newRow("live does not parse")
            << QByteArray("live = \"status <> 'VOID'\"")
            << QByteArray("live = \"status <> 'VOID' AND\"") << none << none
            << QStringLiteral("side_effects.coupon.live") << true
            << QStringLiteral("is not valid SQL");
        QTest::newRow("freeze names a missing column")
            << QByteArray("freeze = \"status = 'VOID'\"")
            << QByteArray("freeze = \"statux = 'VOID'\"") << none << none
            << QStringLiteral("side_effects.coupon.freeze") << true
            << QStringLiteral("names column statux");
        QTest::newRow("reverse_set names a missing column")
            << QByteArray("{ remark =") << QByteArray("{ remarks =") << none << none
            << QStringLiteral("side_effects.points.reverse_set") << true
            << QStringLiteral("names column remarks");
        QTest::newRow("no (order, key) index")
            << QByteArray("key = [\"card_type\", \"batch\"]") << QByteArray("key = [\"batch\"]")
            << none << none << QStringLiteral("side_effects.gift_card.key") << false
            << QStringLiteral("no index leading with (order_ref, batch): each refresh would read "
                              "about");
        QTest::newRow("no updated_at")
            << QByteArray("updated_at = \"gmt_modified\"\n") << QByteArray() << none << none
            << QStringLiteral("orders.updated_at") << false
            << QStringLiteral("each refresh of the state counts reads every order of its window "
                              "again, 0 order(s) for the last 24 hours");
        QTest::newRow("updated_at without an index")
            << QByteArray("PAID = 1") << QByteArray("PAID = 1")
            << QStringLiteral("ALTER TABLE t_order DROP INDEX idx_order_modified")
            << QStringLiteral("ALTER TABLE t_order ADD INDEX idx_order_modified (gmt_modified)")
            << QStringLiteral("orders.updated_at") << false
            << QStringLiteral("no index leading with (gmt_modified): each refresh would read");
        QTest::newRow("updated_at not a time")
            << QByteArray("updated_at = \"gmt_modified\"") << QByteArray("updated_at = \"uid\"")
            << none << none << QStringLiteral("orders.updated_at") << true
            << QStringLiteral("t_order.uid is bigint(20), not DATETIME or TIMESTAMP");
        QTest::newRow("channel value no channel names")
            << QByteArray("[payments.channels]\nwechat = \"wechatpay\"\n") << QByteArray() << none
            << none << QStringLiteral("payments.channels") << false
            << QStringLiteral(
                   "values in t_pay_record.channel that no channel names, so no WeChat "
                   "Pay or Alipay statement finds their payments left out: \"wechatpay\" (");
        QTest::newRow("id not auto-increment")
            << QByteArray("id = \"card_id\"") << QByteArray("id = \"batch\"") << none << none
            << QStringLiteral("side_effects.gift_card.id") << true
            << QStringLiteral("is not AUTO_INCREMENT");
    }

    void brokenMappingIsCaught()
    {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, setup);
        QFETCH(QString, undo);
        QFETCH(QString, where);
        QFETCH(bool, isError);
        QFETCH(QString, phrase);
        const QString path = variant(QStringLiteral("broken"), from, to);
        if (!setup.isEmpty())
            runOnBusiness(setup);
        const MappingCheck check = checkAs(m_shop->dsn(), path);
        if (!undo.isEmpty())
            runOnBusiness(undo);
        const MappingProblem *problem = problemAt(check, where);
        QVERIFY2(problem, listed(check));
        QCOMPARE(problem->severity, isError ? Severity::Error : Severity::Warning);
        QVERIFY2(problem->message.contains(phrase), listed(check));
        QCOMPARE(check.hasErrors(), isError);
    }

    void commandLinePrintsLinesAndExitCodes()
    {
        const QString db = m_shop->dsn().toString();
        const test::CliRun clean = test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                                                 QStringLiteral("--mapping"), m_shop->mappingPath(),
                                                 QStringLiteral("--db"), db});
        QCOMPARE(clean.exitCode, 0);
        QStringList lines = clean.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].startsWith(QLatin1String("warning side_effects.gift_card.created_at: ")),
                 qPrintable(clean.out));
        QVERIFY2(lines[1].endsWith(QLatin1String("usable, 1 warning(s)")), qPrintable(clean.out));

        const QString broken =
            variant(QStringLiteral("cli"), "paid_at = \"pay_time\"", "paid_at = \"pay_tim\"");
        const test::CliRun bad =
            test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                          QStringLiteral("--mapping"), broken, QStringLiteral("--db"), db});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.out.contains(QLatin1String("error   orders.paid_at: table t_order has no "
                                                "column pay_tim")),
                 qPrintable(bad.out));
        QVERIFY2(bad.out.contains(QLatin1String("1 error(s), 1 warning(s)")), qPrintable(bad.out));

        const test::CliRun json = test::runCli(
            {QStringLiteral("mapping"), QStringLiteral("check"), QStringLiteral("--mapping"),
             broken, QStringLiteral("--db"), db, QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 1);
        const QJsonObject object = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QCOMPARE(object.value(QStringLiteral("usable")).toBool(true), false);
        QCOMPARE(object.value(QStringLiteral("problems")).toArray().size(), 2);

        // A name payops cannot quote and use is refused with the file, before the server is
        // asked anything: a line break would forge a line of this very output.
        const test::CliRun badName = test::runCli(
            {QStringLiteral("mapping"), QStringLiteral("check"), QStringLiteral("--mapping"),
             variant(QStringLiteral("name"), "status = \"state\"", "status = \"state\\nok\""),
             QStringLiteral("--db"), db});
        QCOMPARE(badName.exitCode, 2);
        QVERIFY2(badName.err.contains(QLatin1String(
                     "[orders] 'status' cannot be a MariaDB name: it holds a control character")),
                 qPrintable(badName.err));

        // Usage, an unusable file and no server are all 2: 1 means only "the mapping is wrong".
        QCOMPARE(test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                               QStringLiteral("--db"), db})
                     .exitCode,
                 2);
        QCOMPARE(test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                               QStringLiteral("--mapping"),
                               m_shop->mappingPath() + QStringLiteral("-none"),
                               QStringLiteral("--db"), db})
                     .exitCode,
                 2);
        QCOMPARE(
            test::runCli({QStringLiteral("mapping"), QStringLiteral("check"),
                          QStringLiteral("--mapping"), m_shop->mappingPath(),
                          QStringLiteral("--db"), QStringLiteral("mysql://nobody@127.0.0.1:1/x")})
                .exitCode,
            2);
    }

    // The reference mapping describes payops's own schema at both levels; an account with only
    // the finance role and SELECT on the team's database checks the team's mapping and is told
    // which grant the write checks lack.
    void referenceMappingAndFinanceAccount_data() { test::addSchemaLevelRows(); }
    void referenceMappingAndFinanceAccount()
    {
        QFETCH(QString, level);
        // The shared shop is at level current; a second one only for legacy keeps the test quick.
        std::unique_ptr<test::TeamShop> legacy;
        if (level == QLatin1String("legacy"))
            legacy = std::make_unique<test::TeamShop>(db::SchemaLevel::Legacy);
        const test::TeamShop &shop = legacy ? *legacy : *m_shop;
        const QString reference = shop.writeMapping(
            QStringLiteral("payops.toml"), sourceFile(QStringLiteral("docs/mapping/payops.toml")));
        const MappingCheck own = checkAs(shop.dsn(), reference);
        QVERIFY2(!own.hasErrors(), listed(own));

        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        {
            db::Connection admin(shop.dsn(), QStringLiteral("admin"));
            db::execDirect(admin.database(), QStringLiteral("GRANT SELECT ON %1.* TO %2@localhost")
                                                 .arg(db::quoteIdentifier(shop.business()),
                                                      db::quoteIdentifier(finance.user())));
        }
        const MappingCheck team = checkAs(finance.dsnFor(shop.dsn().database), shop.mappingPath());
        QVERIFY2(!team.hasErrors(), listed(team));
        for (const QString &where : {QStringLiteral("side_effects.coupon.freeze"),
                                     QStringLiteral("side_effects.gift_card.freeze")}) {
            const MappingProblem *problem = problemAt(team, where);
            QVERIFY2(problem && problem->message.contains(QLatin1String("lacks UPDATE")),
                     listed(team));
        }
        const MappingProblem *reverse =
            problemAt(team, QStringLiteral("side_effects.points.reverse_set"));
        QVERIFY2(reverse && reverse->message.contains(QLatin1String("lacks INSERT")), listed(team));
        // The reads need only SELECT: their conditions were checked.
        QVERIFY2(!problemAt(team, QStringLiteral("side_effects.coupon.live")), listed(team));

        // The same account runs the command and reads the mapped posture.
        const Dsn financeDsn = finance.dsnFor(shop.dsn().database);
        const test::CliRun cli = test::runCli(
            {QStringLiteral("mapping"), QStringLiteral("check"), QStringLiteral("--mapping"),
             shop.mappingPath(), QStringLiteral("--db"), financeDsn.toString()},
            {{QStringLiteral("PAYOPS_DB_PASSWORD"), finance.password()}});
        QCOMPARE(cli.exitCode, 0);
        QVERIFY2(cli.out.contains(QLatin1String("lacks UPDATE")), qPrintable(cli.out + cli.err));
        db::Connection connection(financeDsn, QStringLiteral("finance"));
        QCOMPARE(defenceNamed(inspectMappedPosture(connection.database(),
                                                   mapping::loadMapping(shop.mappingPath())),
                              QStringLiteral("mapped_order_cas"))
                     .state,
                 DefenceState::Present);
    }

    void postureReportsTheTeamsKeys()
    {
        const mapping::Mapping team = mapping::loadMapping(m_shop->mappingPath());
        const auto postureOf = [&] {
            db::Connection connection(m_shop->dsn(), QStringLiteral("t"));
            return inspectMappedPosture(connection.database(), team);
        };
        QList<Defence> defences = postureOf();
        QCOMPARE(defenceNamed(defences, QStringLiteral("mapped_order_cas")).state,
                 DefenceState::Present);
        QCOMPARE(defenceNamed(defences, QStringLiteral("mapped_key_coupon")).state,
                 DefenceState::Missing);
        const Defence card = defenceNamed(defences, QStringLiteral("mapped_key_gift_card"));
        QCOMPARE(card.state, DefenceState::Missing);
        QVERIFY2(card.evidence.contains(QLatin1String("uk_gift_order")), qPrintable(card.evidence));
        // payops's own coupon and points keys are not the team's.
        QVERIFY(std::none_of(defences.cbegin(), defences.cend(), [](const Defence &defence) {
            return defence.name == QLatin1String("uk_order_tpl");
        }));

        // The team removes its duplicate coupons and adds the key, columns in another order.
        runOnBusiness(QStringLiteral(
            "DELETE g FROM t_coupon_grant g JOIN t_coupon_grant o ON o.order_no = g.order_no AND "
            "o.tpl_code = g.tpl_code AND o.id < g.id"));
        runOnBusiness(QStringLiteral(
            "ALTER TABLE t_coupon_grant ADD UNIQUE KEY uk_tpl_order (tpl_code, order_no)"));
        defences = postureOf();
        const Defence coupon = defenceNamed(defences, QStringLiteral("mapped_key_coupon"));
        QCOMPARE(coupon.state, DefenceState::Present);
        QVERIFY2(coupon.evidence.contains(QLatin1String("uk_tpl_order")),
                 qPrintable(coupon.evidence));

        const test::CliRun cli = test::runCli(
            {QStringLiteral("posture"), QStringLiteral("--db"), m_shop->dsn().toString(),
             QStringLiteral("--mapping"), m_shop->mappingPath(), QStringLiteral("--json")});
        QCOMPARE(cli.exitCode, 1); // the gift card's key is still missing
        QVERIFY2(cli.out.contains(
                     QLatin1String("\"name\":\"mapped_key_gift_card\",\"state\":\"missing\"")),
                 qPrintable(cli.out));

        // An orders id that is not a key: a CAS by id may change several rows.
        const mapping::Mapping byUser = mapping::loadMapping(
            variant(QStringLiteral("byuser"), "id = \"order_no\"", "id = \"uid\""));
        db::Connection connection(m_shop->dsn(), QStringLiteral("t"));
        const Defence cas = defenceNamed(inspectMappedPosture(connection.database(), byUser),
                                         QStringLiteral("mapped_order_cas"));
        QCOMPARE(cas.state, DefenceState::Missing);
        QVERIFY2(cas.evidence.contains(QLatin1String("no primary or unique key on (uid)")),
                 qPrintable(cas.evidence));
    }
};

PAYOPS_TEST_MAIN_CORE(TestMappingCheck)
#include "tst_mappingcheck.moc"
