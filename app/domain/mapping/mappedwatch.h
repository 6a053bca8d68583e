#pragma once

#include "domain/money/duplicates/duplicatewatch.h"
#include "mapping.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace payops::mapping {

// Live duplicates on a team's own side-effect tables, as the mapped duplicate watch holds them
// (sql/migrations/0020 and 0022): per side effect, the groups (order, key...) among rows where
// `live` holds and that mapped_compensation does not name, with more than one such row. Kept
// up to date as the watch on payops's own tables is: a first pass, then only new and late
// rows, all side effects in one step (docs/decisions/0064-mapped-watch-one-step.md).
// See docs/mapping.md, "Duplicates on your tables".
struct MappedSideEffectFigures
{
    QString name;
    Unit unit = Unit::Fen;
    qint64 openGroups = 0;
    qint64 extraCopies = 0;
    qint64 openOrders = 0;
    // Extra copies by the value of one copy (fen, or points for Unit::Points).
    QList<QPair<qint64, qint64>> extraByValue;
    QString scanState; // NEW, SCANNING or DONE: this side effect's first pass
    qint64 scanStart = 0;
    qint64 scanCursor = 0;
    qint64 scanEnd = 0;
    QString refreshedAt;

    bool complete() const { return scanState == QLatin1String("DONE"); }
    // The extra copies' value in fen; points at pointsPerYuan, per copy as pointFen does.
    qint64 valueFen(qint64 pointsPerYuan) const;
};

struct MappedWatchFigures
{
    QList<MappedSideEffectFigures> sideEffects; // in the mapping's order
    qint64 openOrders = 0;                      // orders with an open group of any side effect
    QString refreshedAt; // UTC, the oldest of the side effects'; empty before the first refresh

    bool complete() const;
    int percentScanned() const; // 0-100, over every side effect's first pass
    qint64 groups() const;
    qint64 extraCopies() const;
    qint64 valueFen(qint64 pointsPerYuan) const;
    // The first passes' progress as the watch on payops's own tables reports it.
    DuplicateWatchFigures progress() const;
};

struct MappedWatchRefresh
{
    MappedWatchFigures figures;
    bool refreshed = false; // false: see `why`; figures are as the last refresh left them
    bool missing = false;   // migration 0020 not applied; see `why`
    QString why;
    bool cancelled = false;
    qint64 rowsRead = 0; // business and mapped_compensation rows this refresh read
};

// Advances the watch of every side effect of the mapping, under the same named lock as
// refreshDuplicateWatch(): late rows, rows past the watermarks, and as much of each first pass
// as the options allow (options.progress gets progress()). A side effect whose definition
// changed (table, columns, key, live, value) starts its first pass again. The business
// tables are only read (SELECT), in short statements. Throws db::Error.
MappedWatchRefresh refreshMappedWatch(const QSqlDatabase &db, const Mapping &mapping,
                                      const WatchRefreshOptions &options = {});

// The figures as stored, without refreshing. Throws db::Error.
MappedWatchFigures readMappedWatch(const QSqlDatabase &db, const Mapping &mapping);

// Up to `limit` orders with an open group of any side effect, lowest first. Throws db::Error.
QList<qint64> openMappedOrders(const QSqlDatabase &db, const Mapping &mapping, int limit = 10);

// The SHA-256 (hex) of what defines a side effect's duplicates: its table, id, order, key,
// live and value. The watch starts over when it changes.
QByteArray watchFingerprint(const Mapping &mapping, const SideEffectMapping &sideEffect);

} // namespace payops::mapping
