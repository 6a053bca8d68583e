#include "callbackfixture.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/callback/missingpayment.h"
#include "domain/money/compensationworkflow.h"
#include "lab/localserver.h"
#include "scratchdatabase.h"
#include "testmain.h"
#include "topology.h"

#include <QTemporaryDir>

using namespace payops;

namespace {

const QString kPassword = QStringLiteral("four-eyes-pw");

// An approval as a client that names its account would make it (these requests plan no
// live duplicates, so the workflow's approval would find them shrunk).
void approveDirectly(const QSqlDatabase &db, qint64 id)
{
    db::exec(
        db,
        QStringLiteral(
            "UPDATE compensation_request SET status = 'APPROVED', decided_account = CURRENT_USER() "
            "WHERE id = ?"),
        {id});
}

// 'user'@'%', holding only the operator role, made anew.
void createOperator(const QSqlDatabase &root, const QString &user)
{
    db::execDirect(root, QStringLiteral("DROP USER IF EXISTS '%1'@'%'").arg(user));
    db::execDirect(root,
                   QStringLiteral("CREATE USER '%1'@'%' IDENTIFIED BY '%2'").arg(user, kPassword));
    db::execDirect(root, QStringLiteral("GRANT payops_operator TO '%1'@'%'").arg(user));
    db::execDirect(root, QStringLiteral("SET DEFAULT ROLE payops_operator FOR '%1'@'%'").arg(user));
}

} // namespace

