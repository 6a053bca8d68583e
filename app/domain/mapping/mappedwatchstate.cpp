#include "mappedwatchstate.h"

#include "db/connection.h"
#include "mappedwatch.h"

#include <QSqlQuery>

#include <algorithm>

namespace payops::mapping {
namespace {

// As the watch on payops's own tables (duplicatewatch.cpp): ids below the highest at the first
// refresh are read again.
constexpr qint64 kTrailingIds = 1000;

QString column(const QString &name)
{
    return QStringLiteral("s.") + db::quoteIdentifier(name);
}

qint64 scalarId(const QSqlDatabase &db, const QString &sql)
{
    const QVariant value = db::scalar(db, sql);
    return value.isNull() ? -1 : value.toLongLong();
}

WatchedEffect watched(const QSqlDatabase &db, const Mapping &mapping,
                      const SideEffectMapping &effect)
{
    WatchedEffect w;
    w.sideEffect = &effect;
    w.table = mapping.table(effect.table);
    w.businessName = businessTable(db, mapping, effect);
    w.id = column(effect.id);
    w.order = column(effect.order);
    QStringList keys;
    for (const QString &key : effect.key)
        keys << column(key);
    w.keys = keys.join(QStringLiteral(", "));
    w.groupKey = QStringLiteral("CONCAT_WS(CHAR(31 USING utf8mb4), %1)").arg(w.keys);
    // Yuan become fen in DECIMAL arithmetic, exactly; never through a floating-point value.
    w.value = effect.valueUnit == Unit::Yuan
                  ? QStringLiteral("CAST(CAST(%1 AS DECIMAL(20,2)) * 100 AS SIGNED)")
                        .arg(column(effect.value))
                  : QStringLiteral("CAST(%1 AS SIGNED)").arg(column(effect.value));
    w.nameLiteral = db::literal(db, effect.name);
    w.fingerprint = QString::fromLatin1(watchFingerprint(mapping, effect));
    return w;
}

// Each side effect's stored state; NEW where its row is missing or of another definition.
void readStates(const QSqlDatabase &db, QList<WatchedEffect> &effects)
{
    QStringList names;
    for (WatchedEffect &w : effects) {
        w.scanState = QStringLiteral("NEW");
        names << w.nameLiteral;
    }
    QSqlQuery query = db::exec(
        db, QStringLiteral("SELECT side_effect, fingerprint, scan_state, seen_id, "
                           "compensation_seen_id FROM mapped_watch_state WHERE side_effect IN (%1)")
                .arg(names.join(QLatin1Char(','))));
    while (query.next()) {
        const qsizetype at = indexOfEffect(effects, query.value(0).toString());
        if (at < 0 || query.value(1).toString() != effects.at(at).fingerprint)
            continue;
        WatchedEffect &w = effects[at];
        w.scanState = query.value(2).toString();
        w.seenId = query.value(3).toLongLong();
        w.compensationSeenId = query.value(4).toLongLong();
    }
}

// A side effect without a state row of its definition: what an old definition counted open
// leaves the count of orders open in any side effect, then its rows, and a fresh state row.
void adopt(const QSqlDatabase &db, const WatchedEffect &w)
{
    db::Transaction transaction(db);
    db::execDirect(
        db, QStringLiteral("UPDATE mapped_watch_summary SET open_orders = open_orders - (SELECT "
                           "COUNT(DISTINCT g.order_id) FROM mapped_watch_group g WHERE "
                           "g.side_effect = %1 AND g.is_open = 1 AND NOT EXISTS (SELECT 1 FROM "
                           "mapped_watch_group o WHERE o.order_id = g.order_id AND "
                           "o.side_effect <> %1 AND o.is_open = 1)) WHERE id = 1")
                .arg(w.nameLiteral));
    for (const char *table :
         {"mapped_watch_group", "mapped_watch_total", "mapped_watch_gap", "mapped_watch_state"})
        db::execDirect(db, QStringLiteral("DELETE FROM %1 WHERE side_effect = %2")
                               .arg(QLatin1String(table), w.nameLiteral));
    db::execDirect(db, QStringLiteral("INSERT INTO mapped_watch_state (side_effect, fingerprint) "
                                      "VALUES (%1, %2)")
                           .arg(w.nameLiteral, db::literal(db, w.fingerprint)));
    transaction.commit();
}

// The first refresh of a side effect: watermarks a little below the highest ids, and the range
// of orders its first pass walks.
void initialise(const QSqlDatabase &db, const WatchedEffect &w)
{
    const qint64 start =
        scalarId(db, QStringLiteral("SELECT MIN(%1) FROM %2 s").arg(w.order, w.table));
    const qint64 end =
        scalarId(db, QStringLiteral("SELECT MAX(%1) FROM %2 s").arg(w.order, w.table));
    db::execDirect(
        db, stateUpdate(w, QStringLiteral("seen_id = %1, compensation_seen_id = %2, "
                                          "scan_state = 'SCANNING', scan_start = %3, "
                                          "scan_cursor = %3, scan_end = %4, "
                                          "scan_started_at = UTC_TIMESTAMP(3)")
                               .arg(QString::number(std::max<qint64>(0, w.maxId - kTrailingIds)),
                                    QString::number(
                                        std::max<qint64>(0, w.maxCompensationId - kTrailingIds)),
                                    QString::number(std::max<qint64>(start, 0)),
                                    QString::number(std::max<qint64>(end, 0)))));
}

} // namespace

qsizetype indexOfEffect(const QList<WatchedEffect> &effects, const QString &name)
{
    for (qsizetype i = 0; i < effects.size(); ++i)
        if (effects.at(i).sideEffect->name.compare(name, Qt::CaseInsensitive) == 0)
            return i;
    return -1;
}

QList<WatchedEffect> watchedEffects(const QSqlDatabase &db, const Mapping &mapping)
{
    QList<WatchedEffect> effects;
    for (const SideEffectMapping &effect : mapping.sideEffects)
        effects << watched(db, mapping, effect);
    if (effects.isEmpty())
        return effects;
    // One row: the highest compensation id, then per side effect whether compensation wrote
    // to its table (the unique key on (business_table, target_id)) and its highest id.
    QStringList columns{QStringLiteral("(SELECT MAX(id) FROM mapped_compensation)")};
    for (const WatchedEffect &w : std::as_const(effects))
        columns << QStringLiteral("EXISTS (SELECT 1 FROM mapped_compensation WHERE "
                                  "business_table = %1)")
                       .arg(db::literal(db, w.businessName))
                << QStringLiteral("(SELECT MAX(%1) FROM %2 s)").arg(w.id, w.table);
    QSqlQuery query = db::exec(db, QStringLiteral("SELECT ") + columns.join(QStringLiteral(", ")));
    query.next();
    const auto id = [&query](int at) {
        return query.value(at).isNull() ? qint64(-1) : query.value(at).toLongLong();
    };
    for (int i = 0; i < effects.size(); ++i) {
        effects[i].maxCompensationId = id(0);
        effects[i].compensated = query.value(1 + 2 * i).toBool();
        effects[i].maxId = id(2 + 2 * i);
    }
    readStates(db, effects);
    return effects;
}

void prepareWatchedEffects(const QSqlDatabase &db, QList<WatchedEffect> &effects)
{
    bool changed = false;
    for (const WatchedEffect &w : std::as_const(effects)) {
        if (w.scanState != QLatin1String("NEW"))
            continue;
        // A state row of this definition that is still NEW needs no second adoption.
        if (!db::exec(db, QStringLiteral("SELECT 1 FROM mapped_watch_state WHERE side_effect = "
                                         "%1 AND fingerprint = %2")
                              .arg(w.nameLiteral, db::literal(db, w.fingerprint)))
                 .next())
            adopt(db, w);
        initialise(db, w);
        changed = true;
    }
    if (changed)
        readStates(db, effects);
}

void learnCompensatedTables(const QSqlDatabase &db, QList<WatchedEffect> &effects)
{
    QStringList tables;
    for (const WatchedEffect &w : std::as_const(effects))
        if (!w.compensated)
            tables << db::literal(db, w.businessName);
    if (tables.isEmpty())
        return;
    QSqlQuery query =
        db::exec(db, QStringLiteral("SELECT DISTINCT business_table FROM "
                                    "mapped_compensation WHERE business_table IN (%1)")
                         .arg(tables.join(QLatin1Char(','))));
    while (query.next())
        for (WatchedEffect &w : effects)
            if (w.businessName == query.value(0).toString())
                w.compensated = true;
}

QString liveRows(const QSqlDatabase &db, const WatchedEffect &w)
{
    // A reversed points row keeps `delta > 0`, so mapped_compensation decides.
    if (!w.compensated)
        return QStringLiteral("(%1)").arg(w.sideEffect->live);
    return QStringLiteral("(%1) AND NOT EXISTS (SELECT 1 FROM mapped_compensation c WHERE "
                          "c.business_table = %2 AND c.target_id = %3)")
        .arg(w.sideEffect->live, db::literal(db, w.businessName), w.id);
}

QString stateUpdate(const WatchedEffect &w, const QString &set)
{
    return QStringLiteral("UPDATE mapped_watch_state SET %1 WHERE side_effect = %2")
        .arg(set, w.nameLiteral);
}

} // namespace payops::mapping
