#pragma once

#include "domain/callback/backlogdrainer.h"
#include "domain/callback/unmatchedcallbacks.h"
#include "domain/callback/upstreamdrain.h"
#include "job.h"
#include "sqltime.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

namespace payops::console {

// One callback waiting in pay_callback_log: recorded in RECORD_ONLY mode and not processed
// yet, UNMATCHED (it arrived before its order), or a gateway's without a final answer from
// the upstream (RECORDED or FORWARDING).
struct RecordedCallback
{
    qint64 id = 0;
    QByteArray payNo; // VARBINARY; shown as UTF-8
    qint64 orderId = 0;
    QByteArray orderNo; // the merchant's order number as sent: a gateway's team numbers its own
    qint64 amountFen = 0;
    QString currency;
    QString tradeStatus;
    QString instance; // which endpoint recorded it
    qint64 receivedMicros = 0;
    QByteArray rawBody;  // byte for byte as the platform sent it
    QString orderStatus; // unmatched ones: the order's status now, empty while it does not exist
    // The format it came in (payops, wechatpay, alipay) and the platform's headers.
    QString wireFormat;
    QByteArray rawHeaders;
    // A gateway's row: its status, how often it was forwarded, and the last forward's answer
    // (0: none) or why it got none.
    QString status;
    int forwards = 0;
    int upstreamStatus = 0;
    QString upstreamError;
};

// A gateway's rows without a final answer, which the upstream drain forwards; payops never
// pays them. Counted up to kCountLimit: FORWARDING rows come and go with live traffic, so the
// count is read at every refresh, and it stays one bounded index range however large the
// backlog.
struct GatewayBacklog
{
    static constexpr qint64 kCountLimit = 10'000;

    qint64 rows = 0;       // at most kCountLimit
    bool more = false;     // more than kCountLimit
    QStringList upstreams; // the gateways' upstreams, live gateways' first: where to drain to
    // An upstream a gateway gives one channel (--upstream-wechatpay): URL -> "wechatpay".
    QHash<QString, QString> upstreamChannels;
};

struct BacklogSummary
{
    qint64 recorded = 0;
    qint64 oldestMicros = 0;
    qint64 amountFen = 0;
    QString mode; // the switch: NORMAL | RECORD_ONLY
    qint64 switchVersion = 0;
    UnmatchedCount unmatched;
    GatewayBacklog gateway;
};

// The backlog's count, oldest and amount, kept between refreshes. Counting it reads every
// RECORDED row, and a backlog left undrained is as large as the record-only period made it;
// yet only two things change it: callbacks recorded while the switch is RECORD_ONLY, and a
// drain, which leaves an audit entry when it ends. A callback that read RECORD_ONLY holds the
// switch's row in share mode until it commits, so a flip back to NORMAL commits only after
// every such callback did: once the version has changed, the backlog cannot grow any more.
// So it is counted again while the switch is RECORD_ONLY, when the switch's version or the
// audit log has moved, and at least every kRecountSeconds (a drain still running); otherwise
// the last count stands, for one one-row read. One object per worker thread, one advance at
// a time.
class BacklogTally final
{
public:
    static constexpr qint64 kRecountSeconds = 60;

    struct Count
    {
        qint64 recorded = 0;
        qint64 oldestMicros = 0;
        qint64 amountFen = 0;
        bool recounted = false; // this advance counted the rows again
    };
    // Throws db::Error; a failed advance leaves the last count as it was.
    Count advance(const QSqlDatabase &db);

private:
    Count m_count;
    bool m_counted = false;
    qint64 m_countedAt = 0; // server seconds
    qint64 m_auditLastId = -1;
    qint64 m_switchVersion = -1;
};

// Keyset paging by id, oldest first: the order in which a drain processes them. Throws db::Error.
QList<RecordedCallback> loadRecordedPage(const QSqlDatabase &db, qint64 afterId, int limit);
QList<RecordedCallback> loadUnmatchedPage(const QSqlDatabase &db, qint64 afterId, int limit);
QList<RecordedCallback> loadGatewayPage(const QSqlDatabase &db, qint64 afterId, int limit);
// The summary with the backlog's figures from `tally`. Throws db::Error.
BacklogSummary loadBacklogSummary(const QSqlDatabase &db, BacklogTally &tally);
// The same as a worker's job; the tally lives on between refreshes, on that worker only.
Job<BacklogSummary> backlogSummaryJob(std::shared_ptr<BacklogTally> tally);

// A drain and the backlog it left.
struct DrainRun
{
    DrainResult result;
    BacklogSummary after; // the backlog when the drain ended
};

// The drain of `options` as a worker's standalone job: it opens its connections with the
// worker's DSN (options.connections of them for the recorded backlog) and stops between
// batches once `cancel` is set (options.cancel is pointed at it). The backlog after it is
// counted afresh: the job runs on a worker of its own, apart from the summary's tally.
StandaloneJob<DrainRun> drainJob(DrainOptions options, std::shared_ptr<std::atomic<bool>> cancel);

// A gateway's backlog forwarded to the upstream, and the backlog it left.
struct UpstreamDrainRun
{
    UpstreamDrainResult result;
    BacklogSummary after;
};

// drainToUpstream of `options` (which audits it) as a worker's standalone job: it opens its
// connections with the worker's DSN, one per options.concurrency, and stops between forwards
// once `cancel` is set (options.cancel is pointed at it). The backlog after it is counted
// afresh.
StandaloneJob<UpstreamDrainRun> upstreamDrainJob(UpstreamDrainOptions options,
                                                 std::shared_ptr<std::atomic<bool>> cancel);

} // namespace payops::console