// Four eyes against one account that connects twice: 'op'@'%' reaches the server over the
// unix socket (USER() op@localhost) and over TCP (op@127.0.0.1). The test run's shared
// server has no TCP listener, so this test starts a server of its own that has one. Every
// action runs as an account holding only the operator role, at both schema levels.
class TestFourEyes final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_server = std::make_unique<LocalServer>(m_dir.path());
        m_port = testkit::freeLoopbackPort();
        m_server->start(m_port);
        db::Connection root(m_server->rootDsn(QString()), QStringLiteral("root"));
        // An anonymous account would take a socket login of any user name from localhost.
        db::execDirect(root.database(),
                       QStringLiteral("DELETE FROM mysql.global_priv WHERE User = ''"));
        db::execDirect(root.database(), QStringLiteral("FLUSH PRIVILEGES"));
    }
    void cleanupTestCase()
    {
        if (m_server)
            m_server->stop();
    }

    void init()
    {
        QFETCH(QString, level);
        m_dsn = freshDatabase(QStringLiteral("fe_%1").arg(level), level);
        m_root = std::make_unique<db::Connection>(m_dsn, QStringLiteral("root"));
        // After the migration: it creates the roles.
        for (const QString &user : {QStringLiteral("fe_a"), QStringLiteral("fe_b")})
            createOperator(root(), user);
    }
    void cleanup() { m_root.reset(); }

    void anAccountCannotApproveItsOwnRequestFromAnotherHost_data() { levels(); }
    void anAccountCannotApproveItsOwnRequestFromAnotherHost()
    {
        db::Connection aSocket(overSocket(QStringLiteral("fe_a")), QStringLiteral("a-socket"));
        db::Connection aTcp(overTcp(QStringLiteral("fe_a")), QStringLiteral("a-tcp"));
        db::Connection bTcp(overTcp(QStringLiteral("fe_b")), QStringLiteral("b-tcp"));
        // Two connections of one account that USER() tells apart.
        QCOMPARE(db::scalar(aSocket.database(), QStringLiteral("SELECT USER()")).toString(),
                 QStringLiteral("fe_a@localhost"));
        QCOMPARE(db::scalar(aTcp.database(), QStringLiteral("SELECT USER()")).toString(),
                 QStringLiteral("fe_a@127.0.0.1"));

        CompensationPlan plan;
        plan.moneyFen = 9000;
        const qint64 id =
            requestCompensation(aSocket.database(), plan, CompensationScope::all(),
                                QStringLiteral("duplicate payout"), QStringLiteral("INC-2"));
        // The workflow refuses it, and so does the database to a client that skips the workflow.
        CompensationJob approve;
        approve.approveRequestId = id;
        approve.reason = QStringLiteral("looks right");
        approve.ticket = QStringLiteral("INC-2");
        const CompensationResult result = runCompensation(aTcp.database(), approve);
        QVERIFY2(result.refusal.contains(QStringLiteral("another operator")),
                 qPrintable(result.refusal));
        QVERIFY(test::refusal([&] {
                    db::exec(aTcp.database(),
                             QStringLiteral("UPDATE compensation_request SET status = 'APPROVED', "
                                            "decided_account = CURRENT_USER() WHERE id = ?"),
                             {id});
                }).contains(QStringLiteral("another operator")));
        QVERIFY(!test::refusal([&] { rejectCompensationRequest(aTcp.database(), id); }).isEmpty());
        QCOMPARE(loadCompensationRequest(root(), id)->status, QStringLiteral("PENDING"));

        // Another account cannot decide under the requester's account name either.
        QVERIFY(test::refusal([&] {
                    db::exec(bTcp.database(),
                             QStringLiteral("UPDATE compensation_request SET status = 'APPROVED', "
                                            "decided_account = 'fe_a@%' WHERE id = ?"),
                             {id});
                }).contains(QStringLiteral("decided_account")));

        QVERIFY(loadCompensationRequest(aTcp.database(), id)->byThisUser);
        QVERIFY(!loadCompensationRequest(bTcp.database(), id)->byThisUser);
        approveDirectly(bTcp.database(), id);
        const auto decided = loadCompensationRequest(root(), id);
        QCOMPARE(decided->status, QStringLiteral("APPROVED"));
        QCOMPARE(decided->requestedBy, QStringLiteral("fe_a@localhost"));
        QCOMPARE(decided->requestedAccount, QStringLiteral("fe_a@%"));
        QCOMPARE(decided->decidedBy, QStringLiteral("fe_b@127.0.0.1"));
        QCOMPARE(decided->decidedAccount, QStringLiteral("fe_b@%"));
    }

    void anAccountCannotConfirmItsOwnDraftFromAnotherHost_data() { levels(); }
    void anAccountCannotConfirmItsOwnDraftFromAnotherHost()
    {
        db::execDirect(
            root(),
            QStringLiteral("INSERT INTO orders (id, user_id, amount_fen) VALUES (1001, 1, 9900)"));
        db::execDirect(
            root(),
            QStringLiteral(
                "INSERT INTO platform_statement (id, file_sha256, format, channel, line_count) "
                "VALUES (1, REPEAT('a', 64), 'wechat', 'wechat', 1)"));
        db::execDirect(
            root(),
            QStringLiteral(
                "INSERT INTO platform_statement_line (statement_id, line_no, pay_no, order_id, "
                "amount_fen, status, paid_at) VALUES "
                "(1, 7, 'WX-LOST', 1001, 9900, 'SUCCESS', '2026-12-01 01:02:03')"));
        db::Connection aSocket(overSocket(QStringLiteral("fe_a")), QStringLiteral("a-socket"));
        db::Connection aTcp(overTcp(QStringLiteral("fe_a")), QStringLiteral("a-tcp"));
        db::Connection bTcp(overTcp(QStringLiteral("fe_b")), QStringLiteral("b-tcp"));

        const qint64 draft =
            draftMissingPayment(aSocket.database(), 1, 7, 0, QStringLiteral("漏单"));
        QVERIFY(test::refusal([&] {
                    confirmMissingPayment(aTcp.database(), draft, QString());
                }).contains(QStringLiteral("another account")));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")), 0);
        // Nor under a name it is not, nor without saying who it is.
        QVERIFY(test::refusal([&] {
                    db::exec(
                        bTcp.database(),
                        QStringLiteral("UPDATE missing_payment_draft SET status = 'CONFIRMED', "
                                       "decided_account = 'fe_a@%' WHERE id = ?"),
                        {draft});
                }).contains(QStringLiteral("decided_account")));
        QVERIFY(test::refusal([&] {
                    db::exec(
                        bTcp.database(),
                        QStringLiteral(
                            "UPDATE missing_payment_draft SET status = 'CONFIRMED' WHERE id = ?"),
                        {draft});
                }).contains(QStringLiteral("decided_account")));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log")), 0);

        confirmMissingPayment(bTcp.database(), draft, QStringLiteral("checked against the bill"));
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM pay_callback_log WHERE pay_no = "
                                      "'WX-LOST' AND status = 'RECORDED'")),
                 1);
        QCOMPARE(
            db::scalar(root(), QStringLiteral(
                                   "SELECT CONCAT_WS(' ', drafted_by, drafted_account, decided_by, "
                                   "decided_account) FROM missing_payment_draft"))
                .toString(),
            QStringLiteral("fe_a@localhost fe_a@% fe_b@127.0.0.1 fe_b@%"));
    }

    // The allowance is the database's: rows written straight into `compensation`, as a
    // client that skips payops would, are counted and refused the same.
    void theDatabaseCountsSoloCompensationOverTheWindow_data() { levels(); }
    void theDatabaseCountsSoloCompensationOverTheWindow()
    {
        db::execDirect(
            root(),
            QStringLiteral(
                "UPDATE payops_meta SET value = '2000' WHERE name = 'four_eyes_threshold_fen'"));
        db::Connection aSocket(overSocket(QStringLiteral("fe_a")), QStringLiteral("a-socket"));
        db::Connection aTcp(overTcp(QStringLiteral("fe_a")), QStringLiteral("a-tcp"));
        db::Connection bTcp(overTcp(QStringLiteral("fe_b")), QStringLiteral("b-tcp"));
        const auto insert = [](const QSqlDatabase &db, int target) {
            db::exec(
                db,
                QStringLiteral(
                    "INSERT INTO compensation (target_table, target_id, action, amount_fen, "
                    "created_by, "
                    "created_at) VALUES ('user_coupon', ?, 'FREEZE_COUPON', 1500, 'someone@else', "
                    "'2000-01-01')"),
                {target});
        };
        insert(aSocket.database(), 1);
        QCOMPARE(soloCompensatedFen(aTcp.database()), 1500);
        // The second instalment goes over, from either connection of the account.
        QVERIFY(test::refusal([&] {
                    insert(aTcp.database(), 2);
                }).contains(QStringLiteral("four eyes")));
        QVERIFY(test::refusal([&] {
                    insert(aSocket.database(), 2);
                }).contains(QStringLiteral("four eyes")));
        // Who and when are the database's, whatever the statement said.
        QCOMPARE(
            db::scalar(
                root(),
                QStringLiteral("SELECT CONCAT(created_by, ' ', created_user, ' ', "
                               "created_at > UTC_TIMESTAMP() - INTERVAL 1 HOUR) FROM compensation"))
                .toString(),
            QStringLiteral("fe_a@localhost fe_a 1"));
        // Another account has an allowance of its own.
        insert(bTcp.database(), 2);
        QCOMPARE(soloCompensatedFen(bTcp.database()), 1500);
        // A request nobody approved lends no approval to rows that name it.
        CompensationPlan plan;
        plan.moneyFen = 3000;
        const qint64 id =
            requestCompensation(aSocket.database(), plan, CompensationScope::all(),
                                QStringLiteral("duplicate payout"), QStringLiteral("INC-4"));
        const auto underRequest = [id](const QSqlDatabase &db, int target) {
            db::exec(db,
                     QStringLiteral("INSERT INTO compensation (target_table, target_id, action, "
                                    "amount_fen, request_id) "
                                    "VALUES ('user_coupon', ?, 'FREEZE_COUPON', 1500, ?)"),
                     {target, id});
        };
        QVERIFY(test::refusal([&] {
                    underRequest(aTcp.database(), 3);
                }).contains(QStringLiteral("not approved")));
        approveDirectly(bTcp.database(), id);
        // Approved, it carries what it asked for and no more, and counts against nobody's
        // allowance.
        underRequest(aTcp.database(), 3);
        underRequest(bTcp.database(), 4);
        QVERIFY(test::refusal([&] {
                    underRequest(bTcp.database(), 5);
                }).contains(QStringLiteral("3000")));
        QCOMPARE(soloCompensatedFen(aTcp.database()), 1500);
        QCOMPARE(soloCompensatedFen(bTcp.database()), 1500);
        QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM compensation")), 4);
    }

    // A database made latin1 and two accounts named in Chinese: each files, decides and
    // compensates under its own name, and four eyes tells the two apart. The names pass through
    // routine parameters, which take the database's character set unless they name one.
    void accountsNamedInChineseOnALatin1Database_data() { levels(); }
    void accountsNamedInChineseOnALatin1Database()
    {
        QFETCH(QString, level);
        const Dsn dsn = freshDatabase(QStringLiteral("fe_latin1_%1").arg(level), level,
                                      QStringLiteral(" CHARACTER SET latin1"));
        db::Connection admin(dsn, QStringLiteral("root-latin1"));
        const QString zhang = QStringLiteral("张三");
        const QString li = QStringLiteral("李四");
        const auto as = [&](const QString &user) {
            createOperator(admin.database(), user);
            Dsn account = dsn;
            account.user = user;
            account.password = kPassword;
            return account;
        };
        db::Connection a(as(zhang), QStringLiteral("zhang"));
        db::Connection b(as(li), QStringLiteral("li"));
        QCOMPARE(
            db::scalar(a.database(), QStringLiteral("SELECT payops_user_name(USER())")).toString(),
            zhang);

        CompensationPlan plan;
        plan.moneyFen = 3000;
        const qint64 id = requestCompensation(a.database(), plan, CompensationScope::all(),
                                              QStringLiteral("重复发放"), QStringLiteral("工单-9"));
        QVERIFY(test::refusal([&] {
                    approveDirectly(a.database(), id);
                }).contains(QStringLiteral("another operator")));
        approveDirectly(b.database(), id);
        const auto decided = loadCompensationRequest(admin.database(), id);
        QCOMPARE(decided->status, QStringLiteral("APPROVED"));
        QCOMPARE(decided->requestedAccount, zhang + QStringLiteral("@%"));
        QCOMPARE(decided->decidedAccount, li + QStringLiteral("@%"));

        // Each name has an allowance of its own, and the refusal names whose it is.
        db::execDirect(
            admin.database(),
            QStringLiteral(
                "UPDATE payops_meta SET value = '2000' WHERE name = 'four_eyes_threshold_fen'"));
        const auto insert = [](const QSqlDatabase &db, int target) {
            db::exec(db,
                     QStringLiteral("INSERT INTO compensation (target_table, target_id, action, "
                                    "amount_fen) VALUES ('user_coupon', ?, 'FREEZE_COUPON', 1500)"),
                     {target});
        };
        insert(a.database(), 1);
        QCOMPARE(soloCompensatedFen(a.database()), 1500);
        const QString refusal = test::refusal([&] { insert(a.database(), 2); });
        QVERIFY2(refusal.contains(QStringLiteral("four eyes: ") + zhang), qPrintable(refusal));
        insert(b.database(), 2);
        QCOMPARE(soloCompensatedFen(b.database()), 1500);
        QCOMPARE(db::scalar(admin.database(),
                            QStringLiteral("SELECT GROUP_CONCAT(created_user ORDER BY target_id) "
                                           "FROM compensation"))
                     .toString(),
                 zhang + QLatin1Char(',') + li);
    }

