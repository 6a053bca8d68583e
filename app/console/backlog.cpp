#include "backlog.h"

#include "db/connection.h"
#include "db/dbworker.h"
#include "domain/callback/callbacklog.h"
#include "domain/callback/callbackswitch.h"
#include "domain/callback/instanceliveness.h"

#include <QSqlQuery>

namespace payops::console {

namespace {

// A page's columns, from pay_callback_log c and the order o.
const char *const kPageColumns =
    "c.id, c.pay_no, c.order_id, c.amount_fen, c.currency, c.trade_status, c.instance, "
    "CAST(c.created_at AS CHAR), c.raw_body, o.status, c.wire_format, c.raw_headers, c.status, "
    "c.forwards, c.upstream_status, c.upstream_error";

// `where` names one status: idx_callback_status (status, id) serves both the filter and the
// order; the order's status is one primary-key look-up per row.
QString pageSql(const QString &where, int limit)
{
    return QStringLiteral("SELECT %1, %2 FROM pay_callback_log c LEFT JOIN orders o ON o.id = "
                          "c.order_id WHERE %3 AND c.id > ? ORDER BY c.id LIMIT %4")
        .arg(QLatin1String(kPageColumns), orderNoColumn(QStringLiteral("c")), where,
             QString::number(limit));
}

QList<RecordedCallback> readPage(QSqlQuery query)
{
    QList<RecordedCallback> rows;
    while (query.next()) {
        RecordedCallback row;
        row.id = query.value(0).toLongLong();
        row.payNo = query.value(1).toByteArray();
        row.orderId = query.value(2).toLongLong();
        row.amountFen = query.value(3).toLongLong();
        row.currency = query.value(4).toString();
        row.tradeStatus = query.value(5).toString();
        row.instance = query.value(6).toString();
        row.receivedMicros = microsFromSql(query.value(7));
        row.rawBody = query.value(8).toByteArray();
        row.orderStatus = query.value(9).toString();
        row.wireFormat = query.value(10).toString();
        row.rawHeaders = query.value(11).toByteArray();
        row.status = query.value(12).toString();
        row.forwards = query.value(13).toInt();
        row.upstreamStatus = query.value(14).toInt();
        row.upstreamError = query.value(15).toString();
        row.orderNo = query.value(16).toByteArray();
        rows << row;
    }
    return rows;
}

GatewayBacklog loadGatewayBacklog(const QSqlDatabase &db)
{
    GatewayBacklog backlog;
    // The payments' rows and the later events' (callback_event), each read no further than
    // the limit.
    const qint64 counted =
        db::scalar(db, QStringLiteral("SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM "
                                      "pay_callback_log WHERE status IN ('RECORDED', "
                                      "'FORWARDING') AND gateway = 1 LIMIT %1) t) + (SELECT "
                                      "COUNT(*) FROM (SELECT 1 FROM callback_event WHERE status "
                                      "IN ('RECORDED', 'FORWARDING') LIMIT %1) e)")
                           .arg(GatewayBacklog::kCountLimit + 1))
            .toLongLong();
    backlog.rows = qMin(counted, GatewayBacklog::kCountLimit);
    backlog.more = counted > GatewayBacklog::kCountLimit;
    // Every gateway's, not only the live ones': when they are all down, a drain from here is
    // how the recorded callbacks still reach the team's handler.
    QSqlQuery upstreams = db::exec(
        db, QStringLiteral("SELECT upstream FROM callback_instance WHERE mode = 'gateway' AND "
                           "upstream <> '' GROUP BY upstream ORDER BY MAX(%1) DESC, "
                           "MAX(last_seen_at) DESC")
                .arg(instanceLiveSql()));
    // A gateway with a handler per channel shows them as "wechatpay URL; alipay URL; pay URL".
    while (upstreams.next()) {
        for (const QString &each :
             upstreams.value(0).toString().split(QStringLiteral("; "), Qt::SkipEmptyParts)) {
            const qsizetype space = each.indexOf(u' ');
            const QString url = space < 0 ? each : each.mid(space + 1);
            if (!backlog.upstreams.contains(url))
                backlog.upstreams << url;
            if (space > 0)
                backlog.upstreamChannels.insert(url, each.left(space));
        }
    }
    return backlog;
}

} // namespace

QList<RecordedCallback> loadRecordedPage(const QSqlDatabase &db, qint64 afterId, int limit)
{
    // Payments only: a gateway's rows wait in the same status, for the upstream drain.
    return readPage(db::exec(
        db, pageSql(QStringLiteral("c.status = 'RECORDED' AND c.gateway = 0"), limit), {afterId}));
}

QList<RecordedCallback> loadUnmatchedPage(const QSqlDatabase &db, qint64 afterId, int limit)
{
    return readPage(
        db::exec(db, pageSql(QStringLiteral("c.status = 'UNMATCHED'"), limit), {afterId}));
}

QList<RecordedCallback> loadGatewayPage(const QSqlDatabase &db, qint64 afterId, int limit)
{
    // Oldest first across both statuses: each branch reads its own index range in id order.
    return readPage(db::exec(db,
                             QStringLiteral("(%1) UNION ALL (%2) ORDER BY 1 LIMIT %3")
                                 .arg(pageSql(QStringLiteral("c.status = 'RECORDED' AND "
                                                             "c.gateway = 1"),
                                              limit),
                                      pageSql(QStringLiteral("c.status = 'FORWARDING' AND "
                                                             "c.gateway = 1"),
                                              limit),
                                      QString::number(limit)),
                             {afterId, afterId}));
}

BacklogTally::Count BacklogTally::advance(const QSqlDatabase &db)
{
    QSqlQuery marks =
        db::exec(db, QStringLiteral("SELECT s.mode, s.version, UNIX_TIMESTAMP(), COALESCE((SELECT "
                                    "last_id FROM ops_audit_head WHERE id = 1), 0) "
                                    "FROM callback_switch s WHERE s.id = 1"));
    const bool known = marks.next();
    const bool recordOnly = !known || marks.value(0).toString() != QLatin1String("NORMAL");
    const qint64 version = known ? marks.value(1).toLongLong() : -1;
    const qint64 now = known ? marks.value(2).toLongLong() : 0;
    const qint64 auditLastId = known ? marks.value(3).toLongLong() : -1;
    const bool recount = !m_counted || recordOnly || version != m_switchVersion ||
                         auditLastId != m_auditLastId || now - m_countedAt >= kRecountSeconds;
    if (!recount) {
        Count kept = m_count;
        kept.recounted = false;
        return kept;
    }
    QSqlQuery query =
        db::exec(db, QStringLiteral("SELECT COUNT(*), CAST(MIN(created_at) AS CHAR), "
                                    "COALESCE(SUM(amount_fen), 0) FROM pay_callback_log "
                                    "WHERE status = 'RECORDED' AND gateway = 0"));
    Count count;
    if (query.next()) {
        count.recorded = query.value(0).toLongLong();
        count.oldestMicros = microsFromSql(query.value(1));
        count.amountFen = query.value(2).toLongLong();
    }
    count.recounted = true;
    m_count = count;
    m_counted = true;
    m_countedAt = now;
    m_auditLastId = auditLastId;
    m_switchVersion = version;
    return count;
}

BacklogSummary loadBacklogSummary(const QSqlDatabase &db, BacklogTally &tally)
{
    BacklogSummary summary;
    const BacklogTally::Count count = tally.advance(db);
    summary.recorded = count.recorded;
    summary.oldestMicros = count.oldestMicros;
    summary.amountFen = count.amountFen;
    const SwitchState state = readSwitch(db);
    summary.mode = callbackModeName(state.mode);
    summary.switchVersion = state.version;
    summary.unmatched = countUnmatched(db);
    summary.gateway = loadGatewayBacklog(db);
    return summary;
}

Job<BacklogSummary> backlogSummaryJob(std::shared_ptr<BacklogTally> tally)
{
    return [tally = std::move(tally)](const QSqlDatabase &db) {
        return loadBacklogSummary(db, *tally);
    };
}

StandaloneJob<DrainRun> drainJob(DrainOptions options, std::shared_ptr<std::atomic<bool>> cancel)
{
    options.cancel = cancel.get();
    return [options = std::move(options),
            cancel = std::move(cancel)](const db::StandaloneContext &context) {
        DrainRun run;
        run.result = drainBacklog(context.dsn, options);
        db::Connection connection(context.dsn, QStringLiteral("drain-after"));
        BacklogTally counted;
        run.after = loadBacklogSummary(connection.database(), counted);
        return run;
    };
}

StandaloneJob<UpstreamDrainRun> upstreamDrainJob(UpstreamDrainOptions options,
                                                 std::shared_ptr<std::atomic<bool>> cancel)
{
    options.cancel = cancel.get();
    return [options = std::move(options),
            cancel = std::move(cancel)](const db::StandaloneContext &context) {
        UpstreamDrainRun run;
        run.result = drainToUpstream(context.dsn, options);
        db::Connection connection(context.dsn, QStringLiteral("drain-upstream-after"));
        BacklogTally counted;
        run.after = loadBacklogSummary(connection.database(), counted);
        return run;
    };
}

} // namespace payops::console
