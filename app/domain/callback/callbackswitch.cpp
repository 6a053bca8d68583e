#include "callbackswitch.h"

#include "callbackhandler.h"
#include "db/connection.h"
#include "db/dberror.h"
#include "domain/money/auditedaction.h"
#include "domain/money/auditlog.h"
#include "instanceliveness.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QThread>

#include <algorithm>

namespace payops {
namespace {

// The translation context of the sentences below (this layer has no QObject for tr()).
struct CallbackSwitch
{
    Q_DECLARE_TR_FUNCTIONS(payops::CallbackSwitch)
};

SwitchState switchFrom(QSqlQuery &query)
{
    if (!query.next())
        throw db::Error(CallbackSwitch::tr("callback_switch has no row; run payops migrate"));
    SwitchState state;
    state.mode = parseCallbackMode(query.value(0).toString()).value_or(CallbackMode::Normal);
    state.version = query.value(1).toLongLong();
    state.reason = query.value(2).toString();
    state.changedBy = query.value(3).toString();
    state.changedAt = query.value(4).toDateTime();
    state.changedAt.setTimeSpec(Qt::UTC);
    return state;
}

const QString kSelectSwitch = QStringLiteral(
    "SELECT mode, version, reason, changed_by, changed_at FROM callback_switch WHERE id = 1");
const QString kFlipSwitch = QStringLiteral("UPDATE callback_switch SET mode = ?, version = version "
                                           "+ 1, reason = ?, changed_by = CURRENT_USER(), "
                                           "changed_at = NOW(3) WHERE id = 1");

QString toJson(const SwitchState &state)
{
    return QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("mode"), callbackModeName(state.mode)},
                                  {QStringLiteral("version"), state.version}})
            .toJson(QJsonDocument::Compact));
}

} // namespace

QString callbackModeName(CallbackMode mode)
{
    return mode == CallbackMode::Normal ? QStringLiteral("NORMAL") : QStringLiteral("RECORD_ONLY");
}

std::optional<CallbackMode> parseCallbackMode(const QString &name)
{
    if (name == QLatin1String("NORMAL"))
        return CallbackMode::Normal;
    if (name == QLatin1String("RECORD_ONLY"))
        return CallbackMode::RecordOnly;
    return std::nullopt;
}

SwitchState readSwitch(const QSqlDatabase &db)
{
    QSqlQuery query = db::exec(db, kSelectSwitch);
    return switchFrom(query);
}

QString switchForProcessingStatement()
{
    // LOCK IN SHARE MODE rather than FOR SHARE: MariaDB 10.11 knows only the former.
    return kSelectSwitch + QStringLiteral(" LOCK IN SHARE MODE");
}

SwitchState readSwitchForProcessing(const QSqlDatabase &db)
{
    QSqlQuery query = db::exec(db, switchForProcessingStatement());
    return switchFrom(query);
}

qint64 SwitchObserver::versionAcknowledged() const
{
    // Observed first: a reading registered after this line reads a version at least as new,
    // from the same node, as the read that observed it.
    qint64 version = versionApplied.load();
    const std::lock_guard lock(m_readingsMutex);
    for (const auto &[number, held] : m_readings)
        version = std::min(version, held);
    return version;
}

SwitchReading::SwitchReading(SwitchObserver &observer, const QSqlDatabase &db, Hold hold)
    : m_observer(observer)
    , m_db(db)
{
    if (hold == Hold::OnClusterNodes && !db::isClusterNode(db))
        return;
    // Held from before the read, at the version known so far: the heartbeat must not
    // acknowledge a flip between this transaction's read of NORMAL and its registration.
    const std::lock_guard lock(m_observer.m_readingsMutex);
    m_number = ++m_observer.m_lastReading;
    m_observer.m_readings.emplace(m_number, m_observer.versionApplied.load());
}

SwitchReading::~SwitchReading()
{
    if (m_number == 0)
        return;
    const std::lock_guard lock(m_observer.m_readingsMutex);
    m_observer.m_readings.erase(m_number);
}

