#include "compensationrequest.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"
#include "domain/money/auditlog.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct CompensationRequests
{
    Q_DECLARE_TR_FUNCTIONS(payops::CompensationRequests)
};

// payops_user_name() of migration 0014 written out: listing the requests must not need EXECUTE
// on it, so that an account with SELECT alone (on a replica) reads the page.
QString userName(const QString &account)
{
    return QStringLiteral(
               "LEFT(%1, CHAR_LENGTH(%1) - CHAR_LENGTH(SUBSTRING_INDEX(%1, '@', -1)) - 1)")
        .arg(account);
}

const QString &requestColumns()
{
    static const QString columns =
        QStringLiteral("id, status, scope, coupons, write_offs, points_rows, amount_fen, reason, "
                       "ticket, requested_by, requested_at, "
                       "decided_by, decided_at, requested_account, decided_account, "
                       "%1 = %2, mapping_sha256")
            .arg(userName(QStringLiteral("requested_by")), userName(QStringLiteral("USER()")));
    return columns;
}

QJsonObject scopeToJson(const CompensationScope &scope)
{
    QJsonArray orders;
    for (qint64 id : scope.orders)
        orders << id;
    QJsonArray groups;
    for (const CompensationGroup &group : scope.groups)
        groups << QJsonObject{{QStringLiteral("order"), group.orderId},
                              {QStringLiteral("group"), group.key}};
    return QJsonObject{{QStringLiteral("everything"), scope.everything},
                       {QStringLiteral("orders"), orders},
                       {QStringLiteral("groups"), groups}};
}

// Requests made before single groups could be asked for hold a plain array of order ids,
// empty for everything.
CompensationScope scopeFromJson(const QByteArray &json)
{
    const QJsonDocument document = QJsonDocument::fromJson(json);
    CompensationScope scope;
    scope.everything = document.isArray()
                           ? document.array().isEmpty()
                           : document.object().value(QStringLiteral("everything")).toBool();
    const QJsonArray orders = document.isArray()
                                  ? document.array()
                                  : document.object().value(QStringLiteral("orders")).toArray();
    for (const QJsonValue &id : orders)
        scope.orders << id.toInteger();
    for (const QJsonValue &group : document.object().value(QStringLiteral("groups")).toArray())
        scope.groups << CompensationGroup{group[QStringLiteral("order")].toInteger(),
                                          group[QStringLiteral("group")].toString()};
    return scope;
}

CompensationRequest requestFrom(const QSqlQuery &row)
{
    CompensationRequest request;
    request.id = row.value(0).toLongLong();
    request.status = row.value(1).toString();
    request.scope = scopeFromJson(row.value(2).toByteArray());
    request.coupons = row.value(3).toInt();
    request.writeOffs = row.value(4).toInt();
    request.pointsRows = row.value(5).toInt();
    request.amountFen = row.value(6).toLongLong();
    request.reason = row.value(7).toString();
    request.ticket = row.value(8).toString();
    request.requestedBy = row.value(9).toString();
    request.requestedAt = db::utcDateTime(row.value(10));
    request.decidedBy = row.value(11).toString();
    request.decidedAt = db::utcDateTime(row.value(12));
    request.requestedAccount = row.value(13).toString();
    request.decidedAccount = row.value(14).toString();
    request.byThisUser = row.value(15).toBool();
    if (!row.value(16).isNull()) {
        const QJsonObject mapped = QJsonDocument::fromJson(row.value(2).toByteArray())
                                       .object()
                                       .value(QStringLiteral("mapping"))
                                       .toObject();
        MappedRequest m{row.value(16).toString(), {}, 0};
        for (const QJsonValue &sideEffect : mapped.value(QStringLiteral("side_effects")).toArray())
            m.sideEffects << sideEffect.toString();
        m.fenPerHundredPoints = mapped.value(QStringLiteral("fen_per_100_points")).toInteger();
        request.mapped = m;
    }
    return request;
}

QString target(qint64 id)
{
    return QStringLiteral("compensation_request:%1").arg(id);
}

QString statusJson(const QString &status)
{
    return QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("status"), status}})
                                 .toJson(QJsonDocument::Compact));
}

