#pragma once

#include <QList>
#include <QString>

namespace payops {

// The kinds of side effect whose duplicates payops counts: the kind column of the duplicate
// watch, and bits of a mask.
enum SideEffectKindBit { CouponBit = 1, PointsBit = 2 };

// One side-effect table as duplicates are defined on it, written once for every count: a group
// is (order_id, key column); a row counts when rowCondition holds (a points reversal is a
// correction, not a side effect) and is live while compensation has not superseded it.
// Conditions and columns are written for the alias `s`.
struct SideEffectTable
{
    SideEffectKindBit kindBit;
    QString name;
    QString keyColumn;
    QString liveCondition;
    QString rowCondition;
    QString unitColumn; // what one copy is worth: face_value_fen, or points
};

// user_coupon, then point_log.
const QList<SideEffectTable> &sideEffectTables();

} // namespace payops
