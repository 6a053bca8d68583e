#pragma once

#include "console/orderlist.h"

#include "pagedtablemodel.h"

namespace payops {

// The orders behind a state or an edge of the state machine, paged in by order id as the
// view scrolls.
class OrderModel final : public PagedRowModel<console::OrderRow>
{
    Q_OBJECT

public:
    enum Columns {
        IdColumn,
        UserColumn,
        StatusColumn,
        AmountColumn,
        PayNoColumn,
        CreatedColumn,
        PaidColumn,
        NUM_COLUMNS
    };
    enum Roles { OrderIdRole = Qt::UserRole + 1 };

    explicit OrderModel(console::Worker *worker, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(OrderModel)

    void reload(const console::OrderSelection &selection);
    const console::OrderSelection &selection() const { return m_selection; }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void fetchMore(const QModelIndex &parent = {}) override;

private:
    console::OrderSelection m_selection;
};

} // namespace payops
