#pragma once

#include "domain/money/compensationrequest.h"

#include "rowtablemodel.h"

namespace payops {

// The compensation batches carried out, newest first, each as its rows in `compensation`
// tell it. A refresh replaces them all (loadCompensationBatches reads the newest fifty).
class CompensationBatchModel final : public RowTableModel<CompensationBatch>
{
    Q_OBJECT

public:
    enum Columns {
        AtColumn,
        ByColumn,
        ActionsColumn,
        AmountColumn,
        TicketColumn,
        ReasonColumn,
        BatchColumn,
        NUM_COLUMNS
    };

    explicit CompensationBatchModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(CompensationBatchModel)

    void setBatches(const QList<CompensationBatch> &batches) { setRows(batches); }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace payops
