#pragma once

#include "domain/inspection/inspectionrun.h"

#include "pagedtablemodel.h"

namespace payops {

// The stored inspections, newest first, paged in by id as the view scrolls.
class InspectionRunModel final : public PagedRowModel<InspectionRun>
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        StartedColumn,
        SourceColumn,
        RunByColumn,
        ResultColumn,
        DuplicatesColumn,
        LatePaymentsColumn,
        RefundsColumn,
        BacklogColumn,
        NUM_COLUMNS
    };
    enum Roles { CleanRole = Qt::UserRole + 1 };

    explicit InspectionRunModel(console::Worker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(InspectionRunModel)

    void reload() { restart(); }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;
};

} // namespace payops