// A decision and its audit entry commit together or not at all. Conditional on `from`: a run
// again after another node decided the request meanwhile finds it decided.
bool decide(const QSqlDatabase &db, qint64 id, const QString &from, const QString &to,
            const QString &action, const CompensationRequest &request)
{
    return runAudited([&] {
        db::Transaction transaction(db);
        // decided_account is the account the server authenticated, as this statement sees it
        // (the trigger of migration 0014 checks it against the connection's user name).
        const QSqlQuery update = db::exec(
            db,
            QStringLiteral(
                "UPDATE compensation_request SET status = ?, decided_account = CURRENT_USER() "
                "WHERE id = ? AND status = ?"),
            {to, id, from});
        if (update.numRowsAffected() != 1)
            return false;
        appendAudit(db, action, target(id), request.reason, request.ticket, statusJson(from),
                    statusJson(to));
        transaction.commit();
        return true;
    });
}

} // namespace

namespace {

// The batches of `table` (compensation or mapped_compensation): they share these columns.
QList<CompensationBatch> batchesOf(const QSqlDatabase &db, const QString &table,
                                   const QString &amountColumn, int limit)
{
    QSqlQuery rows = db::exec(
        db, QStringLiteral("SELECT batch_id, MIN(created_at), MIN(created_by), MIN(reason), "
                           "MIN(ticket), COUNT(*), SUM(%2) "
                           "FROM %1 GROUP BY batch_id ORDER BY MIN(id) DESC LIMIT %3")
                .arg(table, amountColumn, QString::number(limit)));
    QList<CompensationBatch> batches;
    while (rows.next())
        batches << CompensationBatch{rows.value(0).toString(),  db::utcDateTime(rows.value(1)),
                                     rows.value(2).toString(),  rows.value(3).toString(),
                                     rows.value(4).toString(),  rows.value(5).toInt(),
                                     rows.value(6).toLongLong()};
    return batches;
}

} // namespace

QList<CompensationBatch> loadCompensationBatches(const QSqlDatabase &db, int limit)
{
    return batchesOf(db, QStringLiteral("compensation"), QStringLiteral("amount_fen"), limit);
}

QList<CompensationBatch> loadMappedCompensationBatches(const QSqlDatabase &db, int limit)
{
    return batchesOf(db, QStringLiteral("mapped_compensation"), QStringLiteral("value_fen"), limit);
}

qint64 fourEyesThresholdFen(const QSqlDatabase &db)
{
    return db::scalar(db,
                      QStringLiteral(
                          "SELECT value FROM payops_meta WHERE name = 'four_eyes_threshold_fen'"))
        .toLongLong();
}

qint64 soloCompensatedFen(const QSqlDatabase &db)
{
    return db::scalar(db, QStringLiteral("SELECT payops_solo_compensated_fen()")).toLongLong();
}

namespace {

// A request and its audit entry, in one transaction. `mapped`: the request is for the team's
// own tables, its mapping kept in the scope and its SHA-256 in a column of its own.
qint64 fileRequest(const QSqlDatabase &db, const CompensationScope &scope,
                   const MappedRequest *mapped, int coupons, int writeOffs, int pointsRows,
                   qint64 amountFen, const QString &reason, const QString &ticket)
{
    if (reason.trimmed().isEmpty() || ticket.trimmed().isEmpty())
        throw db::Error(
            CompensationRequests::tr("a compensation request needs a reason and a ticket"));
    QJsonObject scopeJson = scopeToJson(scope);
    if (mapped)
        scopeJson.insert(
            QStringLiteral("mapping"),
            QJsonObject{
                {QStringLiteral("sha256"), mapped->sha256},
                {QStringLiteral("side_effects"), QJsonArray::fromStringList(mapped->sideEffects)},
                {QStringLiteral("fen_per_100_points"), mapped->fenPerHundredPoints}});
    return runAudited([&] {
        db::Transaction transaction(db);
        const QSqlQuery insert = db::exec(
            db,
            QStringLiteral("INSERT INTO compensation_request (scope, mapping_sha256, coupons, "
                           "write_offs, points_rows, amount_fen, reason, ticket, "
                           "requested_account) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CURRENT_USER())"),
            {QString::fromUtf8(QJsonDocument(scopeJson).toJson(QJsonDocument::Compact)),
             mapped ? QVariant(mapped->sha256) : QVariant(), coupons, writeOffs, pointsRows,
             amountFen, reason.trimmed().left(255), ticket.trimmed().left(64)});
        const qint64 id = insert.lastInsertId().toLongLong();
        appendAudit(
            db, QStringLiteral("compensation.request"), target(id), reason.trimmed(),
            ticket.trimmed(), {},
            QString::fromUtf8(
                QJsonDocument(QJsonObject{{QStringLiteral("status"), QStringLiteral("PENDING")},
                                          {QStringLiteral("amount_fen"), amountFen},
                                          {QStringLiteral("scope"), scopeJson}})
                    .toJson(QJsonDocument::Compact)));
        transaction.commit();
        return id;
    });
}

} // namespace

