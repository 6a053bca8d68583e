#include "reconciliation.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/statement/statementimport.h"

#include <QCoreApplication>
#include <QSqlQuery>
#include <QStringList>

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>

namespace payops {
namespace {

constexpr const char *kKindNames[kFindingKinds] = {"missing_ours",       "missing_platform",
                                                   "amount_mismatch",    "status_mismatch",
                                                   "duplicate_platform", "double_payment"};

// A payment with us: the callback's order is paid by the callback's pay_no.
constexpr auto kOurs = "(o.pay_no = p.pay_no AND o.status IN ('PAID', 'REFUNDING', 'REFUNDED'))";

// The SQL below names our side as %P (payments), %O (orders), %L (the payments' column that
// names their order), %F (a stored finding's order) and %N (a payment's order number); this puts
// the side's in, in one pass, so that a %O inside a mapped name is never taken for a place.
QString onSide(const QString &sql, const PaymentSide &side)
{
    const QHash<QChar, QString> places{{u'P', side.payments},
                                       {u'O', side.orders},
                                       {u'L', side.orderLink},
                                       {u'F', side.findingOrder},
                                       {u'N', side.orderNo}};
    QString filled;
    for (qsizetype i = 0; i < sql.size(); ++i) {
        const QChar next = i + 1 < sql.size() ? sql[i + 1] : QChar();
        if (sql[i] == u'%' && places.contains(next)) {
            filled += places.value(next);
            ++i;
        } else {
            filled += sql[i];
        }
    }
    return filled;
}

constexpr int kResultBatch = 1000;

std::optional<qint64> optionalNumber(const QVariant &value)
{
    if (value.isNull())
        return std::nullopt;
    return value.toLongLong();
}

std::optional<qint64> orderNumber(const QVariant &ours, const QVariant &platforms)
{
    if (!ours.isNull())
        return ours.toLongLong();
    if (platforms.toLongLong() > 0)
        return platforms.toLongLong();
    return std::nullopt;
}

// A finding's order: ours, else the platform's order id, else the platform's order number as
// its line gives it (`lineOrderNo`, NULL when the line has none).
void setOrder(ReconciliationFinding &finding, const QVariant &ours, const QVariant &platforms,
              const QVariant &lineOrderNo)
{
    finding.orderId = orderNumber(ours, platforms);
    finding.orderNo =
        finding.orderId ? QByteArray::number(*finding.orderId) : lineOrderNo.toByteArray();
}

// Qt's MariaDB driver keeps the whole result of a query in memory: every read that can be
// large is a series of pages, each resumed from where the last ended (keyset, never OFFSET).
constexpr int kPageRows = 5000;

// Stores findings as they come, kResultBatch rows per INSERT, and counts them by kind.
class FindingWriter
{
public:
    FindingWriter(const QSqlDatabase &db, qint64 runId)
        : m_db(db)
        , m_runId(runId)
    {
    }

    void add(const ReconciliationFinding &finding)
    {
        const auto nullable = [](const std::optional<qint64> &value) {
            return value ? QVariant(*value) : QVariant();
        };
        // The order number is stored only where it says more than the order id.
        const QVariant orderNo =
            finding.orderId || finding.orderNo.isEmpty() ? QVariant() : QVariant(finding.orderNo);
        m_rows.append(QVariantList{m_runId, findingKindName(finding.kind), finding.payNo,
                                   nullable(finding.orderId), nullable(finding.platformAmountFen),
                                   nullable(finding.ourAmountFen), nullable(finding.lineNo),
                                   orderNo});
        ++m_counts[static_cast<int>(finding.kind)];
        if (m_rows.size() == kResultBatch)
            flush();
    }

    void flush()
    {
        if (m_rows.isEmpty())
            return;
        db::exec(m_db, QStringLiteral(
                           "INSERT INTO reconciliation_result (run_id, kind, pay_no, order_id, "
                           "platform_amount_fen, our_amount_fen, line_no, out_trade_no) VALUES ") +
                           db::valueRows(m_db, m_rows));
        m_rows.clear();
    }

