// payops grant and payops accounts against the test run's MariaDB: who may hand out the roles,
// what a grantee can do afterwards, and what is refused before anything changes.
#include "cli/roleaccounts.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "domain/money/duplicates/duplicatecount.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace payops;

namespace {

void rootExec(const QString &sql)
{
    db::Connection admin(test::serverDsn(), QStringLiteral("test-admin"));
    db::execDirect(admin.database(), sql);
}

QString accountOf(const test::ScratchAccount &account)
{
    return QStringLiteral("'%1'@'localhost'").arg(account.user());
}

QMap<QString, QString> passwordOf(const test::ScratchAccount &account)
{
    return {{QStringLiteral("PAYOPS_DB_PASSWORD"), account.password()}};
}

// The account's payops roles as `payops accounts --json` lists them (run as root).
QJsonArray holdingsOf(const test::ScratchDatabase &scratch, const test::ScratchAccount &account)
{
    const test::CliRun run = test::runCli({QStringLiteral("accounts"), QStringLiteral("--db"),
                                           scratch.dsn().toString(), QStringLiteral("--json")});
    if (run.exitCode != 0)
        qFatal("payops accounts failed: %s", qPrintable(run.err));
    QJsonArray mine;
    const QJsonArray all = QJsonDocument::fromJson(run.out.toUtf8())
                               .object()
                               .value(QStringLiteral("holders"))
                               .toArray();
    for (const QJsonValue &holder : all) {
        if (holder.toObject().value(QStringLiteral("user")).toString() == account.user())
            mine << holder;
    }
    return mine;
}

// `payops grant --role finance` for `target`, run by `caller` on the scratch database.
test::CliRun grantFinanceAs(const test::ScratchAccount &caller,
                            const test::ScratchDatabase &scratch,
                            const test::ScratchAccount &target)
{
    return test::runCli({QStringLiteral("grant"), QStringLiteral("--db"),
                         caller.dsnFor(scratch.name()).toString(), QStringLiteral("--role"),
                         QStringLiteral("finance"), QStringLiteral("--account"), accountOf(target)},
                        passwordOf(caller));
}

// `payops grant --role ROLE` for `target`, run by root, which ran the migrations.
test::CliRun grantAsRoot(const test::ScratchDatabase &scratch, const QString &role,
                         const test::ScratchAccount &target)
{
    return test::runCli({QStringLiteral("grant"), QStringLiteral("--db"), scratch.dsn().toString(),
                         QStringLiteral("--role"), role, QStringLiteral("--account"),
                         accountOf(target)});
}

// A scratch database migrated by root: root ran the migrations, so root administers the roles
// (they are server-wide and every test creates them as root).
void migrate(const test::ScratchDatabase &scratch)
{
    db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
    db::Migrator(admin, checkMigrationRequirement).migrate(db::SchemaLevel::Current, false);
}

} // namespace

