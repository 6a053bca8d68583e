#include "sideeffecttables.h"

namespace payops {

const QList<SideEffectTable> &sideEffectTables()
{
    static const QList<SideEffectTable> tables{
        {CouponBit, QStringLiteral("user_coupon"), QStringLiteral("coupon_template_id"),
         QStringLiteral("s.superseded_by IS NULL"), QStringLiteral("1 = 1"),
         QStringLiteral("face_value_fen")},
        {PointsBit, QStringLiteral("point_log"), QStringLiteral("point_type"),
         QStringLiteral("s.superseded_by IS NULL"), QStringLiteral("s.reverses_id IS NULL"),
         QStringLiteral("points")},
    };
    return tables;
}

} // namespace payops