    const std::array<qint64, kFindingKinds> &counts() const { return m_counts; }

private:
    QSqlDatabase m_db;
    qint64 m_runId;
    QList<QVariantList> m_rows;
    std::array<qint64, kFindingKinds> m_counts{};
};

// Whether another line of the same pay_no (as `l`) matches `condition` (on `e`), read from the
// (statement_id, pay_no, status) index.
QString otherLine(const QString &condition)
{
    return QStringLiteral("EXISTS (SELECT 1 FROM platform_statement_line e FORCE INDEX "
                          "(idx_statement_line_pay_no) "
                          "WHERE e.statement_id = l.statement_id AND e.pay_no = l.pay_no AND %1)")
        .arg(condition);
}

// The lines that make a finding, in pages by line number; every line except the plain case,
// a SUCCESS line of a PAID payment with us for the same amount, is looked at. Each line is
// joined to its callback by uk_pay_no and to the order by its primary key: a plain SELECT
// inside the run's transaction, a consistent read that locks no row of pay_callback_log or
// orders. A pay_no's lines after the first make no finding of their own (that is
// duplicate_platform's), which the flags below decide from the pay_no index, so that a pay_no
// listed 500,000 times is one missing_ours, not 500,000:
// - first_payment: a SUCCESS line with no earlier SUCCESS line that would have made the same
//   payment finding (any, for a payment not with us; one of another amount than ours).
// - status_mismatch: the line speaking for its pay_no's status differs from our order's. The
//   platform's status of a pay_no is REFUND when any of its lines is a refund, else SUCCESS
//   when any is a payment, else what its first line says (CLOSED, REVOKED ...); the line that
//   speaks is the first of that status. Ours is SUCCESS for a PAID order, else REFUND
//   (REFUNDING, REFUNDED).
void findLineKinds(const QSqlDatabase &db, const PaymentSide &side, qint64 statementId,
                   FindingWriter &writer)
{
    const QString ours = QStringLiteral("COALESCE(%1, 0)").arg(QLatin1String(kOurs));
    const QString earlier = QStringLiteral("e.line_no < l.line_no");
    const QString verdict =
        QStringLiteral(
            "CASE WHEN l.status = 'REFUND' THEN IF(%1, NULL, 'REFUND') WHEN %2 THEN NULL "
            "WHEN l.status = 'SUCCESS' THEN IF(%3, NULL, 'SUCCESS') WHEN %4 THEN NULL "
            "WHEN %5 THEN NULL ELSE l.status END")
            .arg(otherLine(QStringLiteral("e.status = 'REFUND' AND ") + earlier),
                 otherLine(QStringLiteral("e.status = 'REFUND'")),
                 otherLine(QStringLiteral("e.status = 'SUCCESS' AND ") + earlier),
                 otherLine(QStringLiteral("e.status = 'SUCCESS'")), otherLine(earlier));
    const QString sql = onSide(
        QStringLiteral("SELECT l.line_no, l.pay_no, l.order_id, l.amount_fen, l.status, "
                       "p.order_id, p.amount_fen, p.status, o.status, "
                       " %1 AS ours,"
                       " COALESCE(p.status = 'REJECTED' AND p.reason = 'order_already_paid' AND "
                       "o.id IS NOT NULL"
                       "          AND NOT (o.pay_no <=> p.pay_no), 0) AS second_payment,"
                       " CASE WHEN l.status <> 'SUCCESS' THEN 0 ELSE NOT %2 END AS first_payment,"
                       " CASE WHEN %1 = 0 THEN 0 ELSE COALESCE(%3 <> IF(o.status = 'PAID', "
                       "'SUCCESS', 'REFUND'), 0) END AS status_mismatch, l.out_trade_no "
                       "FROM platform_statement_line l"
                       " LEFT JOIN %P p ON p.pay_no = l.pay_no"
                       " LEFT JOIN %O o ON o.id = p.%L "
                       "WHERE l.statement_id = ? AND l.line_no > ?"
                       " AND NOT (l.status = 'SUCCESS' AND %1 = 1 AND l.amount_fen = p.amount_fen "
                       "AND o.status = 'PAID') "
                       "HAVING first_payment = 1 OR status_mismatch = 1 "
                       "ORDER BY l.line_no LIMIT %4")
            .arg(ours,
                 otherLine(
                     QStringLiteral(
                         "e.status = 'SUCCESS' AND %1 AND (%2 = 0 OR e.amount_fen <> p.amount_fen)")
                         .arg(earlier, ours)),
                 verdict, QString::number(kPageRows)),
        side);
    qint64 after = 0;
    for (int rows = kPageRows; rows == kPageRows;) {
        rows = 0;
        QSqlQuery query = db::exec(db, sql, {statementId, after});
        while (query.next()) {
            ++rows;
            after = query.value(0).toLongLong();
            ReconciliationFinding finding;
            finding.lineNo = after;
            finding.payNo = query.value(1).toByteArray();
            setOrder(finding, query.value(5), query.value(2), query.value(13));
            finding.platformAmountFen = query.value(3).toLongLong();
            finding.platformStatus = query.value(4).toString();
            const QVariant ourFen = query.value(6);
            const bool withUs = query.value(9).toInt() == 1;
            if (query.value(11).toInt() == 1) {
                // A payment the platform took: with us at another amount, a second payment of
                // an order another pay_no paid, or not with us at all.
                ReconciliationFinding payment = finding;
                payment.ourStatus = query.value(7).toString();
                if (!withUs) {
                    payment.kind = query.value(10).toInt() == 1 ? FindingKind::DoublePayment
                                                                : FindingKind::MissingOurs;
                    writer.add(payment);
                } else if (ourFen.toLongLong() != finding.platformAmountFen) {
                    payment.kind = FindingKind::AmountMismatch;
                    payment.ourAmountFen = ourFen.toLongLong();
                    writer.add(payment);
                } // else it agrees; only its order's status differs, which the status check reports
            }
            if (query.value(12).toInt() == 1) {
                finding.kind = FindingKind::StatusMismatch;
                finding.ourAmountFen = ourFen.toLongLong();
                finding.ourStatus = query.value(8).toString();
                writer.add(finding);
            }
        }
    }
}

// One finding per pay_no on more than one payment line, at its first line, in pages by pay_no.
// The grouping reads the (statement_id, pay_no, status) index alone, in its order, and stops
// at a page of pay_nos listed twice; only those are joined to their line and payment.
void findDuplicates(const QSqlDatabase &db, const PaymentSide &side, qint64 statementId,
                    FindingWriter &writer)
{
    const QString sql = onSide(
        QStringLiteral(
            "SELECT STRAIGHT_JOIN d.pay_no, d.listed, l.line_no, l.order_id, l.amount_fen, "
            "p.order_id, IF(%1, p.amount_fen, NULL), l.out_trade_no "
            "FROM (SELECT pay_no, COUNT(*) AS listed, MIN(line_no) AS first_line FROM "
            "platform_statement_line"
            "      WHERE statement_id = ? AND status <> 'REFUND' AND pay_no > ? GROUP BY pay_no "
            "HAVING COUNT(*) > 1"
            "      ORDER BY pay_no LIMIT %2) d "
            "JOIN platform_statement_line l ON l.statement_id = ? AND l.line_no = d.first_line "
            "LEFT JOIN %P p ON p.pay_no = l.pay_no "
            "LEFT JOIN %O o ON o.id = p.%L "
            "ORDER BY d.pay_no")
            .arg(QLatin1String(kOurs), QString::number(kPageRows)),
        side);
    QByteArray after(""); // not a null QByteArray: that would be bound as NULL
    for (int rows = kPageRows; rows == kPageRows;) {
        rows = 0;
        QSqlQuery query = db::exec(db, sql, {statementId, after, statementId});
        while (query.next()) {
            ++rows;
            ReconciliationFinding finding;
            finding.kind = FindingKind::DuplicatePlatform;
            finding.payNo = after = query.value(0).toByteArray();
            finding.listed = query.value(1).toLongLong();
            finding.lineNo = query.value(2).toLongLong();
            setOrder(finding, query.value(5), query.value(3), query.value(7));
            finding.platformAmountFen = query.value(4).toLongLong();
            finding.ourAmountFen = optionalNumber(query.value(6));
            writer.add(finding);
        }
    }
}

// Our payments of the statement's channel (every channel we have when it names none) whose
// platform time is in its period, and that no line lists: ranges of (channel,
// platform_paid_at), one per value the side stores the channel under, never a scan of the
// callbacks, a page at a time in the index's order.
// The anti-join is a LEFT JOIN on the (statement_id, pay_no) index, forced: as NOT EXISTS the
// server materialized every pay_no of the statement first, and unforced it chose the primary
// key, reading the whole statement for each payment. It comes before the order
// (STRAIGHT_JOIN), so that only the payments no line lists are looked up in orders: on a
// statement that agrees with us, none. `sink` takes each page; false stops.
void findMissingOnPlatform(const QSqlDatabase &db, const PaymentSide &side,
                           const StoredStatement &statement,
                           const std::function<bool(QList<ReconciliationFinding> &&)> &sink)
{
    QStringList channels;
    if (!side.channelKnown) {
        channels << QStringLiteral(""); // not a null QString: that would be bound as NULL
    } else if (!statement.header.channel.isEmpty()) {
        channels << side.channelValues.value(statement.header.channel,
                                             QStringList{statement.header.channel});
    } else {
        // A loose scan of the index: one step per channel.
        QSqlQuery known =
            db::exec(db, onSide(QStringLiteral("SELECT channel FROM %P p GROUP BY channel"), side));
        while (known.next())
            channels << known.value(0).toString();
    }
    const auto utc = [](const QDateTime &time) {
        return time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    };
    const QString sql = onSide(
        QStringLiteral("SELECT p.pay_no, p.order_id, p.amount_fen, o.status, "
                       "DATE_FORMAT(p.platform_paid_at, '%Y-%m-%d %H:%i:%s.%f'), p.id, %N "
                       "FROM %P p "
                       "LEFT JOIN platform_statement_line l FORCE INDEX (idx_statement_line_pay_no)"
                       " ON l.statement_id = ? AND l.pay_no = p.pay_no "
                       "STRAIGHT_JOIN %O o ON o.id = p.%L AND %1 "
                       "WHERE p.channel = ? AND p.platform_paid_at < ?"
                       " AND (p.platform_paid_at > ? OR (p.platform_paid_at = ? AND p.id > ?)) AND "
                       "l.pay_no IS NULL "
                       "ORDER BY p.platform_paid_at, p.id LIMIT %2")
            .arg(QLatin1String(kOurs), QString::number(kPageRows)),
        side);
    for (const QString &channel : std::as_const(channels)) {
        // The first page starts at the period's start: ids are positive.
        QString afterTime = utc(statement.header.periodStart);
        QVariant afterId = side.firstKey;
        for (int rows = kPageRows; rows == kPageRows;) {
            QList<ReconciliationFinding> page;
            QSqlQuery query = db::exec(db, sql,
                                       {statement.id, channel, utc(statement.header.periodEnd),
                                        afterTime, afterTime, afterId});
            while (query.next()) {
                ReconciliationFinding finding;
                finding.kind = FindingKind::MissingPlatform;
                finding.payNo = query.value(0).toByteArray();
                finding.orderId = optionalNumber(query.value(1));
                finding.orderNo = query.value(6).toByteArray();
                finding.ourAmountFen = query.value(2).toLongLong();
                finding.ourStatus = query.value(3).toString();
                afterTime = query.value(4).toString();
                afterId = query.value(5);
                page.append(finding);
            }
            rows = int(page.size());
            if (!page.isEmpty() && !sink(std::move(page)))
                return;
        }
    }
}

// The 多单 found on the second connection, a few pages at a time: the search waits while
// kWaitingPages are not yet stored, so that memory stays flat however many there are.
class MissingPages
{
public:
    static constexpr size_t kWaitingPages = 2;