qint64 requestCompensation(const QSqlDatabase &db, const CompensationPlan &plan,
                           const CompensationScope &scope, const QString &reason,
                           const QString &ticket)
{
    return fileRequest(db, scope, nullptr, plan.couponsFrozen,
                       plan.couponWriteOffs + plan.couponReceivables, plan.pointsReversed,
                       plan.moneyFen, reason, ticket);
}

qint64 requestMappedCompensation(const QSqlDatabase &db, const MappedRequest &mapped,
                                 const CompensationScope &scope, int frozen, int reversed,
                                 qint64 amountFen, const QString &reason, const QString &ticket)
{
    return fileRequest(db, scope, &mapped, frozen, 0, reversed, amountFen, reason, ticket);
}

QList<CompensationRequest> loadCompensationRequests(const QSqlDatabase &db, int limit)
{
    QSqlQuery rows =
        db::exec(db, QStringLiteral("SELECT %1 FROM compensation_request ORDER BY id DESC LIMIT %2")
                         .arg(requestColumns(), QString::number(limit)));
    QList<CompensationRequest> requests;
    while (rows.next())
        requests << requestFrom(rows);
    return requests;
}

std::optional<CompensationRequest> loadCompensationRequest(const QSqlDatabase &db, qint64 id)
{
    QSqlQuery row = db::exec(
        db,
        QStringLiteral("SELECT %1 FROM compensation_request WHERE id = ?").arg(requestColumns()),
        {id});
    if (!row.next())
        return std::nullopt;
    return requestFrom(row);
}

bool planFitsRequest(qint64 plannedFen, const CompensationRequest &request)
{
    return request.status == QLatin1String("APPROVED") ? plannedFen <= request.amountFen
                                                       : plannedFen == request.amountFen;
}

QString refusalToApprove(const std::optional<CompensationRequest> &request, qint64 id)
{
    if (!request)
        return CompensationRequests::tr("there is no compensation request %1").arg(id);
    if (request->status != QLatin1String("PENDING") && request->status != QLatin1String("APPROVED"))
        return CompensationRequests::tr("request %1 is %2, not pending")
            .arg(QString::number(id), request->status);
    return {};
}

QString approvePlanned(const QSqlDatabase &db, const CompensationRequest &request,
                       qint64 plannedFen)
{
    if (!planFitsRequest(plannedFen, request))
        return (plannedFen > request.amountFen
                    ? CompensationRequests::tr(
                          "the duplicates grew since request %1 was made (%2 fen now, %3 fen "
                          "asked); make a new request")
                    : CompensationRequests::tr(
                          "the duplicates shrank since request %1 was made (%2 fen now, %3 fen "
                          "asked); make a new request"))
            .arg(QString::number(request.id), QString::number(plannedFen),
                 QString::number(request.amountFen));
    if (request.status == QLatin1String("APPROVED"))
        return {};
    // Conditional on PENDING: of two operators approving at once, one wins and the other is told.
    if (!decide(db, request.id, QStringLiteral("PENDING"), QStringLiteral("APPROVED"),
                QStringLiteral("compensation.approve"), request))
        return CompensationRequests::tr("request %1 was decided by someone else meanwhile")
            .arg(request.id);
    return {};
}

Approval approveCompensationRequest(const QSqlDatabase &db, qint64 id,
                                    const CompensationSettings &settings)
{
    Approval approval;
    const auto request = loadCompensationRequest(db, id);
    approval.refusal = refusalToApprove(request, id);
    if (!approval.refusal.isEmpty())
        return approval;
    approval.request = *request;
    if (request->mapped) {
        approval.refusal =
            CompensationRequests::tr("request %1 is for the team's own tables, planned through a "
                                     "mapping file: approve it with that mapping (--mapping)")
                .arg(id);
        return approval;
    }
    approval.plan = planCompensation(db, request->scope, settings);
    approval.plan.requestId = id;
    approval.refusal = approvePlanned(db, *request, approval.plan.moneyFen);
    return approval;
}

bool rejectCompensationRequest(const QSqlDatabase &db, qint64 id)
{
    const auto request = loadCompensationRequest(db, id);
    return request && decide(db, id, QStringLiteral("PENDING"), QStringLiteral("REJECTED"),
                             QStringLiteral("compensation.reject"), *request);
}

void markRequestExecuted(const QSqlDatabase &db, qint64 id)
{
    db::exec(db,
             QStringLiteral("UPDATE compensation_request SET status = 'EXECUTED' WHERE id = ? AND "
                            "status = 'APPROVED'"),
             {id});
}

} // namespace payops
