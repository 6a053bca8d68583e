#include "posture.h"

#include "domain/callback/callbackswitch.h"
#include "domain/callback/instanceliveness.h"
#include "domain/mapping/mappingcheck.h"
#include "domain/money/auditlog.h"

#include "db/connection.h"
#include "db/dberror.h"

#include <QCoreApplication>
#include <QSqlQuery>
#include <QStringList>

#include <algorithm>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Posture
{
    Q_DECLARE_TR_FUNCTIONS(payops::Posture)
};

// Every check reads at most this many of the last hour's rows, newest first through a time
// index, so that a busy hour on a production primary costs the same as a quiet one. The
// phantom is a property of the code, not of one unlucky callback: an unsafe handler releases
// before its commit on every callback, so the newest ones show it.
constexpr int kRecentRows = 10000;
// Audit entries whose hashes are recomputed on each look; the whole chain is
// `payops audit verify`'s, run when a person asks.
constexpr int kAuditTail = 1000;
// A stored inspection this recent means one is scheduled: twice the period of a schedule that
// runs every 12 hours, so that one late or failed run does not flip the defence, while a
// schedule that stopped shows within a day
// (docs/decisions/0032-inspections-stored-new-by-counts.md).
constexpr int kInspectionHours = 24;

const QStringList &requiredTables()
{
    static const QStringList tables{
        QStringLiteral("payops_meta"),       QStringLiteral("pay_callback_log"),
        QStringLiteral("user_coupon"),       QStringLiteral("point_log"),
        QStringLiteral("order_state"),       QStringLiteral("order_state_log"),
        QStringLiteral("callback_trace"),    QStringLiteral("callback_switch"),
        QStringLiteral("callback_instance"), QStringLiteral("ops_audit_log"),
        QStringLiteral("ops_audit_head")};
    return tables;
}