    // From the search; false when the reconciliation gave up and the search should stop.
    bool put(QList<ReconciliationFinding> &&page)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_pages.size() < kWaitingPages || m_abandoned; });
        if (m_abandoned)
            return false;
        m_pages.push_back(std::move(page));
        m_changed.notify_all();
        return true;
    }

    // The next page; nothing once the search has ended.
    std::optional<QList<ReconciliationFinding>> take()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_pages.empty() || m_ended; });
        if (m_pages.empty())
            return std::nullopt;
        QList<ReconciliationFinding> page = std::move(m_pages.front());
        m_pages.pop_front();
        m_changed.notify_all();
        return page;
    }

    void end()
    {
        const std::lock_guard lock(m_mutex);
        m_ended = true;
        m_changed.notify_all();
    }

    void abandon()
    {
        const std::lock_guard lock(m_mutex);
        m_abandoned = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<QList<ReconciliationFinding>> m_pages;
    bool m_ended = false;
    bool m_abandoned = false;
};

// The 多单 search and the line pass each join about every line or payment of the period once;
// on two connections they run at the same time, on two of the server's cores. This one reads
// in a snapshot of its own, taken within milliseconds of the main connection's: each finding
// is true as of one of the two. Its pages go through `pages`; the future says false when no
// second connection could be opened (the caller's QSqlDatabase is not a db::Connection's, or
// the server refuses one): the caller searches itself.
std::future<bool> findMissingOnPlatformAside(const QSqlDatabase &db, const PaymentSide &side,
                                             const StoredStatement &statement,
                                             const std::shared_ptr<MissingPages> &pages)
{
    const std::optional<Dsn> dsn = db::dsnOf(db);
    return std::async(std::launch::async, [dsn, side, statement, pages]() -> bool {
        struct Ended
        {
            MissingPages &pages;
            ~Ended() { pages.end(); }
        } ended{*pages};
        if (!dsn)
            return false;
        std::unique_ptr<db::Connection> aside;
        try {
            aside = std::make_unique<db::Connection>(*dsn, QStringLiteral("reconcile"));
        } catch (const db::Error &) {
            return false;
        }
        const QSqlDatabase asideDb = aside->database();
        db::execDirect(asideDb,
                       QStringLiteral("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"));
        findMissingOnPlatform(
            asideDb, side, statement,
            [&pages](QList<ReconciliationFinding> &&page) { return pages->put(std::move(page)); });
        db::execDirect(asideDb, QStringLiteral("COMMIT"));
        return true;
    });
}

} // namespace