SwitchState SwitchReading::read()
{
    return actOn(readSwitchForProcessing(m_db));
}

SwitchState SwitchReading::readFrom(QSqlQuery &result)
{
    return actOn(switchFrom(result));
}

SwitchState SwitchReading::actOn(const SwitchState &state)
{
    m_observer.observe(state.mode == CallbackMode::RecordOnly, state.version);
    if (m_number != 0) {
        const std::lock_guard lock(m_observer.m_readingsMutex);
        m_observer.m_readings[m_number] = state.version;
    }
    return state;
}

QString flipSwitchStatement()
{
    return kFlipSwitch;
}

namespace {

// One run of a flip: it reads the switch under its row lock each time, so that a run again
// after another node's flip to the same mode changes nothing.
FlipResult flipSwitchOnce(const QSqlDatabase &db, CallbackMode mode, const QString &reason)
{
    db::Transaction transaction(db);
    QSqlQuery current = db::exec(db, kSelectSwitch + QStringLiteral(" FOR UPDATE"));
    FlipResult result;
    result.before = switchFrom(current);
    result.after = result.before;
    if (result.before.mode == mode) {
        transaction.commit();
        return result;
    }
    db::exec(db, kFlipSwitch, {callbackModeName(mode), reason.trimmed().left(255)});
    QSqlQuery after = db::exec(db, kSelectSwitch);
    result.after = switchFrom(after);
    result.changed = true;
    appendAudit(db, QStringLiteral("switch.flip"), QStringLiteral("callback_switch"),
                reason.trimmed(), QString(), toJson(result.before), toJson(result.after));
    transaction.commit();
    return result;
}

} // namespace

FlipResult flipSwitch(const QSqlDatabase &db, CallbackMode mode, const QString &reason)
{
    if (reason.trimmed().isEmpty())
        throw db::Error(CallbackSwitch::tr("a reason is required to flip the callback switch"));
    return runAudited([&] { return flipSwitchOnce(db, mode, reason); });
}

QList<InstanceAck> waitForAcknowledgement(const QSqlDatabase &db, qint64 version, int timeoutMs,
                                          const std::function<void(const InstanceAck &)> &onAck)
{
    QDeadlineTimer deadline(timeoutMs);
    // Every instance seen live stays in the answer until it acknowledges or stops cleanly:
    // one that hangs right after the flip stops its heartbeat too, and must be named, not
    // dropped because it no longer looks alive.
    QMap<QString, InstanceAck> seen;
    while (true) {
        QVariantList known;
        for (auto it = seen.cbegin(); it != seen.cend(); ++it)
            known << it.key();
        const QString orKnown =
            known.isEmpty()
                ? QString()
                : QStringLiteral(" OR id IN (%1)")
                      .arg(QStringList(known.size(), QStringLiteral("?")).join(QLatin1Char(',')));
        QSqlQuery rows = db::exec(
            db,
            QStringLiteral(
                "SELECT id, switch_version_applied, stopped_at IS NOT NULL FROM callback_instance "
                "WHERE %1%2 ORDER BY id")
                .arg(instanceLiveSql(), orKnown),
            known);
        while (rows.next()) {
            const QString id = rows.value(0).toString();
            if (rows.value(2).toBool()) {
                seen.remove(id); // stopped cleanly: it processes nothing any more
                continue;
            }
            InstanceAck &ack = seen[id];
            const bool before = ack.acknowledged;
            ack.instance = id;
            ack.versionApplied = rows.value(1).toLongLong();
            ack.acknowledged = ack.versionApplied >= version;
            if (ack.acknowledged && !before && onAck)
                onAck(ack);
        }
        const bool all = std::all_of(seen.cbegin(), seen.cend(),
                                     [](const InstanceAck &ack) { return ack.acknowledged; });
        if (all || deadline.hasExpired())
            return seen.values();
        QThread::msleep(100);
    }
}

} // namespace payops