void requireMigrated(const QSqlDatabase &db)
{
    QStringList present;
    QSqlQuery tables = db::exec(
        db,
        QStringLiteral(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"));
    while (tables.next())
        present << tables.value(0).toString().toLower();
    QStringList missing;
    for (const QString &table : requiredTables())
        if (!present.contains(table))
            missing << table;
    if (!missing.isEmpty())
        throw db::Error(
            Posture::tr("this database has no payops schema (no %1); run payops migrate first")
                .arg(missing.join(QStringLiteral(", "))));
}

Defence makeDefence(const char *name, const char *title, const char *letsThrough)
{
    Defence defence;
    defence.name = QString::fromLatin1(name);
    defence.title = Posture::tr(title);
    defence.letsThrough = Posture::tr(letsThrough);
    return defence;
}

// A unique key on exactly one of `columnSets` (in index order), found by its columns rather than
// its name: a key the team added under another name defends just the same.
Defence keyDefence(const QSqlDatabase &db, Defence defence, const QString &table,
                   const QList<QStringList> &columnSets, const QString &level)
{
    QSqlQuery keys =
        db::exec(db,
                 QStringLiteral("SELECT index_name, GROUP_CONCAT(LOWER(column_name) ORDER BY "
                                "seq_in_index SEPARATOR ',') "
                                "FROM information_schema.statistics WHERE table_schema = "
                                "DATABASE() AND table_name = ? AND non_unique = 0 "
                                "GROUP BY index_name"),
                 {table});
    while (keys.next()) {
        const QStringList columns = keys.value(1).toString().split(QLatin1Char(','));
        if (!columnSets.contains(columns))
            continue;
        defence.state = DefenceState::Present;
        defence.evidence =
            (columns.contains(QLatin1String("live_order_id"))
                 ? Posture::tr("%1 has unique key %2 (%3), over live rows: compensated duplicates "
                               "keep their history")
                 : Posture::tr("%1 has unique key %2 (%3)"))
                .arg(table, keys.value(0).toString(), columns.join(QStringLiteral(", ")));
        return defence;
    }
    defence.state = DefenceState::Missing;
    defence.evidence =
        (level == QLatin1String("legacy")
             ? Posture::tr(
                   "%1 has no unique key on (%2); the database is at level legacy: compensate "
                   "the live duplicates, then add the keys (payops migrate --level current, or "
                   "the playbook's fix step)")
             : Posture::tr("%1 has no unique key on (%2)"))
            .arg(table, columnSets.constFirst().join(QStringLiteral(", ")));
    return defence;
}

// Whether a row a process wrote at `timeColumn` comes from code that still runs, for a query
// that joins callback_instance as `i`. A stopped or stale instance no longer runs that code, and
// rows from before an instance's latest start belong to a handler it may have replaced (the fix
// step restarts the unsafe instances with the safe handler): such rows are named in the evidence
// but do not decide. A row without an instance row (a drain) always decides.
QString stillRunning(const QString &timeColumn)
{
    return QStringLiteral("(i.id IS NULL OR (%1 AND %2 >= i.started_at))")
        .arg(instanceLiveSql(QStringLiteral("i")), timeColumn);
}

// The verdict of a check that reads the last hour: what running code did wrong decides, then
// what it did right; with neither there was nothing to judge by.
void judgeLastHour(Defence &defence, const QStringList &wrong, const QStringList &right,
                   const QStringList &nothing, const QStringList &past)
{
    defence.state = !wrong.isEmpty()   ? DefenceState::Missing
                    : !right.isEmpty() ? DefenceState::Present
                                       : DefenceState::Unknown;
    const QStringList found = wrong.isEmpty() && right.isEmpty() ? nothing : wrong + right;
    defence.evidence =
        Posture::tr("in the last hour, %1").arg((found + past).join(Posture::tr("; ")));
}

// Rejected payment attempts of the last hour: the safe CAS logs order_already_paid and the
// like; the incident's code logs affected_rows_ignored and issues everything anyway.
Defence casDefence(const QSqlDatabase &db)
{
    Defence defence = makeDefence(
        "cas_affected_rows",
        QT_TRANSLATE_NOOP("payops::Posture", "State change by CAS with its affected rows checked"),
        QT_TRANSLATE_NOOP("payops::Posture", "a second callback that waited on the first one's row "
                                             "lock updates 0 rows, nobody looks, "
                                             "and it issues the coupon and the points again"));
    // The state names make the IN list, so that idx_state_log_edge (from_state, to_state,
    // accepted, created_at) reads only the rejected attempts, never the accepted bulk.
    QStringList states;
    QVariantList binds;
    QSqlQuery names = db::exec(db, QStringLiteral("SELECT name FROM order_state"));
    while (names.next()) {
        states << QStringLiteral("?");
        binds << names.value(0);
    }
    if (states.isEmpty())
        throw db::Error(Posture::tr("order_state is empty; run payops migrate"));
    binds << kRecentRows;
    const QString running = stillRunning(QStringLiteral("a.created_at"));
    QSqlQuery attempts = db::exec(
        db,
        QStringLiteral("SELECT a.reason = 'affected_rows_ignored', %2, COUNT(*), "
                       "  GROUP_CONCAT(DISTINCT a.instance ORDER BY a.instance SEPARATOR ', ') "
                       "FROM (SELECT reason, instance, created_at FROM order_state_log WHERE "
                       "from_state IN (%1) "
                       "      AND to_state = 'PAID' AND accepted = 0 AND created_at >= NOW(3) - "
                       "INTERVAL 1 HOUR "
                       "      ORDER BY created_at DESC LIMIT ?) a "
                       "LEFT JOIN callback_instance i ON i.id = a.instance "
                       "GROUP BY a.reason = 'affected_rows_ignored', %2")
            .arg(states.join(QLatin1Char(',')), running),
        binds);
    qint64 ignored = 0;
    qint64 checked = 0;
    qint64 ignoredBefore = 0;
    QString ignoredBy;
    QString ignoredBeforeBy;
    while (attempts.next()) {
        const bool ignoring = attempts.value(0).toBool();
        const bool runs = attempts.value(1).toBool();
        const qint64 n = attempts.value(2).toLongLong();
        if (ignoring && runs) {
            ignored = n;
            ignoredBy = attempts.value(3).toString();
        } else if (ignoring) {
            ignoredBefore = n;
            ignoredBeforeBy = attempts.value(3).toString();
        } else if (runs) {
            checked = n;
        }
    }
    QStringList wrong;
    QStringList right;
    QStringList past;
    if (ignored > 0)
        wrong << Posture::tr("%1 payment attempt(s) updated 0 rows and went on anyway "
                             "(affected_rows_ignored, "
                             "instance %2)")
                     .arg(QString::number(ignored), ignoredBy);
    if (checked > 0)
        right << Posture::tr(
                     "%1 repeated payment attempt(s) were rejected by the CAS (e.g. PAID->PAID "
                     "order_already_paid) and went no further")
                     .arg(checked);
    if (ignoredBefore > 0)
        past << Posture::tr("%1 attempt(s) went on with 0 rows updated on instance %2, which no "
                            "longer runs that "
                            "code")
                    .arg(QString::number(ignoredBefore), ignoredBeforeBy);
    judgeLastHour(
        defence, wrong, right,
        {Posture::tr(
            "no repeated payment attempt by running code, so nothing shows whether the CAS's "
            "affected rows are checked")},
        past);
    return defence;
}

// The last hour's traces per instance and handler, judged by the code that still runs.
Defence lockDefence(const QSqlDatabase &db)
{
    Defence defence = makeDefence(
        "lock_across_commit",
        QT_TRANSLATE_NOOP("payops::Posture", "Lock on pay_no held until after the commit"),
        QT_TRANSLATE_NOOP(
            "payops::Posture",
            "a callback 40 ms behind another takes the released lock, reads the order as still "
            "PENDING (the first has not committed) and runs every side effect again"));
    const QString running = stillRunning(QStringLiteral("t.received_at"));
    QSqlQuery groups = db::exec(
        db,
        QStringLiteral(
            "SELECT t.instance, t.handler, COUNT(*), SUM(t.lock_released_at < t.committed_at), %1 "
            "FROM (SELECT instance, handler, received_at, committed_at, lock_released_at FROM "
            "callback_trace "
            "      WHERE received_at >= NOW(6) - INTERVAL 1 HOUR ORDER BY received_at DESC LIMIT "
            "?) t "
            "LEFT JOIN callback_instance i ON i.id = t.instance "
            "WHERE t.committed_at IS NOT NULL AND t.lock_released_at IS NOT NULL "
            "GROUP BY t.instance, t.handler, %1 ORDER BY t.instance, t.handler")
            .arg(running),
        {kRecentRows});
    QStringList unsafe;
    QStringList safe;
    QStringList past;
    while (groups.next()) {
        const QString who = Posture::tr("instance %1, handler %2")
                                .arg(groups.value(0).toString(), groups.value(1).toString());
        const qint64 total = groups.value(2).toLongLong();
        const qint64 early = groups.value(3).toLongLong();
        if (!groups.value(4).toBool()) {
            if (early > 0)
                past << Posture::tr("%1 released before the commit in %2 of %3 callback(s) but no "
                                    "longer runs")
                            .arg(who, QString::number(early), QString::number(total));
        } else if (early > 0) {
            unsafe << Posture::tr("%1: %2 of %3 callback(s) released the lock before the commit")
                          .arg(who, QString::number(early), QString::number(total));
        } else {
            safe << Posture::tr("%1: all %2 callback(s) released after the commit")
                        .arg(who, QString::number(total));
        }
    }
    judgeLastHour(defence, unsafe, safe,
                  {Posture::tr("no running instance traced a callback with a lock and a commit")},
                  past);
    return defence;
}

Defence switchDefence(const QSqlDatabase &db)
{
    Defence defence = makeDefence(
        "record_only_switch",
        QT_TRANSLATE_NOOP("payops::Posture",
                          "Record-only switch, acknowledged by every live instance"),
        QT_TRANSLATE_NOOP("payops::Posture", "no way to stop processing without taking the "
                                             "endpoint down: the platform's retries keep "
                                             "paying out while you look for the cause, or an "
                                             "instance that never heard the flip keeps "
                                             "doing so"));
    if (!db::scalar(db, QStringLiteral("SELECT COUNT(*) FROM callback_switch WHERE id = 1"))
             .toBool()) {
        defence.state = DefenceState::Missing;
        defence.evidence = Posture::tr("callback_switch has no row; run payops migrate");
        return defence;
    }
    const SwitchState state = readSwitch(db);
    QSqlQuery live = db::exec(
        db, QStringLiteral(
                "SELECT id, switch_version_applied FROM callback_instance WHERE %1 ORDER BY id")
                .arg(instanceLiveSql()));
    QStringList behind;
    int instances = 0;
    while (live.next()) {
        ++instances;
        if (live.value(1).toLongLong() < state.version)
            behind << Posture::tr("%1 (applies version %2)")
                          .arg(live.value(0).toString(),
                               QString::number(live.value(1).toLongLong()));
    }
    const QString mode = callbackModeName(state.mode);
    if (!behind.isEmpty()) {
        defence.state = DefenceState::Missing;
        defence.evidence =
            Posture::tr("the switch is %1, version %2, but %3 of %4 live instance(s) have not "
                        "applied it: %5")
                .arg(mode, QString::number(state.version), QString::number(behind.size()),
                     QString::number(instances), behind.join(QStringLiteral(", ")));
    } else {
        defence.state = DefenceState::Present;
        defence.evidence =
            instances == 0
                ? Posture::tr("the switch is %1, version %2; no instance is live to apply it")
                      .arg(mode, QString::number(state.version))
                : Posture::tr("the switch is %1, version %2; all %3 live instance(s) apply it")
                      .arg(mode, QString::number(state.version), QString::number(instances));
    }
    return defence;
}

// The newest kAuditTail entries, checked by the verifier `payops audit verify` runs over the
// whole chain. An edit or a removal further back is what that command finds; a head that
// disagrees with the log is seen here at once.
Defence auditDefence(const QSqlDatabase &db)
{
    Defence defence = makeDefence(
        "audit_chain",
        QT_TRANSLATE_NOOP("payops::Posture", "Audit log append-only and hash-chained, intact"),
        QT_TRANSLATE_NOOP("payops::Posture", "a compensation or a switch flip edited or removed "
                                             "afterwards goes unnoticed, and finance "
                                             "cannot trust the record of who did what"));
    const AuditVerification tail = verifyAuditTail(db, kAuditTail);
    if (!tail.intact) {
        defence.state = DefenceState::Missing;
        defence.evidence =
            Posture::tr("the audit log is broken: %1; run payops audit verify for the whole chain")
                .arg(tail.problem);
        return defence;
    }
    defence.state = DefenceState::Present;
    if (tail.headId == 0)
        defence.evidence = Posture::tr("the audit log is empty and its head agrees");
    else if (tail.rows >= tail.headId)
        defence.evidence =
            Posture::tr("all %1 audit entries hash and link correctly up to the head")
                .arg(tail.headId);
    else
        defence.evidence =
            Posture::tr("the newest %1 of %2 audit entries hash and link correctly up to the head; "
                        "payops audit verify checks the whole chain")
                .arg(QString::number(tail.rows), QString::number(tail.headId));
    return defence;
}

Defence inspectionDefence(const QSqlDatabase &db)
{
    Defence defence = makeDefence(
        "scheduled_inspection",
        QT_TRANSLATE_NOOP("payops::Posture", "Duplicate inspection on a schedule"),
        QT_TRANSLATE_NOOP("payops::Posture", "duplicates and refunds owed are found when finance "
                                             "asks, days later, instead of minutes "
                                             "after they happen"));
    if (!db::scalar(
             db,
             QStringLiteral(
                 "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() "
                 "AND table_name = 'inspection_run'"))
             .toBool()) {
        defence.evidence = Posture::tr(
            "this database keeps no inspection runs yet (run payops migrate), so it cannot "
            "tell whether one runs");
        return defence;
    }
    // The newest start through idx_inspection_started: one index entry, however long the history.
    QSqlQuery newest =
        db::exec(db, QStringLiteral("SELECT started_at, source, TIMESTAMPDIFF(SECOND, started_at, "
                                    "UTC_TIMESTAMP(3)) FROM inspection_run "
                                    "ORDER BY started_at DESC LIMIT 1"));
    if (!newest.next()) {
        defence.state = DefenceState::Missing;
        defence.evidence =
            Posture::tr(
                "no inspection was ever stored; schedule one in the console's settings or run "
                "payops inspect from cron, at least every %1 hours")
                .arg(kInspectionHours / 2);
        return defence;
    }
    const QString when = newest.value(0).toDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    const QString source = newest.value(1).toString();
    const qint64 ageSeconds = newest.value(2).toLongLong();
    if (ageSeconds <= kInspectionHours * 3600) {
        defence.state = DefenceState::Present;
        defence.evidence =
            Posture::tr("the newest inspection ran at %1 UTC (%2), within the last %3 hours")
                .arg(when, source, QString::number(kInspectionHours));
    } else {
        defence.state = DefenceState::Missing;
        defence.evidence =
            Posture::tr(
                "the newest inspection ran at %1 UTC (%2), more than %3 hours ago: the schedule "
                "has stopped")
                .arg(when, source, QString::number(kInspectionHours));
    }
    return defence;
}

// A side effect's table keeps a group to one row only with a unique key on exactly (order,
// key...): a unique key with one more column (the team's uk_gift_order adds the card's own id)
// lets every copy in.
Defence mappedKeyDefence(const QSqlDatabase &db, const mapping::Mapping &mapping,
                         const mapping::SideEffectMapping &effect)
{
    Defence defence;
    defence.name = QStringLiteral("mapped_key_") + effect.name;
    defence.title = Posture::tr("Key of side effect %1 (order, %2)")
                        .arg(effect.name, effect.key.join(QStringLiteral(", ")));
    defence.letsThrough = Posture::tr(
        "a second live copy for one order whenever anything upstream is bypassed: a lock "
        "released early, an unchecked CAS, a message consumed twice");
    const QStringList columns = QStringList{effect.order} + effect.key;
    const QList<mapping::TableIndex> indexes = mapping::tableIndexes(db, mapping, effect.table);
    if (const mapping::TableIndex *key = mapping::indexLeadingWith(indexes, columns, true)) {
        defence.state = DefenceState::Present;
        defence.evidence =
            Posture::tr("%1 has unique key %2 (%3)")
                .arg(effect.table, key->name, key->columns.join(QStringLiteral(", ")));
        return defence;
    }
    defence.state = DefenceState::Missing;
    QStringList wider;
    for (const mapping::TableIndex &index : indexes)
        if (index.unique && index.columns.size() > columns.size() &&
            mapping::indexLeadingWith({index}, columns))
            wider << QStringLiteral("%1 (%2)").arg(index.name,
                                                   index.columns.join(QStringLiteral(", ")));
    defence.evidence =
        wider.isEmpty()
            ? Posture::tr("%1 has no unique key on exactly (%2)")
                  .arg(effect.table, columns.join(QStringLiteral(", ")))
            : Posture::tr("%1 has no unique key on exactly (%2); %3 has more columns, so it "
                          "does not keep a group to one row")
                  .arg(effect.table, columns.join(QStringLiteral(", ")),
                       wider.join(QStringLiteral(", ")));
    return defence;
}

// A CAS on the order's state (UPDATE ... WHERE id = ? AND state = ?) tells that this callback
// won only when the id picks one row.
Defence mappedCasDefence(const QSqlDatabase &db, const mapping::Mapping &mapping)
{
    const mapping::OrdersMapping &orders = mapping.orders;
    Defence defence = makeDefence(
        "mapped_order_cas",
        QT_TRANSLATE_NOOP("payops::Posture", "Order state writable by CAS (the order id a key)"),
        QT_TRANSLATE_NOOP("payops::Posture",
                          "the state change by order id may match several rows, so its affected "
                          "rows no longer tell whether this callback won: two callbacks can both "
                          "pay"));
    const QList<mapping::TableIndex> indexes = mapping::tableIndexes(db, mapping, orders.table);
    if (const mapping::TableIndex *key = mapping::indexLeadingWith(indexes, {orders.id}, true)) {
        defence.state = DefenceState::Present;
        defence.evidence = Posture::tr("%1 has %2 on (%3): a CAS on %4 changes one row at most")
                               .arg(orders.table,
                                    key->name == QLatin1String("PRIMARY")
                                        ? Posture::tr("the primary key")
                                        : Posture::tr("unique key %1").arg(key->name),
                                    orders.id, orders.status);
        return defence;
    }
    defence.state = DefenceState::Missing;
    defence.evidence =
        indexes.isEmpty()
            ? Posture::tr("%1 has no index at all, or does not exist").arg(orders.table)
            : Posture::tr("%1 has no primary or unique key on (%2)").arg(orders.table, orders.id);
    return defence;
}

// On a Galera cluster some defences hold differently (docs/servers.md): the pay_no lock is
// local to a node, and the keys and the CAS are certified across the nodes. Said in their
// evidence, with the cluster's size; nothing on one server.
void describeCluster(const QSqlDatabase &db, QList<Defence> &defences)
{
    QSqlQuery wsrep = db::exec(db, QStringLiteral("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'"));
    if (!wsrep.next() || wsrep.value(1).toString() != QLatin1String("ON"))
        return;
    QSqlQuery size = db::exec(db, QStringLiteral("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"));
    const QString nodes = size.next() ? size.value(1).toString() : QStringLiteral("?");
    const QString lockNote =
        Posture::tr("On this Galera cluster (%1 nodes) the lock is local to a node: two deliveries "
                    "reaching two nodes both take it. There the certified unique pay_no, the CAS "
                    "and the side-effect keys keep a payment single.")
            .arg(nodes);
    const QString certifiedNote =
        Posture::tr("Certified across this Galera cluster's %1 nodes: of two transactions that "
                    "write the same key on two nodes, the second to commit is aborted (1213).")
            .arg(nodes);
    const QString switchNote =
        Posture::tr("On this Galera cluster (%1 nodes) the barrier's shared lock is not "
                    "certified: a flip does not wait for a transaction on another node. An "
                    "instance acknowledges the flip once its transactions that read the old mode "
                    "have ended: the flip holds when every instance has acknowledged it.")
            .arg(nodes);
    for (Defence &defence : defences) {
        QString note;
        if (defence.name == QLatin1String("lock_across_commit"))
            note = lockNote;
        else if (defence.name == QLatin1String("record_only_switch"))
            note = switchNote;
        else if (defence.state != DefenceState::Missing && // a key that is not there holds nowhere
                 (defence.name.startsWith(QLatin1String("uk_")) ||
                  defence.name.startsWith(QLatin1String("mapped_key_")) ||
                  defence.name == QLatin1String("cas_affected_rows") ||
                  defence.name == QLatin1String("mapped_order_cas")))
            note = certifiedNote;
        if (!note.isEmpty())
            defence.evidence = defence.evidence.isEmpty() ? note : defence.evidence + u' ' + note;
    }
}

QList<Defence> readPosture(const QSqlDatabase &db, const mapping::Mapping *mapping)
{
    requireMigrated(db);
    const QString level =
        db::scalar(db, QStringLiteral("SELECT value FROM payops_meta WHERE name = 'schema_level'"))
            .toString();
    QList<Defence> defences;
    defences << keyDefence(
        db,
        makeDefence(
            "uk_pay_no",
            QT_TRANSLATE_NOOP("payops::Posture",
                              "Unique key on pay_no (each callback accepted once)"),
            QT_TRANSLATE_NOOP("payops::Posture",
                              "a platform retry that races past the replay check is recorded and "
                              "processed again as a new payment")),
        QStringLiteral("pay_callback_log"), {{QStringLiteral("pay_no")}}, level);
    defences << casDefence(db);
    if (mapping) {
        defences << mappedCasDefence(db, *mapping);
        for (const mapping::SideEffectMapping &effect : mapping->sideEffects)
            defences << mappedKeyDefence(db, *mapping, effect);
    } else {
        defences << keyDefence(
            db,
            makeDefence(
                "uk_order_tpl",
                QT_TRANSLATE_NOOP("payops::Posture", "Coupon key (order, coupon template)"),
                QT_TRANSLATE_NOOP("payops::Posture",
                                  "a second coupon of one template for one order whenever "
                                  "anything upstream is bypassed: a lock released early, an "
                                  "unchecked CAS, a message consumed twice")),
            QStringLiteral("user_coupon"),
            {{QStringLiteral("order_id"), QStringLiteral("coupon_template_id")},
             {QStringLiteral("live_order_id"), QStringLiteral("coupon_template_id")}},
            level);
        defences << keyDefence(
            db,
            makeDefence("uk_order_type",
                        QT_TRANSLATE_NOOP("payops::Posture", "Points key (order, point type)"),
                        QT_TRANSLATE_NOOP("payops::Posture",
                                          "a second points row of one type for one order "
                                          "whenever anything upstream is bypassed, paid out to "
                                          "the user's balance")),
            QStringLiteral("point_log"),
            {{QStringLiteral("order_id"), QStringLiteral("point_type")},
             {QStringLiteral("live_order_id"), QStringLiteral("point_type")}},
            level);
    }
    defences << lockDefence(db);
    defences << switchDefence(db);
    defences << auditDefence(db);
    defences << inspectionDefence(db);
    describeCluster(db, defences);
    return defences;
}

} // namespace

QString defenceStateName(DefenceState state)
{
    switch (state) {
    case DefenceState::Present:
        return QStringLiteral("present");
    case DefenceState::Missing:
        return QStringLiteral("missing");
    case DefenceState::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}

QList<Defence> inspectPosture(const QSqlDatabase &db)
{
    return readPosture(db, nullptr);
}

QList<Defence> inspectMappedPosture(const QSqlDatabase &db, const mapping::Mapping &mapping)
{
    return readPosture(db, &mapping);
}

bool allPresent(const QList<Defence> &defences)
{
    return std::none_of(defences.cbegin(), defences.cend(), [](const Defence &defence) {
        return defence.state == DefenceState::Missing;
    });
}

} // namespace payops