QString findingKindName(FindingKind kind)
{
    return QLatin1String(kKindNames[static_cast<int>(kind)]);
}

qint64 Reconciliation::total() const
{
    qint64 sum = 0;
    for (const qint64 count : counts)
        sum += count;
    return sum;
}

PaymentSide ownPaymentSide()
{
    PaymentSide side;
    side.payments = QStringLiteral("pay_callback_log");
    side.orders = QStringLiteral("orders");
    side.firstKey = qint64(0);
    return side;
}

PaymentSide gatewayPaymentSide()
{
    // Derived tables the server merges into each query, so that the joins reach
    // pay_callback_log's indexes (pay_no, (channel, platform_paid_at)) directly. Each payment is
    // its own order: o.id is the payment's row, linked by p.trade.
    PaymentSide side;
    side.payments = QStringLiteral(
        "(SELECT x.pay_no, NULLIF(x.order_id, 0) AS order_id, x.id AS trade, x.amount_fen, "
        "x.channel, x.platform_paid_at, x.id, x.status, '' AS reason, x.out_trade_no FROM "
        "pay_callback_log x WHERE x.gateway = 1)");
    // A refund's outcome is an event named REFUND.*/refund_id at WeChat Pay and
    // trade_status/out_biz_no at Alipay (gatewayforward.h).
    // The payment's success is CallbackRequest::successSql()'s test, on y.
    side.orders = QStringLiteral(
        "(SELECT y.id, y.pay_no, CASE WHEN y.status <> 'FORWARDED' OR NOT (CASE WHEN "
        "y.wire_format = 'alipay' THEN CAST(y.trade_status AS BINARY) IN ('TRADE_SUCCESS', "
        "'TRADE_FINISHED') ELSE CAST(y.trade_status AS BINARY) = 'SUCCESS' END) THEN y.status "
        "WHEN EXISTS (SELECT 1 FROM callback_event e WHERE e.pay_no = y.pay_no AND e.status = "
        "'FORWARDED' AND (e.event LIKE 'REFUND.SUCCESS/%' OR e.event LIKE 'TRADE%/%')) "
        "THEN 'REFUNDED' ELSE 'PAID' END AS status FROM pay_callback_log y WHERE y.gateway = 1)");
    side.firstKey = qint64(0);
    side.orderLink = QStringLiteral("trade");
    side.findingOrder = QStringLiteral("o.pay_no = r.pay_no");
    side.orderNo = QStringLiteral("COALESCE(p.out_trade_no, CAST(p.order_id AS CHAR))");
    return side;
}

