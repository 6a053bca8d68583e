#pragma once

#include "mapping.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

// The mapped duplicate watch's side effects as one refresh sees them (internal to
// mappedwatch*.cpp): each side effect's statements written once, and its stored state.

namespace payops::mapping {

// One side effect's names as SQL, every name quoted, conditions as the file has them.
struct WatchedEffect
{
    const SideEffectMapping *sideEffect = nullptr;
    QString table;        // `db`.`table`
    QString businessName; // database.table, as mapped_compensation names it
    QString id;           // s.`id`
    QString order;        // s.`order`
    QString keys;         // s.`k1`, s.`k2`
    QString groupKey;     // the key columns joined by CHAR(31)
    QString value;        // one copy's value: fen, or points
    QString nameLiteral;  // the side effect's name as an SQL literal
    QString fingerprint;  // watchFingerprint(), as stored
    // Whether compensation has recorded any row of this table yet. Until it has, a row's
    // `live` alone decides, and a recount reads no mapped_compensation at all: on a table
    // payops never compensated, the watch reads what payops's own watch reads. A compensation
    // committed after this was read asks for its orders' recount through its own rows.
    bool compensated = false;
    // The highest ids now in its table and in mapped_compensation (-1: none): a source whose
    // watermark is already there has nothing new to read.
    qint64 maxId = -1;
    qint64 maxCompensationId = -1;

    // As stored in mapped_watch_state (a side effect without a row, or of another definition,
    // reads as NEW).
    QString scanState;
    qint64 seenId = 0;
    qint64 compensationSeenId = 0;
};

// Every side effect of the mapping, with its state: two statements whatever their number.
QList<WatchedEffect> watchedEffects(const QSqlDatabase &db, const Mapping &mapping);

// Makes each side effect's state row match its definition (a new side effect gets one, a
// changed definition loses what was counted under the old one) and gives a NEW one its
// watermarks and the range of orders its first pass walks. Reads the states again when it
// changed any.
void prepareWatchedEffects(const QSqlDatabase &db, QList<WatchedEffect> &effects);

// Asks again, for the side effects not compensated when they were read, whether compensation
// has recorded a row of their table since: a table's first compensation can commit while a
// refresh runs, and its rows then ask for a recount that must read mapped_compensation.
void learnCompensatedTables(const QSqlDatabase &db, QList<WatchedEffect> &effects);

// A row counts while its `live` holds and compensation has not recorded it.
QString liveRows(const QSqlDatabase &db, const WatchedEffect &w);

// "UPDATE mapped_watch_state SET <set> WHERE side_effect = <its name>".
QString stateUpdate(const WatchedEffect &w, const QString &set);

// The index of `name` among the side effects, compared without case as the column does; -1.
qsizetype indexOfEffect(const QList<WatchedEffect> &effects, const QString &name);

} // namespace payops::mapping
