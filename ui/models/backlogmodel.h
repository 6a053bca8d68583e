#pragma once

#include "console/backlog.h"

#include "pagedtablemodel.h"

namespace payops {

// The RECORDED callbacks, oldest first, paged in by id as the view scrolls.
class BacklogModel final : public PagedRowModel<console::RecordedCallback>
{
    Q_OBJECT

public:
    enum Columns { IdColumn, ReceivedColumn, PayNoColumn, OrderColumn, AmountColumn, TradeStatusColumn, InstanceColumn,
                   NUM_COLUMNS };
    enum Roles { RawBodyRole = Qt::UserRole + 1, OrderIdRole };

    explicit BacklogModel(db::DbWorker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(BacklogModel)

    void reload();

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

};

} // namespace payops
