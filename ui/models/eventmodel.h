#pragma once

#include "console/orderevidence.h"

#include <QAbstractTableModel>

namespace payops {

// The evidence of one order as a list in time order: every callback step, transition
// attempt, side effect and compensation, with its offset from the first.
class EventModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Columns { OffsetColumn, TimeColumn, LaneColumn, WhatColumn, NUM_COLUMNS };
    enum Roles { BadRole = Qt::UserRole + 1 };

    explicit EventModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(EventModel)

    void setEvidence(const console::OrderEvidence &evidence);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<console::EvidenceEvent> m_events;
    qint64 m_origin = 0;
};

} // namespace payops
