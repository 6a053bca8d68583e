#pragma once

#include "console/instanceprober.h"
#include "console/instances.h"

#include <QAbstractTableModel>
#include <QHash>

namespace payops {

// The callback service instances: what their heartbeat rows say, joined with what their own
// /healthz and /metrics endpoints answered last.
class InstanceModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        StateColumn,
        HandlerColumn,
        UpstreamColumn,
        ModeColumn,
        SwitchColumn,
        RateColumn,
        EndpointColumn,
        ListenColumn,
        LastSeenColumn,
        NUM_COLUMNS
    };
    enum Roles { AliveRole = Qt::UserRole + 1, UnsafeRole };

    explicit InstanceModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InstanceModel)

    // Rows keep their place when the same instances come back, so a refresh does not reset
    // the view's selection.
    void setInstances(const console::InstanceList &list);
    void setHealth(const console::InstanceHealth &health);
    const console::InstanceList &instances() const { return m_list; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QVariant display(const console::InstanceRow &row, int column) const;
    QString upstreamHealth(const console::InstanceRow &row) const;

    console::InstanceList m_list;
    QHash<QString, console::InstanceHealth> m_health;
};

} // namespace payops
