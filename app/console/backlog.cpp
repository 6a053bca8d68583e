#include "backlog.h"

#include "db/connection.h"
#include "ops/callbackswitch.h"

#include <QSqlQuery>

namespace payops::console {

QList<RecordedCallback> loadRecordedPage(const QSqlDatabase &db, qint64 afterId, int limit)
{
    // idx_callback_status (status, id) serves both the filter and the order.
    QSqlQuery query = db::exec(db, QStringLiteral(
        "SELECT id, pay_no, order_id, amount_fen, currency, trade_status, instance, CAST(created_at AS CHAR), raw_body "
        "FROM pay_callback_log WHERE status = 'RECORDED' AND id > ? ORDER BY id LIMIT %1").arg(limit), {afterId});
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
        rows << row;
    }
    return rows;
}

BacklogSummary loadBacklogSummary(const QSqlDatabase &db)
{
    BacklogSummary summary;
    QSqlQuery query = db::exec(db, QStringLiteral(
        "SELECT COUNT(*), CAST(MIN(created_at) AS CHAR), COALESCE(SUM(amount_fen), 0) FROM pay_callback_log "
        "WHERE status = 'RECORDED'"));
    if (query.next()) {
        summary.recorded = query.value(0).toLongLong();
        summary.oldestMicros = microsFromSql(query.value(1));
        summary.amountFen = query.value(2).toLongLong();
    }
    const SwitchState state = readSwitch(db);
    summary.mode = callbackModeName(state.mode);
    summary.switchVersion = state.version;
    return summary;
}

} // namespace payops::console