class TestAccounts final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void accountNamesParse_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("host");
        QTest::newRow("quoted") << QStringLiteral("'alice'@'%'") << QStringLiteral("alice")
                                << QStringLiteral("%");
        QTest::newRow("bare") << QStringLiteral("alice@localhost") << QStringLiteral("alice")
                              << QStringLiteral("localhost");
        QTest::newRow("double quotes") << QStringLiteral("\"bob.ops\"@\"10.0.0.%\"")
                                       << QStringLiteral("bob.ops") << QStringLiteral("10.0.0.%");
        QTest::newRow("backticks") << QStringLiteral("`carol-1`@`::1`") << QStringLiteral("carol-1")
                                   << QStringLiteral("::1");
        QTest::newRow("mixed") << QStringLiteral("'dave'@db.example.com") << QStringLiteral("dave")
                               << QStringLiteral("db.example.com");
        QTest::newRow("netmask") << QStringLiteral("eve@'10.1.0.0/255.255.0.0'")
                                 << QStringLiteral("eve") << QStringLiteral("10.1.0.0/255.255.0.0");
        QTest::newRow("no host is any host")
            << QStringLiteral("frank") << QStringLiteral("frank") << QStringLiteral("%");
    }

    void accountNamesParse()
    {
        QFETCH(QString, text);
        QFETCH(QString, user);
        QFETCH(QString, host);
        const cli::AccountParse parsed = cli::parseAccountName(text);
        QVERIFY2(parsed.account, qPrintable(parsed.error));
        QCOMPARE(parsed.account->user, user);
        QCOMPARE(parsed.account->host, host);
        QCOMPARE(parsed.account->sql(), QStringLiteral("'%1'@'%2'").arg(user, host));
    }

    void badAccountsAndRolesAreRefusedBeforeConnecting_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("mentions");
        const auto grant = [](const QString &role, const QString &account) {
            return QStringList{QStringLiteral("--role"), role, QStringLiteral("--account"),
                               account};
        };
        const QString operatorRole = QStringLiteral("operator");
        QTest::newRow("unknown role") << grant(QStringLiteral("admin"), QStringLiteral("alice@%"))
                                      << QStringLiteral("--role");
        QTest::newRow("role by its SQL name")
            << grant(QStringLiteral("payops_operator"), QStringLiteral("alice@%"))
            << QStringLiteral("--role");
        QTest::newRow("no account")
            << QStringList{QStringLiteral("--role"), operatorRole} << QStringLiteral("--account");
        QTest::newRow("injection in user")
            << grant(operatorRole, QStringLiteral("alice'@'%'; DROP USER root; --"))
            << QStringLiteral("--account");
        QTest::newRow("injection after host")
            << grant(operatorRole, QStringLiteral("'alice'@'%' WITH ADMIN OPTION"))
            << QStringLiteral("--account");
        QTest::newRow("quote inside")
            << grant(operatorRole, QStringLiteral("'al'ice'@'%'")) << QStringLiteral("--account");
        QTest::newRow("backslash")
            << grant(operatorRole, QStringLiteral("alice\\@%")) << QStringLiteral("--account");
        QTest::newRow("unclosed quote")
            << grant(operatorRole, QStringLiteral("'alice@%")) << QStringLiteral("--account");
        QTest::newRow("space in host") << grant(operatorRole, QStringLiteral("alice@local host"))
                                       << QStringLiteral("--account");
        QTest::newRow("empty user")
            << grant(operatorRole, QStringLiteral("@localhost")) << QStringLiteral("--account");
        QTest::newRow("two ats") << grant(operatorRole, QStringLiteral("alice@a@b"))
                                 << QStringLiteral("--account");
        QTest::newRow("empty host")
            << grant(operatorRole, QStringLiteral("'alice'@''")) << QStringLiteral("--account");
        QTest::newRow("too long") << grant(operatorRole,
                                           QString(81, QLatin1Char('a')) + QStringLiteral("@%"))
                                  << QStringLiteral("--account");
    }

    void badAccountsAndRolesAreRefusedBeforeConnecting()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, mentions);
        // An unreachable server: a refusal that named the connection would mean it tried.
        const test::CliRun run =
            test::runCli(QStringList{QStringLiteral("grant"), QStringLiteral("--db"),
                                     QStringLiteral("mysql://root@127.0.0.1:1/payops")} +
                         arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("cannot reach")), qPrintable(run.err));
        QCOMPARE(run.err.trimmed().count(QLatin1Char('\n')), 0);
    }

    void grantedOperatorActsWithItsDefaultRole()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount alice{QString()};
        // Before: alice holds nothing and may not even open the database.
        QCOMPARE(holdingsOf(scratch, alice).size(), 0);
        const QStringList degrade{
            QStringLiteral("degrade"),  QStringLiteral("on"),
            QStringLiteral("--reason"), QStringLiteral("drill"),
            QStringLiteral("--wait"),   QStringLiteral("0"),
            QStringLiteral("--db"),     alice.dsnFor(scratch.name()).toString()};
        QCOMPARE(test::runCli(degrade, passwordOf(alice)).exitCode, 2);

        const test::CliRun granted =
            test::runCli({QStringLiteral("grant"), QStringLiteral("--db"), scratch.dsn().toString(),
                          QStringLiteral("--role"), QStringLiteral("operator"),
                          QStringLiteral("--account"), accountOf(alice)});
        QVERIFY2(granted.exitCode == 0, qPrintable(granted.err));
        QVERIFY2(
            granted.out.contains(QStringLiteral("granted payops_operator to ") + accountOf(alice)),
            qPrintable(granted.out));

        const QJsonArray holdings = holdingsOf(scratch, alice);
        QCOMPARE(holdings.size(), 1);
        const QJsonObject holding = holdings.first().toObject();
        QCOMPARE(holding.value(QStringLiteral("role")).toString(),
                 QStringLiteral("payops_operator"));
        QCOMPARE(holding.value(QStringLiteral("host")).toString(), QStringLiteral("localhost"));
        QCOMPARE(holding.value(QStringLiteral("default")).toBool(), true);
        QCOMPARE(holding.value(QStringLiteral("admin")).toBool(), false);

        // A fresh login has the role without SET ROLE ...
        {
            db::Connection connection(alice.dsnFor(scratch.name()), QStringLiteral("alice"));
            QCOMPARE(db::scalar(connection.database(), QStringLiteral("SELECT CURRENT_ROLE()"))
                         .toString(),
                     QStringLiteral("payops_operator"));
        }
        // ... and so the command that needs it works.
        const test::CliRun flipped = test::runCli(degrade, passwordOf(alice));
        QVERIFY2(flipped.exitCode == 0, qPrintable(flipped.err));
        db::Connection admin(scratch.dsn(), QStringLiteral("admin"));
        QCOMPARE(db::scalar(admin.database(), QStringLiteral("SELECT mode FROM callback_switch"))
                     .toString(),
                 QStringLiteral("RECORD_ONLY"));

        // The human-readable list shows the same.
        const test::CliRun listed = test::runCli(
            {QStringLiteral("accounts"), QStringLiteral("--db"), scratch.dsn().toString()});
        QCOMPARE(listed.exitCode, 0);
        const QStringList lines = listed.out.split(QLatin1Char('\n'));
        const auto row = std::find_if(lines.cbegin(), lines.cend(), [&alice](const QString &line) {
            return line.contains(QStringLiteral("'%1'@'localhost'").arg(alice.user()));
        });
        QVERIFY2(row != lines.cend(), qPrintable(listed.out));
        QCOMPARE(row->simplified(),
                 QStringLiteral("payops_operator '%1'@'localhost' yes no").arg(alice.user()));

        // MariaDB has one default role per account: a second role replaces it, and says so.
        const test::CliRun second =
            test::runCli({QStringLiteral("grant"), QStringLiteral("--db"), scratch.dsn().toString(),
                          QStringLiteral("--role"), QStringLiteral("finance"),
                          QStringLiteral("--account"), accountOf(alice)});
        QVERIFY2(second.exitCode == 0, qPrintable(second.err));
        QVERIFY2(second.out.contains(QStringLiteral("payops_operator was its default role before")),
                 qPrintable(second.out));
        QMap<QString, bool> defaults;
        for (const QJsonValue &held : holdingsOf(scratch, alice))
            defaults.insert(held[QStringLiteral("role")].toString(),
                            held[QStringLiteral("default")].toBool());
        QCOMPARE(defaults, (QMap<QString, bool>{{QStringLiteral("payops_finance"), true},
                                                {QStringLiteral("payops_operator"), false}}));
    }

    void grantedFinanceReadsButDoesNotFlip()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount bob{QString()};
        const test::CliRun granted = grantAsRoot(scratch, QStringLiteral("finance"), bob);
        QVERIFY2(granted.exitCode == 0, qPrintable(granted.err));
        const QString dsn = bob.dsnFor(scratch.name()).toString();
        const test::CliRun audit = test::runCli(
            {QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--db"), dsn},
            passwordOf(bob));
        QVERIFY2(audit.exitCode == 0, qPrintable(audit.err));
        const test::CliRun degrade =
            test::runCli({QStringLiteral("degrade"), QStringLiteral("on"),
                          QStringLiteral("--reason"), QStringLiteral("x"), QStringLiteral("--wait"),
                          QStringLiteral("0"), QStringLiteral("--db"), dsn},
                         passwordOf(bob));
        QCOMPARE(degrade.exitCode, 1);
    }

    // payops-callbackd's own account: granted like the others, listed, and it may record a
    // callback but not read the audit log.
    void grantedEndpointRecordsButDoesNotReadTheAudit()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount callbacks{QString()};
        const test::CliRun granted = grantAsRoot(scratch, QStringLiteral("endpoint"), callbacks);
        QVERIFY2(granted.exitCode == 0, qPrintable(granted.err));
        const QJsonArray holdings = holdingsOf(scratch, callbacks);
        QCOMPARE(holdings.size(), 1);
        QCOMPARE(holdings.first().toObject().value(QStringLiteral("role")).toString(),
                 QStringLiteral("payops_endpoint"));
        QVERIFY(holdings.first().toObject().value(QStringLiteral("default")).toBool());

        db::Connection connection(callbacks.dsnFor(scratch.name()), QStringLiteral("endpoint"));
        db::exec(connection.database(),
                 QStringLiteral("INSERT INTO pay_callback_log (pay_no, order_id, raw_body, status) "
                                "VALUES ('G-1', 1, '{}', 'RECORDED')"));
        QVERIFY_THROWS_EXCEPTION(db::Error,
                                 db::scalar(connection.database(),
                                            QStringLiteral("SELECT COUNT(*) FROM ops_audit_log")));
    }

    void revokeTakesTheRoleAndItsDefault()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount carol{QString()};
        const QStringList grant{QStringLiteral("grant"),   QStringLiteral("--db"),
                                scratch.dsn().toString(),  QStringLiteral("--role"),
                                QStringLiteral("finance"), QStringLiteral("--account"),
                                accountOf(carol)};
        QCOMPARE(test::runCli(grant).exitCode, 0);
        const test::CliRun revoked = test::runCli(grant + QStringList{QStringLiteral("--revoke")});
        QVERIFY2(revoked.exitCode == 0, qPrintable(revoked.err));
        QVERIFY2(revoked.out.contains(QStringLiteral("no default role now")),
                 qPrintable(revoked.out));
        QCOMPARE(holdingsOf(scratch, carol).size(), 0);
        {
            db::Connection admin(test::serverDsn(), QStringLiteral("admin"));
            QCOMPARE(
                db::scalar(admin.database(),
                           QStringLiteral("SELECT default_role FROM mysql.user WHERE User = ?"),
                           {carol.user()})
                    .toString(),
                QString());
        }
        // The login works and carries no role (nor any right on the database now).
        db::Connection connection(carol.dsnFor(QString()), QStringLiteral("carol"));
        QVERIFY(
            db::scalar(connection.database(), QStringLiteral("SELECT CURRENT_ROLE()")).isNull());

        const test::CliRun again = test::runCli(grant + QStringList{QStringLiteral("--revoke")});
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.out.contains(QStringLiteral("nothing changed")), qPrintable(again.out));
    }

    // The case: an account with every privilege, WITH GRANT OPTION, that did not run
    // the migrations. The server says "Access denied"; payops says why and what to run.
    void nonAdminsGetTheReasonAndNothingChanges()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount target{QString()};
        test::ScratchAccount dba{QString()};
        rootExec(QStringLiteral("GRANT ALL PRIVILEGES ON *.* TO '%1'@'localhost' WITH GRANT OPTION")
                     .arg(dba.user()));
        test::ScratchAccount operatorAccount{QStringLiteral("payops_operator")};

        for (const test::ScratchAccount *caller : {&dba, &operatorAccount}) {
            const test::CliRun run = grantFinanceAs(*caller, scratch, target);
            QCOMPARE(run.exitCode, 1);
            QVERIFY2(
                run.err.contains(QStringLiteral("does not administer the role payops_finance")),
                qPrintable(run.err));
            QVERIFY2(
                run.err.contains(
                    QStringLiteral("GRANT payops_finance TO '%1'@'localhost' WITH ADMIN OPTION")
                        .arg(caller->user())),
                qPrintable(run.err));
            QVERIFY2(!run.err.contains(QStringLiteral("Access denied"), Qt::CaseInsensitive),
                     qPrintable(run.err));
            QCOMPARE(run.err.trimmed().count(QLatin1Char('\n')), 0);
        }
        QCOMPARE(holdingsOf(scratch, target).size(), 0);
    }

    // Admin of the role but without the right to set another account's default role: refused
    // before the grant, so that no half-done account remains.
    void adminWithoutDefaultRoleRightChangesNothing()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        test::ScratchAccount target{QString()};
        test::ScratchAccount delegate{QString()};
        rootExec(QStringLiteral("GRANT payops_finance TO '%1'@'localhost' WITH ADMIN OPTION")
                     .arg(delegate.user()));
        rootExec(QStringLiteral("GRANT SELECT ON %1.* TO '%2'@'localhost'")
                     .arg(db::quoteIdentifier(scratch.name()), delegate.user()));
        const test::CliRun run = grantFinanceAs(delegate, scratch, target);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("may not set another account's default role")),
                 qPrintable(run.err));
        QCOMPARE(holdingsOf(scratch, target).size(), 0);

        // payops accounts tells this account, too, what it may not read.
        const test::CliRun accounts =
            test::runCli({QStringLiteral("accounts"), QStringLiteral("--db"),
                          delegate.dsnFor(scratch.name()).toString()},
                         passwordOf(delegate));
        QCOMPARE(accounts.exitCode, 1);
        QVERIFY2(accounts.err.contains(QStringLiteral("may not read mysql.roles_mapping")),
                 qPrintable(accounts.err));
    }

    void unknownAccountIsNamed()
    {
        test::ScratchDatabase scratch;
        migrate(scratch);
        const test::CliRun run =
            test::runCli({QStringLiteral("grant"), QStringLiteral("--db"), scratch.dsn().toString(),
                          QStringLiteral("--role"), QStringLiteral("operator"),
                          QStringLiteral("--account"), QStringLiteral("'nobody_xyz'@'nowhere'")});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("there is no account 'nobody_xyz'@'nowhere'")),
                 qPrintable(run.err));
        // ... and it was not created on the way (MariaDB's GRANT can create accounts).
        db::Connection admin(test::serverDsn(), QStringLiteral("admin"));
        QCOMPARE(
            db::scalar(admin.database(),
                       QStringLiteral("SELECT COUNT(*) FROM mysql.user WHERE User = 'nobody_xyz'"))
                .toInt(),
            0);
    }

    // The command line follows the system's language; English stays the default.
    void helpSpeaksChineseUnderAChineseLocale()
    {
        const QMap<QString, QString> chinese{
            {QStringLiteral("LANG"), QStringLiteral("zh_CN.UTF-8")},
            {QStringLiteral("LANGUAGE"), QString()},
            {QStringLiteral("LC_ALL"), QStringLiteral("zh_CN.UTF-8")}};
        const test::CliRun help = test::runCli({QStringLiteral("--help")}, chinese);
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.contains(QStringLiteral("退出码")), qPrintable(help.out));
        QVERIFY2(help.out.contains(QStringLiteral("为账号授予 payops 角色")), qPrintable(help.out));
        const test::CliRun grantHelp =
            test::runCli({QStringLiteral("grant"), QStringLiteral("--help")}, chinese);
        QVERIFY2(
            grantHelp.out.contains(QStringLiteral("operator（运维）、finance（财务）或 endpoint")),
            qPrintable(grantHelp.out));
        const test::CliRun refused = test::runCli(
            {QStringLiteral("grant"), QStringLiteral("--role"), QStringLiteral("root")}, chinese);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(
            refused.err.contains(QStringLiteral("--role 只能是 operator、finance 或 endpoint")),
            qPrintable(refused.err));

        const QMap<QString, QString> english{{QStringLiteral("LANG"), QStringLiteral("C.UTF-8")},
                                             {QStringLiteral("LANGUAGE"), QString()},
                                             {QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8")}};
        QVERIFY(test::runCli({QStringLiteral("--help")}, english)
                    .out.contains(QStringLiteral("Exit codes")));
    }
};

PAYOPS_TEST_MAIN_CORE(TestAccounts)
#include "tst_accounts.moc"
