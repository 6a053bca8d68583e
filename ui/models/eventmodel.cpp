#include "eventmodel.h"

#include "console/displayformat.h"
#include "palette.h"

#include <QBrush>

#include <algorithm>

namespace payops {

EventModel::EventModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void EventModel::setEvidence(const console::OrderEvidence &evidence)
{
    beginResetModel();
    m_events = evidence.events;
    // The trace steps join the list so that it reads as one story.
    for (const console::CallbackTrace &t : evidence.traces) {
        const auto step = [&](qint64 at, const QString &what, bool bad = false) {
            if (at)
                m_events << console::EvidenceEvent{console::EvidenceEvent::Kind::Callback,
                                                   t.instance, at, what, bad};
        };
        step(t.received, tr("received %1").arg(QString::fromUtf8(t.subject())));
        step(t.lockAcquired, tr("lock acquired"));
        step(t.txBegin, tr("transaction begins"));
        step(t.committed, tr("transaction committed"));
        step(t.lockReleased,
             t.releasedBeforeCommit() ? tr("lock released BEFORE commit") : tr("lock released"),
             t.releasedBeforeCommit());
        step(t.responded, tr("answered %1 (%2)").arg(QString::number(t.httpStatus), t.outcome));
    }
    std::stable_sort(m_events.begin(), m_events.end(),
                     [](const console::EvidenceEvent &a, const console::EvidenceEvent &b) {
                         return a.micros < b.micros;
                     });
    m_origin = evidence.originMicros;
    endResetModel();
}

int EventModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_events.size());
}

int EventModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant EventModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const console::EvidenceEvent &e = m_events.at(index.row());
    if (role == BadRole)
        return e.bad;
    if (role == Qt::ForegroundRole)
        return e.bad ? QBrush(palette::danger()) : QVariant();
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case OffsetColumn:
        return console::formatOffset(e.micros, m_origin);
    case TimeColumn:
        return console::displayTime(e.micros);
    case LaneColumn:
        return e.lane;
    case WhatColumn:
        return e.text;
    default:
        return {};
    }
}

QVariant EventModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case OffsetColumn:
        return tr("Offset");
    case TimeColumn:
        return tr("Time (UTC)");
    case LaneColumn:
        return tr("Where");
    case WhatColumn:
        return tr("What happened");
    default:
        return {};
    }
}

} // namespace payops
