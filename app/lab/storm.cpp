#include "storm.h"

#include "db/connection.h"
#include "db/dberror.h"
#include "db/migrator.h"
#include "platformnotification.h"

#include <QCoreApplication>
#include <QMutex>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QUrl>

#include <algorithm>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct Storm
{
    Q_DECLARE_TR_FUNCTIONS(payops::Storm)
};

void requireSandbox(const QSqlDatabase &db)
{
    if (!db::isSandboxDatabase(db))
        throw db::Error(Storm::tr(
            "this database is not marked as a sandbox: the storm pays orders out on purpose "
            "and runs only on a sandbox (payops sandbox, or payops migrate --sandbox on a "
            "database of test data)"));
}

// Remembers what createStormOrders / pendingStormOrders / stormOrderFacts read, so that
// runStorm, given ids only, signs callbacks whose amount matches the order.
struct FactsRegistry
{
    QMutex mutex;
    QHash<qint64, StormOrderFacts> facts;
};

FactsRegistry &registry()
{
    static FactsRegistry instance;
    return instance;
}

void remember(const QHash<qint64, StormOrderFacts> &facts)
{
    FactsRegistry &r = registry();
    const QMutexLocker lock(&r.mutex);
    // Bounded: a console that runs storms all afternoon must not grow without end. What is
    // dropped is read again by the next createStormOrders / pendingStormOrders.
    if (r.facts.size() + facts.size() > 4 * kStormMaxOrders)
        r.facts.clear();
    r.facts.insert(facts);
}

} // namespace

std::optional<StormOrderFacts> rememberedStormOrderFacts(qint64 order)
{
    FactsRegistry &r = registry();
    const QMutexLocker lock(&r.mutex);
    const auto it = r.facts.constFind(order);
    if (it == r.facts.constEnd())
        return std::nullopt;
    return *it;
}

std::optional<StormPattern> parseStormPattern(const QString &text)
{
    for (StormPattern pattern :
         {StormPattern::Concurrent, StormPattern::Gap, StormPattern::Replay, StormPattern::Mixed}) {
        if (text == stormPatternName(pattern))
            return pattern;
    }
    return std::nullopt;
}

QString stormPatternName(StormPattern pattern)
{
    switch (pattern) {
    case StormPattern::Concurrent:
        return QStringLiteral("concurrent");
    case StormPattern::Gap:
        return QStringLiteral("gap");
    case StormPattern::Replay:
        return QStringLiteral("replay");
    case StormPattern::Mixed:
        return QStringLiteral("mixed");
    }
    return {};
}

std::optional<StormTarget> parseStormTarget(const QString &url, QString *error)
{
    const QUrl parsed(url.trimmed(), QUrl::StrictMode);
    // `why` is a whole sentence with the target as %1.
    auto refuse = [&](const QString &why) -> std::optional<StormTarget> {
        if (error)
            *error = why.arg(url);
        return std::nullopt;
    };
    if (!parsed.isValid() || parsed.host().isEmpty())
        return refuse(Storm::tr("target '%1' is not a URL of the form http://HOST:PORT"));
    if (parsed.scheme() != QLatin1String("http"))
        return refuse(Storm::tr(
            "target '%1' must start with http:// (the sandbox's endpoints speak plain HTTP)"));
    if (parsed.port() < 1)
        return refuse(Storm::tr("target '%1' has no port: write http://HOST:PORT"));
    if (!parsed.userInfo().isEmpty() || parsed.hasQuery() || parsed.hasFragment() ||
        !(parsed.path().isEmpty() || parsed.path() == QLatin1String("/")))
        return refuse(Storm::tr("target '%1' must be only http://HOST:PORT: the storm adds the "
                                "channel's path (/callbacks/pay, ...) itself"));
    return StormTarget{parsed.host(), parsed.port()};
}

