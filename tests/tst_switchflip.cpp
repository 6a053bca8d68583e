// The console's switch, flipAndAwait, run as an account that holds payops_operator and nothing
// else, at both schema levels, against real endpoint instances: one that applies the new
// version and one that hangs. The switch dialog only shows what this returns.
#include "callbackfixture.h"
#include "console/switchflip.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "scratchdatabase.h"
#include "testmain.h"

#include <QScopeGuard>

#include <csignal>

using namespace payops;

namespace {

QString scalarText(const Dsn &dsn, const QString &sql)
{
    db::Connection connection(dsn, QStringLiteral("check"));
    return db::scalar(connection.database(), sql).toString();
}

} // namespace

class TestSwitchFlip final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void flipReachesTheLiveAndNamesTheLate_data() { test::addSchemaLevelRows(); }
    void flipReachesTheLiveAndNamesTheLate()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("swflip"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::CallbackdProcess healthy(scratch.dsn(), QStringLiteral("safe"),
                                       QStringLiteral("inst-healthy"));
        test::CallbackdProcess hung(scratch.dsn(), QStringLiteral("safe"),
                                    QStringLiteral("inst-hung"));
        test::ScratchAccount operatorAccount(QStringLiteral("payops_operator"));
        db::Connection asOperator(operatorAccount.dsnFor(scratch.name()),
                                  QStringLiteral("operator"));
        const QSqlDatabase db = asOperator.database();
        QTRY_COMPARE_WITH_TIMEOUT(console::liveInstanceIds(db).size(), qsizetype(2), 10000);
        QStringList live = console::liveInstanceIds(db);
        live.sort();
        QCOMPARE(live, (QStringList{QStringLiteral("inst-healthy"), QStringLiteral("inst-hung")}));

        ::kill(pid_t(hung.pid()), SIGSTOP);
        auto resume = qScopeGuard([&hung] { ::kill(pid_t(hung.pid()), SIGCONT); });
        QStringList acknowledged;
        const console::SwitchOutcome outcome = console::flipAndAwait(
            db, CallbackMode::RecordOnly, QStringLiteral("INC-9 duplicate coupons"),
            [&acknowledged](const InstanceAck &ack) { acknowledged << ack.instance; });

        QVERIFY(outcome.flip.changed);
        QCOMPARE(outcome.flip.before.mode, CallbackMode::Normal);
        QCOMPARE(outcome.flip.after.mode, CallbackMode::RecordOnly);
        QVERIFY2(outcome.waitError.isEmpty(), qPrintable(outcome.waitError));
        QCOMPARE(acknowledged, QStringList{QStringLiteral("inst-healthy")});
        QCOMPARE(outcome.instances.size(), qsizetype(2));
        for (const InstanceAck &ack : outcome.instances) {
            QCOMPARE(ack.acknowledged, ack.instance == QLatin1String("inst-healthy"));
            if (ack.acknowledged)
                QCOMPARE(ack.versionApplied, outcome.flip.after.version);
        }
        QCOMPARE(scalarText(scratch.dsn(), QStringLiteral("SELECT mode FROM callback_switch")),
                 QStringLiteral("RECORD_ONLY"));
        QCOMPARE(
            scalarText(scratch.dsn(),
                       QStringLiteral("SELECT CONCAT(COUNT(*), ' ', MAX(reason), ' ', MAX(actor)) "
                                      "FROM ops_audit_log WHERE action = 'switch.flip'")),
            QStringLiteral("1 INC-9 duplicate coupons %1@localhost").arg(operatorAccount.user()));

        // Flipped again to the same mode: nothing changes, and the instances are still watched.
        resume.dismiss();
        ::kill(pid_t(hung.pid()), SIGCONT);
        const console::SwitchOutcome again =
            console::flipAndAwait(db, CallbackMode::RecordOnly, QStringLiteral("INC-9 again"));
        QVERIFY(!again.flip.changed);
        QCOMPARE(again.flip.after.version, outcome.flip.after.version);
    }

    // An account without the operator's role may not flip: the flip throws and nothing changes.
    void financeMayNotFlip_data() { test::addSchemaLevelRows(); }
    void financeMayNotFlip()
    {
        QFETCH(QString, level);
        test::ScratchDatabase scratch(QStringLiteral("swdeny"));
        test::prepareCallbackDatabase(scratch.dsn(), level, 1);
        test::ScratchAccount finance(QStringLiteral("payops_finance"));
        db::Connection asFinance(finance.dsnFor(scratch.name()), QStringLiteral("finance"));
        const QString refused = test::refusal([&asFinance] {
            console::flipAndAwait(asFinance.database(), CallbackMode::RecordOnly,
                                  QStringLiteral("not mine"));
        });
        QVERIFY(!refused.isEmpty());
        QCOMPARE(
            scalarText(scratch.dsn(),
                       QStringLiteral("SELECT CONCAT(mode, ' v', version) FROM callback_switch")),
            QStringLiteral("NORMAL v1"));
    }
};

PAYOPS_TEST_MAIN_CORE(TestSwitchFlip)
#include "tst_switchflip.moc"
