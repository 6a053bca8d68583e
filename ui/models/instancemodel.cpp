#include "instancemodel.h"

#include "console/displayformat.h"
#include "console/sqltime.h"
#include "palette.h"

#include <QBrush>
#include <QLocale>

namespace payops {
namespace {

// The unsafe handler's cell: a warning wash, strong enough to catch the eye in a long list.
QColor unsafeBackground()
{
    return palette::tint(palette::Role::Warning, 0.3);
}

QColor upstreamColour(const console::InstanceRow &row)
{
    if (!row.alive || row.upstreamState.isEmpty())
        return palette::muted(); // a stopped gateway's last word on its upstream is history
    return row.upstreamState == QLatin1String("ok") ? palette::ok() : palette::danger();
}

} // namespace

InstanceModel::InstanceModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void InstanceModel::setInstances(const console::InstanceList &list)
{
    bool sameRows = list.rows.size() == m_list.rows.size();
    for (int i = 0; sameRows && i < list.rows.size(); ++i)
        sameRows = list.rows.at(i).id == m_list.rows.at(i).id;
    if (!sameRows) {
        beginResetModel();
        m_list = list;
        endResetModel();
        return;
    }
    m_list = list;
    if (!m_list.rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_list.rows.size()) - 1, NUM_COLUMNS - 1));
}

void InstanceModel::setHealth(const console::InstanceHealth &health)
{
    m_health.insert(health.id, health);
    for (int i = 0; i < m_list.rows.size(); ++i)
        if (m_list.rows.at(i).id == health.id)
            Q_EMIT dataChanged(index(i, 0), index(i, NUM_COLUMNS - 1));
}

int InstanceModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_list.rows.size());
}

int InstanceModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant InstanceModel::display(const console::InstanceRow &row, int column) const
{
    const auto health = m_health.constFind(row.id);
    const bool probed = health != m_health.cend() && health->reachable;
    switch (column) {
    case IdColumn:
        return row.id;
    case StateColumn:
        if (row.stopped)
            return tr("stopped");
        return row.alive ? tr("alive") : tr("stale (%1 s)").arg(row.secondsSinceSeen);
    case HandlerColumn:
        // The upstream's URL goes where a handler's name is: that is who handles its callbacks.
        if (row.isGateway())
            return tr("gateway → %1").arg(row.upstream);
        return row.handler == QLatin1String("unsafe-demo")
                   ? tr("unsafe-demo ⚠ releases lock before commit")
                   : row.handler;
    case UpstreamColumn:
        return row.isGateway() ? upstreamHealth(row) : QStringLiteral("—");
    case ModeColumn:
        return probed && !health->mode.isEmpty() ? health->mode : row.modeApplied;
    case SwitchColumn: {
        const qint64 applied =
            probed && health->switchVersion >= 0 ? health->switchVersion : row.switchVersionApplied;
        return applied == m_list.switchVersion
                   ? tr("v%1 (current)").arg(applied)
                   : tr("v%1 of v%2 — behind")
                         .arg(QString::number(applied), QString::number(m_list.switchVersion));
    }
    case RateColumn:
        return probed && health->callbacksPerSecond >= 0
                   ? QLocale().toString(health->callbacksPerSecond, 'f', 1)
                   : QStringLiteral("—");
    case EndpointColumn:
        if (health == m_health.cend())
            return row.alive ? tr("asking …") : tr("not asked (not alive)");
        return health->reachable ? tr("%1, db %2").arg(health->status, health->db)
                                 : tr("unreachable: %1").arg(health->error);
    case ListenColumn:
        return row.listen;
    case LastSeenColumn:
        return console::displayTime(row.lastSeenMicros);
    default:
        return {};
    }
}

QString InstanceModel::upstreamHealth(const console::InstanceRow &row) const
{
    if (row.upstreamState.isEmpty() || row.secondsSinceUpstreamCheck < 0)
        return tr("unknown, not checked yet");
    const qint64 s = row.secondsSinceUpstreamCheck;
    const QString ago = s < 120    ? tr("%n s ago", nullptr, int(s))
                        : s < 7200 ? tr("%n min ago", nullptr, int(s / 60))
                                   : tr("%n h ago", nullptr, int(s / 3600));
    return row.upstreamState == QLatin1String("ok") ? tr("ok, checked %1").arg(ago)
                                                    : tr("failing, checked %1").arg(ago);
}

QVariant InstanceModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const console::InstanceRow &row = m_list.rows.at(index.row());
    const bool unsafe = row.handler == QLatin1String("unsafe-demo");
    switch (role) {
    case Qt::DisplayRole:
        return display(row, index.column());
    case AliveRole:
        return row.alive;
    case UnsafeRole:
        return unsafe;
    case Qt::BackgroundRole:
        if (unsafe && index.column() == HandlerColumn)
            return QBrush(unsafeBackground());
        return {};
    case Qt::ForegroundRole:
        if (unsafe && index.column() == HandlerColumn)
            return QBrush(palette::readableOn(palette::warning(), unsafeBackground()));
        if (index.column() == StateColumn)
            return QBrush(row.alive ? palette::ok() : palette::muted());
        if (index.column() == UpstreamColumn && row.isGateway())
            return QBrush(upstreamColour(row));
        return {};
    case Qt::ToolTipRole:
        if (index.column() == HandlerColumn && row.isGateway())
            return tr("Gateway mode: pays nothing itself; records each callback and forwards it, "
                      "exactly once, to the team's own handler (the upstream).");
        if (index.column() == UpstreamColumn && row.isGateway())
            return tr("ok: the gateway's last forward to its upstream got an answer; failing: it "
                      "got none; unknown: nothing forwarded yet. From the gateway's heartbeat.");
        return {};
    default:
        return {};
    }
}

QVariant InstanceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Instance");
    case StateColumn:
        return tr("State");
    case HandlerColumn:
        return tr("Handler");
    case UpstreamColumn:
        return tr("Upstream");
    case ModeColumn:
        return tr("Switch mode");
    case SwitchColumn:
        return tr("Switch applied");
    case RateColumn:
        return tr("Callbacks/s");
    case EndpointColumn:
        return tr("/healthz");
    case ListenColumn:
        return tr("Listen");
    case LastSeenColumn:
        return tr("Last seen (UTC)");
    default:
        return {};
    }
}

} // namespace payops
