#pragma once

#include "domain/callback/channel.h"
#include "sandboxkeys.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <optional>

namespace payops {

// The storm: a payment platform's at-least-once delivery, made on purpose against a sandbox so
// that the incident (docs/operations.md, "Storm (sandbox only)") can be reproduced and the defences
// watched.
enum class StormPattern { Concurrent, Gap, Replay, Mixed };
std::optional<StormPattern> parseStormPattern(const QString &text); // "concurrent|gap|replay|mixed"
QString stormPatternName(StormPattern pattern);

// How long after the first wave the replay pattern sends its second wave.
constexpr int kStormReplayDelayMs = 3000;
// Most HTTP requests the storm has in flight at once, over all targets.
constexpr int kStormMaxInFlight = 64;
// Bounds of a plan: large enough for any demonstration or benchmark, small enough that a typo
// (an extra zero) cannot tie up a sandbox for an hour.
constexpr int kStormMaxOrders = 100000;
constexpr int kStormMaxCopies = 20;
constexpr int kStormMaxGapMs = 60000;
constexpr double kStormMaxRate = 10000;
constexpr int kStormMaxAttempts = 20;
constexpr int kStormMaxTargets = 32;

// What the platform says was paid for an order: the callback must match the order, or the
// endpoint refuses it as amount_mismatch / currency_mismatch and nothing is paid out.
struct StormOrderFacts
{
    qint64 amountFen = 0;
    QString currency = QStringLiteral("CNY");
};

struct StormPlan
{
    QStringList targets; // base URLs "http://host:port"; copies go round-robin over them
    // The wire format: payops's JSON at /callbacks/pay, or a platform's notification at its path.
    WireFormat channel = WireFormat::Payops;
    QByteArray secret; // payops: the endpoint's HMAC secret (domain/callback/signature.h signs)
    PlatformKeys keys; // wechatpay, alipay: the platform's side of the sandbox keys
    int orders = 100;  // how many orders get callbacks
    int copies = 2;    // deliveries per order (1 = no duplicates)
    int gapMs = 40;    // time between copies of one order (pattern gap)
    StormPattern pattern = StormPattern::Mixed;
    double ratePerSecond = 0; // orders started per second, 0 = as fast as possible
    bool retryNon2xx = false; // a platform retries any non-2xx or no answer, with back-off
    int maxAttempts = 5;
    // The first `forged` orders also get one delivery whose signature does not verify, sent
    // with their first copy, once: an attacker's, which the endpoint must refuse.
    int forged = 0;
    // Optional: each order's amount and currency. Orders not in it use what createStormOrders,
    // pendingStormOrders or stormOrderFacts last read for them in this process.
    QHash<qint64, StormOrderFacts> orderFacts;
};

// planned counts deliveries (orders x copies, and the forged ones); sent and the answers count
// attempts, so a delivery retried twice adds 3 to sent and 2 to retries. 4xx holds any other
// non-2xx below 500. A delivery is done when the platform's success answer comes (platformreply.h,
// isPlatformSuccess: for Alipay a 2xx whose body is "success").
struct StormCounts
{
    qint64 planned = 0, sent = 0, answered2xx = 0, answered4xx = 0, answered5xx = 0, noAnswer = 0,
           retries = 0;
    qint64 ordersCreated =
        0;                // left to the caller that created them (runStorm does not create orders)
    bool stopped = false; // stopped before the end
    // Deliveries done: answered with the platform's success, or given up (no retry asked for, or
    // maxAttempts reached). finished / planned is the storm's progress; gaveUp > 0 means some
    // never got that answer.
    qint64 finished = 0, gaveUp = 0;
    // Forged deliveries sent (never retried, never in gaveUp), and those the endpoint took as
    // the platform's: a success answer to a bad signature.
    qint64 forged = 0, forgedAccepted = 0;
};

// A target as "http://host:port" (a trailing "/" allowed). Returns nullopt and sets *error to
// a sentence naming the target otherwise.
struct StormTarget
{
    QString host;
    int port = 0;
};
std::optional<StormTarget> parseStormTarget(const QString &url, QString *error);

// Checks a plan before anything is sent: targets, secret or keys, and ranges. Empty when it is
// fine, otherwise one sentence a user understands.
QString validateStormPlan(const StormPlan &plan);

// Both throw db::Error (with a sentence a user understands) unless db::isSandboxDatabase(db):
// the storm pays orders out on purpose and must never touch a real database.
QList<qint64> createStormOrders(const QSqlDatabase &db,
                                int count); // fresh PENDING orders, amounts like the demo's
QList<qint64> pendingStormOrders(const QSqlDatabase &db,
                                 int count); // existing PENDING orders, newest first, by index
// Both above also remember each order's amount and currency for runStorm (which is given ids
// only). This reads them for any orders, by primary key, and remembers them the same way.
QHash<qint64, StormOrderFacts> stormOrderFacts(const QSqlDatabase &db, const QList<qint64> &orders);
std::optional<StormOrderFacts> rememberedStormOrderFacts(qint64 order);

// Fires the callbacks of the first plan.orders of `orders` (all of them if fewer); calls progress
// (from the calling thread) at most ~10 times a second and at the end; returns early, with stopped
// = true, once stop becomes true. Never throws for HTTP failures (they are counted). Throws
// std::invalid_argument with a sentence for a plan that is not valid (validateStormPlan) or an
// order whose amount it does not know (see StormPlan::orderFacts).
StormCounts runStorm(const StormPlan &plan, const QList<qint64> &orders,
                     const std::function<void(const StormCounts &)> &progress,
                     const std::atomic<bool> &stop);

} // namespace payops