private:
    static void levels() { test::addSchemaLevelRows(); }

    // Database `name` made anew (`options`: of CREATE DATABASE) and migrated to `level`.
    Dsn freshDatabase(const QString &name, const QString &level,
                      const QString &options = QString()) const
    {
        {
            db::Connection server(m_server->rootDsn(QString()), QStringLiteral("root"));
            db::execDirect(server.database(), QStringLiteral("DROP DATABASE IF EXISTS ") + name);
            db::execDirect(server.database(), QStringLiteral("CREATE DATABASE ") + name + options);
        }
        const Dsn dsn = m_server->rootDsn(name);
        test::prepareCallbackDatabase(dsn, level, 0);
        return dsn;
    }

    Dsn overSocket(const QString &user) const
    {
        Dsn dsn = m_dsn;
        dsn.user = user;
        dsn.password = kPassword;
        return dsn;
    }
    Dsn overTcp(const QString &user) const
    {
        Dsn dsn = overSocket(user);
        dsn.socket.clear();
        dsn.host = QStringLiteral("127.0.0.1");
        dsn.port = m_port;
        return dsn;
    }

    QSqlDatabase root() const { return m_root->database(); }
    qint64 count(const QString &sql) const { return db::scalar(root(), sql).toLongLong(); }

    QTemporaryDir m_dir{QDir::tempPath() + QStringLiteral("/fe-XXXXXX")};
    std::unique_ptr<LocalServer> m_server;
    int m_port = 0;
    Dsn m_dsn;
    std::unique_ptr<db::Connection> m_root;
};

PAYOPS_TEST_MAIN_CORE(TestFourEyes)
#include "tst_foureyes.moc"
