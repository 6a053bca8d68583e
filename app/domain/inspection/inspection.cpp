#include "inspection.h"

#include "db/connection.h"

#include <QJsonArray>

namespace payops {
namespace {

QJsonArray idArray(const QList<qint64> &ids)
{
    QJsonArray array;
    for (qint64 id : ids)
        array << id;
    return array;
}

// Everything but the duplicates: payops's own tables, with or without a mapping.
InspectionFindings readOwnFindings(const QSqlDatabase &db)
{
    InspectionFindings findings;
    findings.switchState = readSwitch(db);
    // idx_callback_status: the backlogs' own rows, not the callback history. A gateway's rows
    // wait for another drain (to the team's handler), so they are counted apart.
    QSqlQuery backlogs =
        db::exec(db, QStringLiteral("SELECT COALESCE(SUM(gateway = 0 AND status = 'RECORDED'), 0), "
                                    "COALESCE(SUM(gateway = 1), 0) FROM pay_callback_log "
                                    "WHERE status IN ('RECORDED', 'FORWARDING')"));
    backlogs.next();
    findings.backlog = backlogs.value(0).toLongLong();
    findings.gatewayBacklog = backlogs.value(1).toLongLong();
    findings.unmatched = countUnmatched(db);
    findings.doublePayments = countDoublePayments(db);
    return findings;
}

QJsonArray sideEffectArray(const mapping::MappedWatchFigures &figures, qint64 pointsPerYuan)
{
    QJsonArray array;
    for (const mapping::MappedSideEffectFigures &f : figures.sideEffects)
        array << QJsonObject{{QStringLiteral("name"), f.name},
                             {QStringLiteral("groups"), f.openGroups},
                             {QStringLiteral("extra_copies"), f.extraCopies},
                             {QStringLiteral("orders"), f.openOrders},
                             {QStringLiteral("unit"), mapping::unitName(f.unit)},
                             {QStringLiteral("value_fen"), f.valueFen(pointsPerYuan)},
                             {QStringLiteral("as_of"), f.refreshedAt}};
    return array;
}

} // namespace

InspectionFindings readInspection(const QSqlDatabase &db, const DuplicateWatchFigures &figures)
{
    InspectionFindings findings = readOwnFindings(db);
    findings.duplicates = figures.liveCount(openDuplicateOrders(db));
    return findings;
}

InspectionFindings readInspection(const QSqlDatabase &db, const mapping::Mapping &mapping,
                                  const mapping::MappedWatchFigures &figures)
{
    InspectionFindings findings = readOwnFindings(db);
    findings.mapped = figures;
    findings.mappedSampleOrders = mapping::openMappedOrders(db, mapping);
    return findings;
}

QJsonObject InspectionReport::toJson() const
{
    QJsonObject json = ownJson();
    if (!findings.mapped)
        return json;
    // The keys of today's duplicates where they apply, and one object per side effect.
    const mapping::MappedWatchFigures &mapped = *findings.mapped;
    json[QStringLiteral("duplicates")] =
        QJsonObject{{QStringLiteral("groups"), duplicateGroups()},
                    {QStringLiteral("extra_copies"), extraCopies()},
                    {QStringLiteral("orders"), mapped.openOrders},
                    {QStringLiteral("money_at_risk_fen"), moneyAtRiskFen()},
                    {QStringLiteral("points_per_yuan"), pointsPerYuan},
                    {QStringLiteral("sample_orders"), idArray(findings.mappedSampleOrders)},
                    {QStringLiteral("as_of"), mapped.refreshedAt},
                    {QStringLiteral("side_effects"), sideEffectArray(mapped, pointsPerYuan)}};
    return json;
}

QJsonObject InspectionReport::ownJson() const
{
    const LiveDuplicateCount &duplicates = findings.duplicates;
    const UnmatchedCount &unmatched = findings.unmatched;
    const DoublePayments &twice = findings.doublePayments;
    const qint64 couponFen = figures.couponFen();
    const qint64 pointFen = figures.pointFen(pointsPerYuan);
    return QJsonObject{
        {QStringLiteral("duplicates"),
         QJsonObject{{QStringLiteral("groups"), duplicateGroups()},
                     {QStringLiteral("extra_copies"), extraCopies()},
                     {QStringLiteral("orders"), figures.openOrders},
                     {QStringLiteral("money_at_risk_fen"), couponFen + pointFen},
                     {QStringLiteral("coupon_groups"), duplicates.couponGroups},
                     {QStringLiteral("coupon_extra_copies"), duplicates.couponExtraRows},
                     {QStringLiteral("coupon_fen"), couponFen},
                     {QStringLiteral("point_groups"), duplicates.pointGroups},
                     {QStringLiteral("point_extra_copies"), duplicates.pointExtraRows},
                     {QStringLiteral("point_fen"), pointFen},
                     {QStringLiteral("points_per_yuan"), pointsPerYuan},
                     {QStringLiteral("compensated_copies"), figures.superseded()},
                     {QStringLiteral("sample_orders"), idArray(duplicates.sampleOrderIds)},
                     {QStringLiteral("as_of"), figures.refreshedAt}}},
        {QStringLiteral("backlog"), findings.backlog},
        {QStringLiteral("gateway_backlog"), findings.gatewayBacklog},
        {QStringLiteral("unmatched"), unmatched.callbacks},
        {QStringLiteral("unmatched_with_order"), unmatched.withOrder},
        {QStringLiteral("unmatched_with_order_fen"), unmatched.withOrderFen},
        {QStringLiteral("double_payments"),
         QJsonObject{{QStringLiteral("orders"), twice.orders},
                     {QStringLiteral("callbacks"), twice.callbacks},
                     {QStringLiteral("refund_owed_fen"), twice.refundOwedFen},
                     {QStringLiteral("sample_orders"), idArray(twice.sampleOrderIds)}}},
        {QStringLiteral("clean"), findings.clean()},
        {QStringLiteral("switch"),
         QJsonObject{{QStringLiteral("mode"), callbackModeName(findings.switchState.mode)},
                     {QStringLiteral("version"), findings.switchState.version}}}};
}

} // namespace payops
