#include "mappedwatchfeed.h"

#include "db/connection.h"
#include "domain/money/duplicates/watchgaps.h"
#include "mappedwatchrecount.h"

#include <QSqlQuery>

namespace payops::mapping {
namespace {

enum Source { Table = 1, Compensation = 2 }; // mapped_watch_gap.source

QString gapSource(const QString &name, int source)
{
    return QStringLiteral("%1:%2").arg(QString::number(source), name.toCaseFolded());
}

// One table the side effect's watch reads past a watermark, as the shared code reads it:
// `columns` are each row's id, its order and whether it asks for a recount of the side effect
// (its bit in WatchOrders).
struct SourceSql
{
    Source source;
    QString name;      // for the log
    QString table;     // as SQL
    QString idColumn;  // as SQL
    QString columns;   // id, order, asks
    QString watermark; // its column in mapped_watch_state
};

WatchSource watchSource(const QSqlDatabase &db, const WatchedEffect &w, const SourceSql &sql,
                        int bit)
{
    return WatchSource{
        sql.name,
        sql.idColumn,
        QStringLiteral("mapped_watch_gap"),
        QStringLiteral("side_effect = %1 AND source = %2")
            .arg(w.nameLiteral, QString::number(sql.source)),
        QStringLiteral("side_effect, source"),
        QStringLiteral("%1, %2").arg(w.nameLiteral, QString::number(sql.source)),
        stateUpdate(w, sql.watermark + QStringLiteral(" = %1")),
        [&db, sql, bit](const QString &where) {
            QList<WatchSourceRow> rows;
            QSqlQuery query = db::exec(
                db,
                QStringLiteral("SELECT %1 FROM %2 WHERE %3").arg(sql.columns, sql.table, where));
            while (query.next())
                rows << WatchSourceRow{query.value(0).toLongLong(), query.value(1).toLongLong(),
                                       query.value(2).toBool() ? bit : 0};
            return rows;
        }};
}

// The side effect's own table, and mapped_compensation past this side effect's own mark:
// every compensation row is read (its ids are one sequence, so gaps are real ones), and only
// those on this side effect's table ask for a recount.
QList<WatchSource> sourcesOf(const QSqlDatabase &db, const WatchedEffect &w, int bit)
{
    const SourceSql table{Table,
                          w.businessName,
                          w.table + QStringLiteral(" s"),
                          w.id,
                          QStringLiteral("%1, %2, 1").arg(w.id, w.order),
                          QStringLiteral("seen_id")};
    const SourceSql compensation{
        Compensation,
        QStringLiteral("mapped_compensation"),
        QStringLiteral("mapped_compensation"),
        QStringLiteral("id"),
        QStringLiteral("id, order_id, business_table = %1").arg(db::literal(db, w.businessName)),
        QStringLiteral("compensation_seen_id")};
    return {watchSource(db, w, table, bit), watchSource(db, w, compensation, bit)};
}

struct Fed
{
    WatchSource source;
    WatchSourceState state;
    bool pending = false; // rows past the watermark may be waiting
};

} // namespace

bool feedMappedWatch(const QSqlDatabase &db, const QList<WatchedEffect> &effects,
                     const QVariant &settled, const WatchRefreshOptions &options, qint64 &rowsRead)
{
    Q_ASSERT(effects.size() <= kEffectsPerRecount);
    if (effects.isEmpty())
        return true;
    QStringList names;
    for (const WatchedEffect &w : effects)
        names << w.nameLiteral;
    const QHash<QString, QList<WatchGap>> gaps =
        readWatchGapsOf(db, QStringLiteral("mapped_watch_gap"),
                        QStringLiteral("side_effect IN (%1)").arg(names.join(QLatin1Char(','))),
                        QStringLiteral("CONCAT(source, ':', LOWER(side_effect))"), settled);
    QList<Fed> fed;
    for (int i = 0; i < effects.size(); ++i) {
        const WatchedEffect &w = effects.at(i);
        const QString &name = w.sideEffect->name;
        const QList<WatchSource> sources = sourcesOf(db, w, 1 << i);
        fed << Fed{sources.at(0),
                   {w.seenId, gaps.value(gapSource(name, Table))},
                   w.maxId > w.seenId}
            << Fed{sources.at(1),
                   {w.compensationSeenId, gaps.value(gapSource(name, Compensation))},
                   w.maxCompensationId > w.compensationSeenId};
    }
    QList<WatchedEffect> current = effects;
    for (bool first = true;; first = false) {
        if (options.cancel && options.cancel->load())
            return false;
        WatchOrders orders;
        QStringList updates;
        bool more = false;
        for (Fed &f : fed) {
            if (first)
                readLateWatchRows(f.source, f.state, orders, updates, rowsRead);
            if (f.pending)
                f.pending = readNewWatchRows(f.source, f.state, options.batchRows, orders, updates,
                                             rowsRead);
            more |= f.pending;
        }
        if (!orders.isEmpty() || !updates.isEmpty()) {
            learnCompensatedTables(db, current);
            recountMappedOrders(db, current, orders, updates);
        }
        if (!more)
            return true;
    }
}

} // namespace payops::mapping
