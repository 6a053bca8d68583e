#pragma once

#include "domain/money/compensationrequest.h"

#include "rowtablemodel.h"

namespace payops {

// The four-eyes requests, newest first. A refresh replaces them all: there are a few hundred
// at most (loadCompensationRequests reads no more).
class CompensationRequestModel final : public RowTableModel<CompensationRequest>
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        StatusColumn,
        RequestedByColumn,
        RequestedAtColumn,
        AmountColumn,
        CouponsColumn,
        WriteOffsColumn,
        PointsRowsColumn,
        TicketColumn,
        DecidedByColumn,
        ReasonColumn,
        NUM_COLUMNS
    };
    enum Roles { RequestIdRole = Qt::UserRole + 1, StatusRole };

    explicit CompensationRequestModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(CompensationRequestModel)

    void setRequests(const QList<CompensationRequest> &requests) { setRows(requests); }
    const CompensationRequest &request(int row) const { return rowAt(row); }
    // The row of request `id`, or -1 when it is not listed.
    int rowOf(qint64 id) const;

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace payops
