#include "reconciliation.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "domain/statementimport.h"

#include <QCoreApplication>
#include <QHash>
#include <QSqlQuery>
#include <QStringList>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>

namespace payops {
namespace {

constexpr const char *kKindNames[kFindingKinds] = {"missing_ours",         "missing_platform", "amount_mismatch",
                                                   "status_mismatch",      "duplicate_platform", "double_payment"};

// A payment with us: the callback's order is paid by the callback's pay_no.
constexpr auto kOurs = "(o.pay_no = p.pay_no AND o.status IN ('PAID', 'REFUNDING', 'REFUNDED'))";

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

// One line of the statement that the per-line join could not clear, with what we have for
// its pay_no.
struct LineFacts
{
    qint64 lineNo = 0;
    QByteArray payNo;
    QVariant lineOrder;
    qint64 platformFen = 0;
    QString platformStatus;
    QVariant ourOrder;
    QVariant ourFen;
    QString callbackStatus;
    QString orderStatus;
    bool ours = false;
    bool secondPayment = false;
    bool listedAsSuccess = false; // for a line that is neither SUCCESS nor REFUND
};

// Every line except the plain case, a SUCCESS line of a PAID payment with us for the same
// amount, comes back: on a statement that agrees with us that is its refunds and little else.
// One pass over the statement's primary key, each line joined to its callback by uk_pay_no and
// to the order by its primary key. A plain SELECT inside the run's transaction: a consistent
// read, no row of pay_callback_log or orders is locked. The check of a line that is neither
// SUCCESS nor REFUND is forced onto the (statement_id, pay_no, status) index: the optimizer
// otherwise picked the primary key and read the whole statement for each such line.
QList<LineFacts> readLines(const QSqlDatabase &db, qint64 statementId)
{
    const QString sql = QStringLiteral(
        "SELECT line_no, pay_no, line_order, platform_fen, platform_status, our_order, our_fen, callback_status, "
        "order_status, ours, second_payment, listed_success FROM ("
        " SELECT l.line_no, l.pay_no, l.order_id AS line_order, l.amount_fen AS platform_fen, l.status AS platform_status,"
        "  p.order_id AS our_order, p.amount_fen AS our_fen, p.status AS callback_status, o.status AS order_status,"
        "  COALESCE(%1, 0) AS ours,"
        "  COALESCE(p.status = 'REJECTED' AND p.reason = 'order_already_paid' AND o.id IS NOT NULL"
        "           AND NOT (o.pay_no <=> p.pay_no), 0) AS second_payment,"
        "  CASE WHEN l.status NOT IN ('SUCCESS', 'REFUND') THEN EXISTS (SELECT 1 FROM platform_statement_line s"
        "   FORCE INDEX (idx_statement_line_pay_no) WHERE s.statement_id = l.statement_id AND s.pay_no = l.pay_no AND s.status = 'SUCCESS') ELSE 0 END"
        "   AS listed_success"
        " FROM platform_statement_line l"
        " LEFT JOIN pay_callback_log p ON p.pay_no = l.pay_no"
        " LEFT JOIN orders o ON o.id = p.order_id"
        " WHERE l.statement_id = ?) x "
        "WHERE NOT (x.platform_status = 'SUCCESS' AND x.ours = 1 AND x.platform_fen = x.our_fen AND x.order_status = 'PAID') "
        "ORDER BY x.line_no").arg(QLatin1String(kOurs));
    QList<LineFacts> lines;
    QSqlQuery query = db::exec(db, sql, {statementId});
    while (query.next()) {
        LineFacts facts;
        facts.lineNo = query.value(0).toLongLong();
        facts.payNo = query.value(1).toByteArray();
        facts.lineOrder = query.value(2);
        facts.platformFen = query.value(3).toLongLong();
        facts.platformStatus = query.value(4).toString();
        facts.ourOrder = query.value(5);
        facts.ourFen = query.value(6);
        facts.callbackStatus = query.value(7).toString();
        facts.orderStatus = query.value(8).toString();
        facts.ours = query.value(9).toInt() == 1;
        facts.secondPayment = query.value(10).toInt() == 1;
        facts.listedAsSuccess = query.value(11).toInt() == 1;
        lines.append(facts);
    }
    return lines;
}

// A SUCCESS line is a payment the platform took: with us at another amount, a second payment
// of an order that another pay_no paid, or not with us at all.
void classifyPayments(const QList<LineFacts> &lines, QList<ReconciliationFinding> &findings)
{
    for (const LineFacts &line : lines) {
        if (line.platformStatus != QLatin1String("SUCCESS"))
            continue;
        ReconciliationFinding finding;
        finding.payNo = line.payNo;
        finding.lineNo = line.lineNo;
        finding.platformAmountFen = line.platformFen;
        finding.platformStatus = line.platformStatus;
        finding.ourStatus = line.callbackStatus;
        finding.orderId = orderNumber(line.ourOrder, line.lineOrder);
        if (line.ours) {
            if (line.platformFen == line.ourFen.toLongLong())
                continue; // agrees; only its order's status differs, which the status check reports
            finding.kind = FindingKind::AmountMismatch;
            finding.ourAmountFen = line.ourFen.toLongLong();
        } else {
            finding.kind = line.secondPayment ? FindingKind::DoublePayment : FindingKind::MissingOurs;
        }
        findings.append(finding);
    }
}

// The platform's status of a pay_no is REFUND when any of its lines is a refund, else SUCCESS
// when any is a payment, else what its line says (CLOSED, REVOKED ...). Ours is SUCCESS for a
// PAID order and REFUND for REFUNDING or REFUNDED. Lines of a pay_no that agree on SUCCESS
// and PAID never came back from readLines(), which is why listedAsSuccess exists.
void classifyStatuses(const QList<LineFacts> &lines, QList<ReconciliationFinding> &findings)
{
    struct Verdict
    {
        const LineFacts *refund = nullptr;
        const LineFacts *success = nullptr;
        const LineFacts *other = nullptr;
        bool listedAsSuccess = false;
    };
    QHash<QByteArray, Verdict> byPayNo;
    QList<QByteArray> order;
    for (const LineFacts &line : lines) {
        if (!line.ours)
            continue;
        auto found = byPayNo.find(line.payNo);
        if (found == byPayNo.end()) {
            found = byPayNo.insert(line.payNo, Verdict());
            order.append(line.payNo);
        }
        Verdict &verdict = *found;
        const LineFacts **slot = line.platformStatus == QLatin1String("REFUND")    ? &verdict.refund
                                 : line.platformStatus == QLatin1String("SUCCESS") ? &verdict.success
                                                                                   : &verdict.other;
        if (!*slot)
            *slot = &line;
        verdict.listedAsSuccess = verdict.listedAsSuccess || line.listedAsSuccess;
    }
    for (const QByteArray &payNo : std::as_const(order)) {
        const Verdict &verdict = byPayNo[payNo];
        const LineFacts *line = verdict.refund ? verdict.refund : verdict.success ? verdict.success : verdict.other;
        const QString platform = verdict.refund || verdict.success || !verdict.listedAsSuccess
                                     ? line->platformStatus
                                     : QStringLiteral("SUCCESS");
        const QString ours = line->orderStatus == QLatin1String("PAID") ? QStringLiteral("SUCCESS") : QStringLiteral("REFUND");
        if (platform == ours)
            continue;
        ReconciliationFinding finding;
        finding.kind = FindingKind::StatusMismatch;
        finding.payNo = payNo;
        finding.orderId = orderNumber(line->ourOrder, line->lineOrder);
        finding.lineNo = line->lineNo;
        finding.platformAmountFen = line->platformFen;
        finding.ourAmountFen = line->ourFen.toLongLong();
        finding.platformStatus = platform;
        finding.ourStatus = line->orderStatus;
        findings.append(finding);
    }
}

// Every payment line of a pay_no after its first. The grouping reads the (statement_id,
// pay_no, status) index alone. The pay_nos listed twice lead (STRAIGHT_JOIN) and their lines are
// found by that index: left to itself the optimizer walked every line of the statement by its
// primary key and joined each to its payment, for a result that is usually empty.
void findDuplicates(const QSqlDatabase &db, qint64 statementId, QList<ReconciliationFinding> &findings)
{
    const QString sql = QStringLiteral(
        "SELECT STRAIGHT_JOIN l.line_no, l.pay_no, l.order_id, l.amount_fen, l.status, p.order_id, IF(%1, p.amount_fen, NULL), p.status "
        "FROM (SELECT pay_no, MIN(line_no) AS first_line FROM platform_statement_line"
        "      WHERE statement_id = ? AND status <> 'REFUND' GROUP BY pay_no HAVING COUNT(*) > 1) d "
        "JOIN platform_statement_line l FORCE INDEX (idx_statement_line_pay_no)"
        " ON l.statement_id = ? AND l.pay_no = d.pay_no AND l.line_no > d.first_line "
        " AND l.status <> 'REFUND' "
        "LEFT JOIN pay_callback_log p ON p.pay_no = l.pay_no "
        "LEFT JOIN orders o ON o.id = p.order_id "
        "ORDER BY l.line_no").arg(QLatin1String(kOurs));
    QSqlQuery query = db::exec(db, sql, {statementId, statementId});
    while (query.next()) {
        ReconciliationFinding finding;
        finding.kind = FindingKind::DuplicatePlatform;
        finding.lineNo = query.value(0).toLongLong();
        finding.payNo = query.value(1).toByteArray();
        finding.orderId = orderNumber(query.value(5), query.value(2));
        finding.platformAmountFen = query.value(3).toLongLong();
        finding.platformStatus = query.value(4).toString();
        finding.ourAmountFen = optionalNumber(query.value(6));
        finding.ourStatus = query.value(7).toString();
        findings.append(finding);
    }
}

// Our payments of the statement's channel (every channel we have when it names none) whose
// platform time is in its period, and that no line lists: ranges of (channel,
// platform_paid_at), never a scan of the callbacks. The anti-join is a LEFT JOIN on the
// (statement_id, pay_no) index, forced: as NOT EXISTS the server materialized every pay_no of
// the statement first, and unforced it chose the primary key, reading the whole statement for
// each payment. It comes before the order (STRAIGHT_JOIN), so that only the payments no line
// lists are looked up in orders: on a statement that agrees with us, none.
void findMissingOnPlatform(const QSqlDatabase &db, const StoredStatement &statement,
                           QList<ReconciliationFinding> &findings)
{
    QStringList channels;
    if (!statement.header.channel.isEmpty()) {
        channels << statement.header.channel;
    } else {
        // A loose scan of the index: one step per channel.
        QSqlQuery known = db::exec(db, QStringLiteral("SELECT channel FROM pay_callback_log GROUP BY channel"));
        while (known.next())
            channels << known.value(0).toString();
    }
    if (channels.isEmpty())
        return;
    QVariantList binds;
    for (const QString &channel : std::as_const(channels))
        binds << channel;
    const auto utc = [](const QDateTime &time) { return time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")); };
    binds.prepend(statement.id);
    binds << utc(statement.header.periodStart) << utc(statement.header.periodEnd);
    const QString sql = QStringLiteral(
        "SELECT p.pay_no, p.order_id, p.amount_fen, o.status FROM pay_callback_log p "
        "LEFT JOIN platform_statement_line l FORCE INDEX (idx_statement_line_pay_no)"
        " ON l.statement_id = ? AND l.pay_no = p.pay_no "
        "STRAIGHT_JOIN orders o ON o.id = p.order_id AND %1 "
        "WHERE p.channel IN (%2) AND p.platform_paid_at >= ? AND p.platform_paid_at < ? AND l.pay_no IS NULL "
        "ORDER BY p.platform_paid_at, p.id")
                            .arg(QLatin1String(kOurs), QStringList(channels.size(), QStringLiteral("?")).join(u','));
    QSqlQuery query = db::exec(db, sql, binds);
    while (query.next()) {
        ReconciliationFinding finding;
        finding.kind = FindingKind::MissingPlatform;
        finding.payNo = query.value(0).toByteArray();
        finding.orderId = query.value(1).toLongLong();
        finding.ourAmountFen = query.value(2).toLongLong();
        finding.ourStatus = query.value(3).toString();
        findings.append(finding);
    }
}

// The 多单 search and readLines() each join about every line or payment of the period once;
// on two connections they run at the same time, on two of the server's cores. This one reads
// in a snapshot of its own, taken within milliseconds of the main connection's: each finding
// is true as of one of the two. Nothing when no second connection can be opened (the caller's
// QSqlDatabase is not a db::Connection's, or the server refuses one): the caller searches
// itself.
std::future<std::optional<QList<ReconciliationFinding>>> findMissingOnPlatformAside(const QSqlDatabase &db,
                                                                                      const StoredStatement &statement)
{
    const std::optional<Dsn> dsn = db::dsnOf(db);
    return std::async(std::launch::async, [dsn, statement]() -> std::optional<QList<ReconciliationFinding>> {
        if (!dsn)
            return std::nullopt;
        std::unique_ptr<db::Connection> aside;
        try {
            aside = std::make_unique<db::Connection>(*dsn, QStringLiteral("reconcile"));
        } catch (const db::Error &) {
            return std::nullopt;
        }
        const QSqlDatabase asideDb = aside->database();
        db::execDirect(asideDb, QStringLiteral("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"));
        QList<ReconciliationFinding> findings;
        findMissingOnPlatform(asideDb, statement, findings);
        db::execDirect(asideDb, QStringLiteral("COMMIT"));
        return findings;
    });
}

void storeFindings(const QSqlDatabase &db, qint64 runId, const QList<ReconciliationFinding> &findings)
{
    const auto nullable = [](const std::optional<qint64> &value) { return value ? QVariant(*value) : QVariant(); };
    QList<QVariantList> rows;
    for (qsizetype i = 0; i < findings.size(); ++i) {
        const ReconciliationFinding &finding = findings.at(i);
        rows.append(QVariantList{runId, findingKindName(finding.kind), finding.payNo, nullable(finding.orderId),
                                 nullable(finding.platformAmountFen), nullable(finding.ourAmountFen),
                                 nullable(finding.lineNo)});
        if (rows.size() == kResultBatch || i + 1 == findings.size()) {
            db::exec(db, QStringLiteral("INSERT INTO reconciliation_result (run_id, kind, pay_no, order_id, "
                                        "platform_amount_fen, our_amount_fen, line_no) VALUES ")
                             + db::valueRows(db, rows));
            rows.clear();
        }
    }
}

} // namespace

QString findingKindName(FindingKind kind)
{
    return QLatin1String(kKindNames[static_cast<int>(kind)]);
}

Reconciliation reconcileStatement(const QSqlDatabase &db, qint64 statementId)
{
    const StoredStatement statement = readStoredStatement(db, statementId);
    if (statement.id == 0)
        throw db::Error(Reconciliation::tr("there is no statement %1").arg(statementId));

    Reconciliation result;
    result.statementId = statementId;
    // One snapshot for every read below, and the run stored with its findings or not at all.
    db::Transaction transaction(db);
    result.runId = db::exec(db, QStringLiteral("INSERT INTO reconciliation_run (statement_id, started_by, started_at) "
                                               "VALUES (?, CURRENT_USER(), NOW(3))"), {statementId})
                       .lastInsertId()
                       .toLongLong();

    result.periodKnown = statement.header.periodStart.isValid() && statement.header.periodEnd.isValid();
    std::future<std::optional<QList<ReconciliationFinding>>> missingElsewhere;
    if (result.periodKnown)
        missingElsewhere = findMissingOnPlatformAside(db, statement);
    const QList<LineFacts> lines = readLines(db, statementId);
    classifyPayments(lines, result.findings);
    classifyStatuses(lines, result.findings);
    findDuplicates(db, statementId, result.findings);
    if (result.periodKnown) {
        if (std::optional<QList<ReconciliationFinding>> missing = missingElsewhere.get())
            result.findings += *missing;
        else
            findMissingOnPlatform(db, statement, result.findings);
    }

    std::stable_sort(result.findings.begin(), result.findings.end(),
                     [](const ReconciliationFinding &a, const ReconciliationFinding &b) { return a.kind < b.kind; });
    for (const ReconciliationFinding &finding : std::as_const(result.findings))
        ++result.counts[static_cast<int>(finding.kind)];

    storeFindings(db, result.runId, result.findings);
    db::exec(db, QStringLiteral(
        "UPDATE reconciliation_run SET finished_at = NOW(3), missing_ours = ?, missing_platform = ?, amount_mismatch = ?, "
        "status_mismatch = ?, duplicate_platform = ?, double_payment = ? WHERE id = ?"),
        {result.counts[0], result.counts[1], result.counts[2], result.counts[3], result.counts[4], result.counts[5],
         result.runId});
    transaction.commit();
    return result;
}

} // namespace payops