QString validateStormPlan(const StormPlan &plan)
{
    if (plan.targets.isEmpty())
        return Storm::tr("no target: give at least one http://HOST:PORT");
    if (plan.targets.size() > kStormMaxTargets)
        return Storm::tr("at most %1 targets").arg(kStormMaxTargets);
    for (const QString &target : plan.targets) {
        QString error;
        if (!parseStormTarget(target, &error))
            return error;
    }
    if (plan.channel == WireFormat::Payops && plan.secret.isEmpty())
        return Storm::tr("the signing secret is empty");
    if (const QString missing = missingPlatformKeys(plan.channel, plan.keys); !missing.isEmpty())
        return missing;
    if (plan.orders < 1 || plan.orders > kStormMaxOrders)
        return Storm::tr("the number of orders must be 1-%1").arg(kStormMaxOrders);
    if (plan.copies < 1 || plan.copies > kStormMaxCopies)
        return Storm::tr("the number of copies must be 1-%1").arg(kStormMaxCopies);
    if (plan.gapMs < 0 || plan.gapMs > kStormMaxGapMs)
        return Storm::tr("the gap must be 0-%1 ms").arg(kStormMaxGapMs);
    if (!(plan.ratePerSecond >= 0 && plan.ratePerSecond <= kStormMaxRate))
        return Storm::tr("the rate must be 0 (as fast as possible) to %1 orders a second")
            .arg(kStormMaxRate);
    if (plan.maxAttempts < 1 || plan.maxAttempts > kStormMaxAttempts)
        return Storm::tr("the attempts per callback must be 1-%1").arg(kStormMaxAttempts);
    if (plan.forged < 0 || plan.forged > plan.orders)
        return Storm::tr("the forged deliveries must be 0 to the number of orders (%1)")
            .arg(plan.orders);
    return {};
}

QList<qint64> createStormOrders(const QSqlDatabase &db, int count)
{
    requireSandbox(db);
    if (count < 1 || count > kStormMaxOrders)
        throw db::Error(
            Storm::tr("the number of orders to create must be 1-%1").arg(kStormMaxOrders));
    // The orders belong to users that exist, so that their points land on a balance.
    QList<qint64> users;
    QSqlQuery userRows =
        db::exec(db, QStringLiteral("SELECT id FROM users ORDER BY id LIMIT 1000"));
    while (userRows.next())
        users << userRows.value(0).toLongLong();
    if (users.isEmpty())
        throw db::Error(Storm::tr(
            "the sandbox has no users to own the storm's orders (load the demo data first)"));

    // One row at a time, so that each id is the one the server gave (a multi-row INSERT's ids
    // are consecutive only under some auto-increment lock modes), in transactions of 500.
    QList<qint64> ids;
    QHash<qint64, StormOrderFacts> facts;
    const QString insert = QStringLiteral("INSERT INTO orders (user_id, amount_fen, currency, "
                                          "status) VALUES (?, ?, 'CNY', 'PENDING')");
    for (int done = 0; done < count;) {
        db::Transaction transaction(db);
        for (const int end = std::min(count, done + 500); done < end; ++done) {
            // The demo's amounts: 10.00 to 499.99 yuan, spread.
            const qint64 amount = 1000 + (qint64(QRandomGenerator::global()->bounded(49000)));
            const QSqlQuery query = db::exec(db, insert, {users.at(done % users.size()), amount});
            const qint64 id = query.lastInsertId().toLongLong();
            ids << id;
            facts.insert(id, StormOrderFacts{amount, QStringLiteral("CNY")});
        }
        transaction.commit();
    }
    remember(facts);
    return ids;
}

QList<qint64> pendingStormOrders(const QSqlDatabase &db, int count)
{
    requireSandbox(db);
    if (count < 1 || count > kStormMaxOrders)
        throw db::Error(Storm::tr("the number of orders must be 1-%1").arg(kStormMaxOrders));
    // idx_orders_status_created: a range of the PENDING orders, newest first.
    QSqlQuery rows = db::exec(
        db,
        QStringLiteral("SELECT id, amount_fen, currency FROM orders WHERE status = 'PENDING' "
                       "ORDER BY created_at DESC, id DESC LIMIT ?"),
        {count});
    QList<qint64> ids;
    QHash<qint64, StormOrderFacts> facts;
    while (rows.next()) {
        const qint64 id = rows.value(0).toLongLong();
        ids << id;
        facts.insert(id, StormOrderFacts{rows.value(1).toLongLong(), rows.value(2).toString()});
    }
    remember(facts);
    return ids;
}

QHash<qint64, StormOrderFacts> stormOrderFacts(const QSqlDatabase &db, const QList<qint64> &orders)
{
    QHash<qint64, StormOrderFacts> facts;
    for (qsizetype start = 0; start < orders.size(); start += 1000) {
        QSqlQuery rows = db::exec(
            db, QStringLiteral("SELECT id, amount_fen, currency FROM orders WHERE id IN (%1)")
                    .arg(db::idList(orders.mid(start, 1000))));
        while (rows.next())
            facts.insert(rows.value(0).toLongLong(),
                         StormOrderFacts{rows.value(1).toLongLong(), rows.value(2).toString()});
    }
    remember(facts);
    return facts;
}

} // namespace payops
