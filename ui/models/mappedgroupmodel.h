#pragma once

#include "console/mappedduplicates.h"
#include "streamedcsvsource.h"

#include <QStandardItemModel>

namespace payops {

// The open groups of a team's tables that the duplicates page lists (one row each, by order),
// and, for its CSV export, every group of the page's filter read again on the page's worker:
// the file holds them all, not only the orders the page lists.
class MappedGroupModel final : public QStandardItemModel, public StreamedCsvSource
{
    Q_OBJECT

public:
    enum Columns {
        OrderColumn,
        UserColumn,
        SideEffectColumn,
        KeyColumn,
        LiveColumn,
        UnitColumn,
        AtRiskColumn,
        FirstColumn,
        LastColumn,
        NUM_COLUMNS
    };

    MappedGroupModel(console::Worker *worker, mapping::Mapping mapping, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(MappedGroupModel)

    // The groups shown, and the filter and points rate they were read with.
    void setGroups(const QList<console::MappedGroup> &groups,
                   const console::MappedDuplicateFilter &filter, qint64 pointsPerYuan);
    const console::MappedGroup &group(int row) const { return m_groups.at(row); }

    // A group's cells, as the table shows them and the CSV writes them.
    static QStringList cells(const console::MappedGroup &group, qint64 pointsPerYuan);

    console::Worker *csvWorker() const override { return m_worker; }
    Job csvJob() const override;

private:
    console::Worker *m_worker;
    mapping::Mapping m_mapping;
    console::MappedDuplicateFilter m_filter;
    qint64 m_pointsPerYuan = 100;
    QList<console::MappedGroup> m_groups;
};

} // namespace payops