PaymentSide ownOrGatewayPaymentSide(const QSqlDatabase &db)
{
    // The latest callback, by the primary key: one row read whatever the table's size.
    const bool gateway =
        db::scalar(db, QStringLiteral("SELECT gateway FROM pay_callback_log ORDER BY id DESC "
                                      "LIMIT 1"))
            .toBool();
    return gateway ? gatewayPaymentSide() : ownPaymentSide();
}

Reconciliation reconcileStatement(const QSqlDatabase &db, qint64 statementId,
                                  const PaymentSide &side)
{
    const StoredStatement statement = readStoredStatement(db, statementId);
    if (statement.id == 0)
        throw db::Error(Reconciliation::tr("there is no statement %1").arg(statementId));

    Reconciliation result;
    result.statementId = statementId;
    // One snapshot for every read below, and the run stored with its findings or not at all.
    db::Transaction transaction(db);
    result.runId =
        db::exec(
            db,
            QStringLiteral("INSERT INTO reconciliation_run (statement_id, started_by, started_at) "
                           "VALUES (?, CURRENT_USER(), NOW(3))"),
            {statementId})
            .lastInsertId()
            .toLongLong();

    result.periodKnown =
        statement.header.periodStart.isValid() && statement.header.periodEnd.isValid();
    const auto missingPages = std::make_shared<MissingPages>();
    std::future<bool> searchedAside;
    // Declared after the future, so destroyed before it: a failure below stops the search
    // instead of leaving it waiting for a page to be taken.
    struct Abandon
    {
        MissingPages &pages;
        ~Abandon() { pages.abandon(); }
    } abandon{*missingPages};
    if (result.periodKnown)
        searchedAside = findMissingOnPlatformAside(db, side, statement, missingPages);

    FindingWriter writer(db, result.runId);
    findLineKinds(db, side, statementId, writer);
    findDuplicates(db, side, statementId, writer);
    if (result.periodKnown) {
        const auto store = [&writer](QList<ReconciliationFinding> &&page) {
            for (const ReconciliationFinding &finding : std::as_const(page))
                writer.add(finding);
            return true;
        };
        while (std::optional<QList<ReconciliationFinding>> page = missingPages->take())
            store(std::move(*page));
        if (!searchedAside.get())
            findMissingOnPlatform(db, side, statement, store);
    }
    writer.flush();
    result.counts = writer.counts();

    db::exec(db,
             QStringLiteral(
                 "UPDATE reconciliation_run SET finished_at = NOW(3), missing_ours = ?, "
                 "missing_platform = ?, amount_mismatch = ?, "
                 "status_mismatch = ?, duplicate_platform = ?, double_payment = ? WHERE id = ?"),
             {result.counts[0], result.counts[1], result.counts[2], result.counts[3],
              result.counts[4], result.counts[5], result.runId});
    transaction.commit();
    return result;
}

void readStoredFindings(const QSqlDatabase &db, qint64 runId, const FindingSink &sink)
{
    readStoredFindings(db, ownPaymentSide(), runId, sink);
}

void readStoredFindings(const QSqlDatabase &db, const PaymentSide &side, qint64 runId,
                        const FindingSink &sink)
{
    // By kind on the (run_id, kind) index, each kind in the order its findings were stored.
    const QString sql = onSide(
        QStringLiteral(
            "SELECT r.id, r.pay_no, r.order_id, r.platform_amount_fen, r.our_amount_fen, "
            "r.line_no, l.status, o.status, "
            " IF(r.kind = 'duplicate_platform', (SELECT COUNT(*) FROM platform_statement_line c"
            "  WHERE c.statement_id = u.statement_id AND c.pay_no = r.pay_no AND c.status <> "
            "'REFUND'), NULL), "
            " IF(r.kind IN ('status_mismatch', 'missing_platform'), o.status, p.status), "
            " COALESCE(r.out_trade_no, CAST(r.order_id AS CHAR)) "
            "FROM reconciliation_result r "
            "JOIN reconciliation_run u ON u.id = r.run_id "
            "LEFT JOIN platform_statement_line l ON l.statement_id = u.statement_id AND l.line_no "
            "= r.line_no "
            "LEFT JOIN %O o ON %F "
            "LEFT JOIN %P p ON p.pay_no = r.pay_no "
            "WHERE r.run_id = ? AND r.kind = ? AND r.id > ? ORDER BY r.id LIMIT %1")
            .arg(kPageRows),
        side);
    for (int kind = 0; kind < kFindingKinds; ++kind) {
        qint64 after = 0;
        for (int rows = kPageRows; rows == kPageRows;) {
            rows = 0;
            QSqlQuery query = db::exec(db, sql, {runId, findingKindName(FindingKind(kind)), after});
            while (query.next()) {
                ++rows;
                after = query.value(0).toLongLong();
                ReconciliationFinding finding;
                finding.kind = FindingKind(kind);
                finding.payNo = query.value(1).toByteArray();
                finding.orderId = optionalNumber(query.value(2));
                finding.platformAmountFen = optionalNumber(query.value(3));
                finding.ourAmountFen = optionalNumber(query.value(4));
                finding.lineNo = optionalNumber(query.value(5));
                finding.platformStatus = query.value(6).toString();
                finding.orderStatus = query.value(7).toString();
                finding.listed = optionalNumber(query.value(8));
                finding.ourStatus = query.value(9).toString();
                finding.orderNo = query.value(10).toByteArray();
                if (!sink(finding))
                    return;
            }
        }
    }
}

} // namespace payops
